"""What the host's kernel says about the CPU time around a run (edge: /proc/stat, getrusage):
on a virtual machine the hypervisor takes time from the vCPUs (steal, the 8th number of /proc/stat's
`cpu` line), which the guest's CPU clocks leave out and the solver's wall clock does not.  A run's
steal share and its wall time over its CPU time tell a slow run of a busy host from a slow variant
(docs/tuning.md#steal).  Where /proc/stat is missing (not Linux) the share is None."""
from __future__ import annotations

import resource
import time
from dataclasses import dataclass

STEAL = 7      # /proc/stat cpu line: user nice system idle iowait irq softirq steal guest guest_nice


@dataclass(frozen=True)
class CpuSample:
    ticks: tuple[int, ...] | None     # the host's cpu line (all CPUs), in clock ticks
    children_cpu_s: float            # user + system seconds of the children waited for so far
    wall_s: float


def sample() -> CpuSample:
    try:
        with open("/proc/stat") as f:
            line = f.readline().split()
        ticks = tuple(int(x) for x in line[1:]) if line and line[0] == "cpu" and len(line) > STEAL + 1 else None
    except (OSError, ValueError):
        ticks = None
    use = resource.getrusage(resource.RUSAGE_CHILDREN)
    return CpuSample(ticks, use.ru_utime + use.ru_stime, time.perf_counter())


def between(a: CpuSample, b: CpuSample, cores: int) -> dict:
    """steal_pct: the hypervisor's share of the host's CPU time from a to b (guest time is counted
    in user time already, so the total is the first eight fields); wall_over_cpu: the wall time
    the run's `cores` busy cores had over the CPU time its processes got (1: every core ran all
    along; above: time taken from them, or waits), None where nothing ran."""
    steal = None
    if a.ticks and b.ticks:
        d = [y - x for x, y in zip(a.ticks[:STEAL + 1], b.ticks[:STEAL + 1])]
        steal = 100.0 * d[STEAL] / sum(d) if sum(d) > 0 else None
    cpu = b.children_cpu_s - a.children_cpu_s
    wall = (b.wall_s - a.wall_s) * max(1, cores)
    return {"steal_pct": steal, "wall_over_cpu": wall / cpu if cpu > 0 else None}

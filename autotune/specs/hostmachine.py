"""A complete cluster machine file for a host (pure): what the OS tells of the host, the CPU's
microarchitecture record (specs/cpus.py), the ISA flags made for it, OSACA's ports and the
measured bandwidths in; a kerncraft machine file with our `cluster` section out.

Nothing comes from another machine's file: the in-core model, ports, FLOPs and flags are the
identified microarchitecture's, the cache geometry the OS's, the clock and the bandwidths
measured, and the transfer rates of the cache levels the design's (from kerncraft's example
files, named in the provenance).  What could not be measured is marked as assumed.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import NamedTuple

from autotune.specs.cpus import Identified
from autotune.specs.incoremeasure import section as incore_section
from autotune.specs.runstats import MAX_REPEATS, REPEATS, STABLE, median_spread

KERNELS = ("copy", "daxpy", "load", "triad", "update")
# streams of the benchmark kernels (read, read+write, write) and FLOPs per iteration
_KERNEL_STREAMS = {"load": (1, 0, 0, 0), "copy": (1, 0, 1, 0), "update": (1, 1, 1, 0),
                   "triad": (3, 0, 1, 2), "daxpy": (2, 1, 1, 2)}
# the benchmark's kernels with non-temporal stores: the forms of those that write a stream they do
# not read.  Measured where a streamed part's stores go (memory), and written to a section of their
# own: kerncraft matches a part's streams to every kernel in `benchmarks` and would price ordinary
# stores by them.
NT_KERNELS = ("copy_nt", "triad_nt")
NT_LEVELS = ("MEM",)
NT_NOTE = ("copy and triad with non-temporal stores (no write-allocate read: the bytes the kernels "
           "name are the bytes they move), the upper quartile of {repeats} runs or more at 1, 2, ... "
           "threads{spread}; "
           "parts that stream their stores are priced by them against the write-allocated kernels in "
           "benchmarks")
NT_SPREAD = " (their spread beside the level's results: benchmarks.measurements.<level>.1.spread)"
# runs of the chain of dependent adds (the clock under load) per thread count; the median is kept
CLOCK_RUNS = 7
# a bandwidth whose runs spread wider than this ((max - min) / median) is warned of: the machine
# was busy, or changed its pace, while it was measured (a shared guest read 41 and 74 GB/s for its
# memory ten minutes apart)
WIDE_SPREAD = 0.20


@dataclass(frozen=True)
class Cache:
    level: int
    size: int           # bytes per instance
    ways: int
    line: int
    shared_by: int      # cores sharing one instance


@dataclass(frozen=True)
class HostInfo:
    model_name: str
    vendor: str
    family: str
    model: str
    cores: int
    clock_hz: float                 # the OS's figure (cpufreq's maximum, else cpuinfo's cpu MHz)
    caches: tuple[Cache, ...]
    clock_source: str = "the OS"    # where clock_hz was read


def thread_share(host: HostInfo, level: str, per_thread: int, threads: int) -> int:
    """A thread's working set in `level` on `threads` threads: a shared cache level holds every
    thread's share, so its working set is split among them; a private one's and memory's is not."""
    shared = next((c.shared_by for c in host.caches if f"L{c.level}" == level), host.cores)
    return per_thread if shared == 1 or level == "MEM" else max(per_thread // threads, 4096)


class Point(NamedTuple):
    """One point of the streaming benchmark (a level, kernel and thread count): the GB/s the file
    writes, the upper quartile of its runs (REPEATS to MAX_REPEATS: specs.runstats.attainable),
    their spread (median_spread), the 95 % interval of that figure, how many runs and the runs.
    Recorded numbers without the runs may be given as plain (threads, bytes per thread, GB/s)
    tuples: they have no spread."""
    threads: int
    bytes_per_thread: int
    gbps: float
    spread: float | None = None
    interval: tuple[float, float] | None = None
    runs: int | None = None
    values: tuple[float, ...] | None = None


def _spread(row) -> float | None:
    return row[3] if len(row) > 3 else None


def percent(spread: float) -> str:
    """A spread as the file writes it: '3.1 %'."""
    return f"{100 * spread:.1f} %"


def wide_spreads(bandwidths: dict, limit: float = WIDE_SPREAD) -> list[dict]:
    """The points of the streaming benchmark whose runs spread wider than `limit`, in the order
    measured: level, kernel, threads, the GB/s written, the spread and (where kept) how many runs."""
    return [{"level": level, "kernel": kernel, "threads": row[0], "gbps": row[2], "spread": _spread(row),
             **({"runs": row[5]} if len(row) > 5 and row[5] else {})}
            for level, kernels in bandwidths.items() for kernel, rows in kernels.items() for row in rows
            if _spread(row) is not None and _spread(row) > limit]


@dataclass(frozen=True)
class ClockMeasure:
    """The clock under load: dependent adds per second (one per cycle) on one core alone and on
    every core at once, the median and spread of the runs, beside the OS's figure."""
    os_hz: float
    os_source: str
    one_core_hz: float
    one_core_spread: float
    all_cores_hz: float
    all_cores_spread: float
    cores: int
    runs: int

    @property
    def clock_hz(self) -> float:
        """The machine file's clock: the all-cores figure, what a node running the solver on
        every core runs at (a core alone may boost higher)."""
        return self.all_cores_hz

    def describe(self) -> str:
        os_text = f"the OS says {self.os_hz / 1e9:.2f} GHz" if self.os_hz else "the OS gives none"
        return (f"clock under load {self.all_cores_hz / 1e9:.2f} GHz on all {self.cores} cores, "
                f"{self.one_core_hz / 1e9:.2f} GHz on one (medians of {self.runs} runs, spread "
                f"{100 * self.all_cores_spread:.1f} % and {100 * self.one_core_spread:.1f} %); {os_text}")


def clock_under_load(os_hz: float, os_source: str, one_core: list[list[float]],
                     all_cores: list[list[float]]) -> ClockMeasure:
    """The clock from the chain's runs (each run: every thread's GHz).  A run's figure is the
    median of its threads; the measurement's is the median of its runs."""
    def runs(measured: list[list[float]]) -> list[float]:
        return [statistics.median(r) * 1e9 for r in measured if r and min(r) > 0]
    one, one_spread = median_spread(runs(one_core))
    every, every_spread = median_spread(runs(all_cores))
    cores = max((len(r) for r in all_cores), default=1)
    return ClockMeasure(os_hz, os_source, one, one_spread, every, every_spread, cores, len(all_cores))


def file_clock_hz(host: HostInfo, clock: ClockMeasure | None) -> float:
    """The clock the machine file gives: measured under load where it was, else the OS's."""
    return clock.clock_hz if clock else host.clock_hz


# provenance.assumed's first clause, until calibrate --node fits the rates (model.refkernels.assumed_after)
RATES_ASSUMED = "cache transfer rates of "


def clock_provenance(host: HostInfo, clock: ClockMeasure | None) -> dict:
    """Where the file's clock comes from, with the OS's figure and the measured ones."""
    os_text = (f"{host.clock_hz / 1e9:.2f} GHz ({host.clock_source}; in a virtual machine often the "
               f"base clock)" if host.clock_hz else f"none ({host.clock_source})")
    if clock is None:
        return {"file": "the OS's figure, not measured under load", "OS": os_text}
    return {"file": f"measured under load on all {clock.cores} cores at once: what a node running the "
                    f"solver on every core runs at",
            "all cores": f"{clock.all_cores_hz / 1e9:.2f} GHz, median of {clock.runs} runs, spread "
                         f"{100 * clock.all_cores_spread:.1f} %",
            "one core": f"{clock.one_core_hz / 1e9:.2f} GHz, median of {clock.runs} runs, spread "
                        f"{100 * clock.one_core_spread:.1f} %",
            "OS": os_text,
            "how": "a chain of dependent 64-bit integer adds (1 cycle each), one thread bound per core, "
                   "timed by each thread's CPU time"}


def _kernels() -> dict:
    out = {}
    for name, (r, rw, w, flops) in _KERNEL_STREAMS.items():
        out[name] = {"read streams": {"streams": r, "bytes": f"{8.0 * r:.2f} B"},
                     "read+write streams": {"streams": rw, "bytes": f"{8.0 * rw:.2f} B"},
                     "write streams": {"streams": w, "bytes": f"{8.0 * w:.2f} B"},
                     "FLOPs per iteration": flops}
    return out


def _level(c: Cache, host: HostInfo, ident: Identified, nonov: list[str], below: str, victim: bool) -> dict:
    h = ident.record.hierarchy
    cpg = {"sets": c.size // (c.ways * c.line), "ways": c.ways, "cl_size": c.line, "replacement_policy": "LRU",
           "write_allocate": not victim, "write_back": True}
    if below != "MEM" or c.level == 1:
        cpg.update(load_from=below, store_to=below)
    if below in h.victim:
        cpg["victims_to"] = below
    if c.level == 1:
        upstream = ["architecture code analyzer", list(nonov)]
    else:
        rate, duplex = h.levels.get(f"L{c.level}", (32.0, "half-duplex"))
        upstream = [f"{rate:.2f} B/cy", duplex]
    return {"level": f"L{c.level}", "cache per group": cpg, "cores per group": c.shared_by,
            "threads per group": c.shared_by, "groups": max(1, host.cores // c.shared_by),
            "size per group": f"{c.size / 1024:.2f} kB", "upstream throughput": upstream,
            "transfers overlap": h.transfers_overlap}


def hierarchy(host: HostInfo, ident: Identified, nonov: list[str]) -> list[dict]:
    levels = [c for c in host.caches if c.level >= 1]
    names = [f"L{c.level}" for c in levels] + ["MEM"]
    victims = set(ident.record.hierarchy.victim)
    out = [_level(c, host, ident, nonov, names[i + 1], names[i] in victims) for i, c in enumerate(levels)]
    out.append({"level": "MEM", "cores per group": host.cores, "threads per group": host.cores,
                "size per group": None,
                "upstream throughput": ["full socket memory bandwidth", ident.record.hierarchy.memory],
                "transfers overlap": False})
    return out


def _spreads(kernels: dict) -> dict:
    """kernel -> the spread of its runs at 1, 2, ... threads ('3.1 %'), every kernel measured in
    the level (with the non-temporal ones: they ran in the same rounds); empty where a row has none."""
    if any(_spread(row) is None for rows in kernels.values() for row in rows):
        return {}
    return {k: [percent(_spread(row)) for row in rows] for k, rows in kernels.items()}


def measurements(bandwidths: dict) -> dict:
    """The benchmarks' measurements section: level -> {1: cores, sizes, results per kernel (the
    upper quartiles of the runs), and beside the results, where the runs were kept, each kernel's
    spread}.  kerncraft
    reads `results` (and its own `stats`) only: `spread` is ours."""
    meas = {}
    for level, kernels in bandwidths.items():
        rows = kernels[KERNELS[0]]
        spread = _spreads(kernels)
        meas[level] = {1: {
            "cores": [r[0] for r in rows], "threads": [r[0] for r in rows], "threads per core": 1,
            "size per core": [f"{r[1] / 1e3:.2f} kB" for r in rows],
            "size per thread": [f"{r[1] / 1e3:.2f} kB" for r in rows],
            "total size": [f"{r[1] * r[0] / 1e3:.2f} kB" for r in rows],
            "results": {k: [f"{r[2]:.2f} GB/s" for r in kernels[k]] for k in KERNELS},
            **({"spread": spread} if spread else {}),
        }}
    return meas


def streaming_stores(bandwidths: dict) -> dict:
    """The `streaming stores` section: per level, the GB/s of the kernels with non-temporal stores
    at 1, 2, ... threads (empty where none was measured); their spreads are in the level's
    `benchmarks.measurements` block (measurements())."""
    out, spread = {}, True
    for level, kernels in bandwidths.items():
        nt = [k for k in NT_KERNELS if k in kernels]
        if not nt:
            continue
        rows = kernels[nt[0]]
        out[level] = {"threads": [r[0] for r in rows],
                      "size per thread": [f"{r[1] / 1e3:.2f} kB" for r in rows],
                      **{k: [f"{r[2]:.2f} GB/s" for r in kernels[k]] for k in nt}}
        spread = spread and bool(_spreads(kernels))
    note = NT_NOTE.format(repeats=REPEATS, spread=NT_SPREAD if spread else "")
    return {"note": note, **out} if out else {}


def cluster_section(name: str, nodes: int, cores: int, threads_per_core: int = 1,
                    barrier: dict | None = None) -> dict:
    """The `cluster` section; barrier: the fit of the barrier events measured on the node
    (model.commfit.fit_barrier of barrier_points: per_doubling_s, error_pct) with the medians it
    rests on (`seconds`: threads -> seconds), else the data sheet's figure."""
    return {
        "name": name, "nodes": nodes, "cores_per_node": cores, "threads_per_core": threads_per_core,
        "network": {"model": "datasheet", "latency_s": 1.5e-6 if nodes > 1 else 5.0e-7,
                    "bandwidth_Bps": 1.0e10,
                    "provenance": "assumed, not measured: run autotune calibrate --machine NAME --procs ... "
                                  "(--launcher srun across nodes) to fit it"},
        "barrier": barrier_section(barrier) if barrier else {
            "model": "datasheet", "per_doubling_s": 2.0e-7,
            "provenance": "assumed, not measured: run autotune calibrate --node or --threads ... to fit it"},
    }


def barrier_section(barrier: dict) -> dict:
    """The cluster's barrier as calibrate --node measured it: a step's barrier event is the end of
    one parallel region and the start of the next (each kernel sweep of the solver is a region of
    its own), timed as empty regions back to back at 1, 2, 4, ... threads."""
    seconds = barrier["seconds"]
    return {"model": "fitted", "per_doubling_s": float(barrier["per_doubling_s"]),
            "provenance": "measured by autotune calibrate --node: a parallel region's end and the next one's "
                          "start (every kernel sweep of a step is a region of its own), the median of its runs: "
                          + ", ".join(f"{t} thread(s) {1e6 * s:.2f} us" for t, s in sorted(seconds.items()))
                          + "; t(tau) = per_doubling_s * ceil(log2 tau), least squares over tau >= 2"}


def barrier_thread_counts(cores: int) -> list[int]:
    """The thread counts the barrier events are measured at: 1, 2, 4, ... and every core."""
    out, t = [], 1
    while t < cores:
        out.append(t)
        t *= 2
    return out + [max(cores, 1)]


def build(host: HostInfo, ident: Identified, isa_flags: list[str], isa_note: str, osaca_ports: list[str],
          bandwidths: dict, name: str, nodes: int, kerncraft_version: str, made: str,
          clock: ClockMeasure | None = None, capacity: str | None = None,
          capacity_measured: bool = False, barrier: dict | None = None) -> dict:
    """The machine file (plain data, in kerncraft's order of fields); clock: the clock under load
    (None: the OS's figure, marked as not measured); capacity: what the last level's scan found
    (specs.capacity.CapacityScan.describe), capacity_measured: whether host holds a capacity it
    measured in place of the OS's; barrier: the barrier events measured (cluster_section)."""
    u = ident.record
    nonov = list(u.non_overlapping)
    dp = dict(u.dp_flops)
    line = host.caches[0].line if host.caches else 64
    stores = streaming_stores(bandwidths)
    meas = measurements(bandwidths)
    spread = any("spread" in block[1] for block in meas.values())
    data = {
        "kerncraft version": kerncraft_version,
        "model name": f"{host.model_name or u.name} ({ident.cpu.describe().split(' (')[0]})",
        "model type": f"{u.name} ({u.key})",
        "clock": f"{file_clock_hz(host, clock) / 1e9:.2f} GHz",
        "sockets": 1, "cores per socket": host.cores, "threads per core": 1,
        "NUMA domains per socket": 1, "cores per NUMA domain": host.cores,
        "in-core model": {"OSACA": u.osaca, "LLVM-MCA": f"-mcpu={u.llvm_mca}"},
        "isa": u.isa,
        "compiler": {"gcc": " ".join(["-O3", *isa_flags, "-D_POSIX_C_SOURCE=200809L", "-fopenmp", "-ffreestanding"])},
        "FLOPs per cycle": {"SP": {k: 2 * v for k, v in dp.items()}, "DP": dp},
        "non-overlapping model": {"ports": {"OSACA": nonov}, "performance counter metric": "n/a"},
        "overlapping model": {"ports": {"OSACA": [p for p in osaca_ports if p not in nonov]},
                              "performance counter metric": "n/a"},
        "cacheline size": f"{line:.2f} B",
        "memory hierarchy": hierarchy(host, ident, nonov),
        "benchmarks": {"kernels": _kernels(), "measurements": meas},
        **({"streaming stores": stores} if stores else {}),
        "in-core measured": incore_section(ident.cpu, ident.assumed or ident.borrowed_from is not None,
                                           f"OSACA {u.osaca}", clock.one_core_hz if clock else None),
        "cluster": cluster_section(name, nodes, host.cores, barrier=barrier),
    }
    how = "chosen with --uarch (assumed, not read from the CPU)" if ident.assumed else "identified from the CPU"
    data["provenance"] = {
        "made": made,
        "cpu": ident.cpu.describe(),
        "microarchitecture": f"{u.key}: {u.name}, {how}; in-core model OSACA {u.osaca}"
                             + (f", borrowed ({ident.borrowed_from}): its ports and instruction forms only, the "
                                f"in-core times measured on this CPU" if ident.borrowed_from else "")
                             + f"; FLOPs per cycle and non-overlapping ports from autotune's CPU table ({u.source})",
        "isa": f"compiler flags {isa_note}",
        "measured": "cache geometry and core count from the OS"
                    + (", the last level's capacity as measured (capacity, below); " if capacity_measured
                       else "; ")
                    + ("the clock under load (clock, below); " if clock else "")
                    + ("the barrier events (cluster.barrier); " if barrier else "")
                    + "bandwidth per level, kernel and thread count from the built-in streaming benchmark "
                    f"(the upper quartile of {REPEATS} to {MAX_REPEATS} runs, the attainable figure, more "
                    f"while its 95 % interval was wider than "
                    f"{100 * STABLE:.0f} % of it" + ("; their spread, (max - min) / median, beside the results"
                                                   if spread else "") + ")",
        "clock": clock_provenance(host, clock),
        **({"capacity": capacity} if capacity is not None else {}),
        "assumed": f"{RATES_ASSUMED}the {u.hierarchy.key} design ({u.hierarchy.source}); "
                   + ("network until calibrated" if barrier else "network and barrier until calibrated"),
    }
    return data

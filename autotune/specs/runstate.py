"""The state a machine was in while a tune run measured on it: the memory bandwidth and the
clock its reference kernels measured, beside the machine file's figures for the same kernels
(the file's state).  A prediction priced at a state (model.state) is what the model says at
the bandwidth and clock of those rounds, instead of the file's."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RunState:
    bandwidth_Bps: float         # the memory triad at the node's busy cores, as measured in the run
    clock_hz: float              # the clock a chain of dependent adds measured on those cores
    file_bandwidth_Bps: float    # the machine file's triad in memory at the same cores
    file_clock_hz: float         # the machine file's clock

    def __post_init__(self):
        for name in ("bandwidth_Bps", "clock_hz", "file_bandwidth_Bps", "file_clock_hz"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and v > 0):
                raise ValueError(f"{name}: expected a number > 0, got {v!r}")

    @property
    def clock_factor(self) -> float:
        """What a term counted in core cycles is multiplied by: the file's clock over the run's."""
        return self.file_clock_hz / self.clock_hz

    @property
    def memory_factor(self) -> float:
        """What the transfer from main memory is multiplied by: the file's bandwidth over the run's."""
        return self.file_bandwidth_Bps / self.bandwidth_Bps

    def describe(self) -> str:
        return (f"{self.bandwidth_Bps / 1e9:.1f} GB/s ({self.bandwidth_Bps / self.file_bandwidth_Bps:.2f} x the "
                f"file's), {self.clock_hz / 1e9:.2f} GHz ({self.clock_hz / self.file_clock_hz:.2f} x)")


@dataclass(frozen=True)
class Reference:
    """What a tune run's reference kernels are compared with: the machine file's triad in main
    memory at the node's busy cores (its bandwidth and the working set per thread it was measured
    with, so the run measures the same thing) and the file's clock."""
    cores: int
    bandwidth_Bps: float
    bytes_per_thread: int
    clock_hz: float

    def state(self, bandwidth_Bps: float, clock_hz: float) -> RunState:
        return RunState(bandwidth_Bps, clock_hz, self.bandwidth_Bps, self.clock_hz)


def memory_reference(data: dict, cores: int, clock_hz: float, kernel: str = "triad") -> Reference | None:
    """The reference of a parsed machine file at `cores` busy cores (None where its benchmarks
    have no such kernel in memory at that count, as a file of another machine may lack)."""
    from autotune.specs.units import quantity
    try:
        row = next(iter(data["benchmarks"]["measurements"]["MEM"].values()))
        i = [int(c) for c in row["cores"]].index(cores)
        bw = quantity(row["results"][kernel][i], "bandwidth")
        size = row.get("size per thread") or row["size per core"]
        ws = int(quantity(str(size[i]), "size"))
    except (KeyError, TypeError, ValueError, IndexError, StopIteration, AttributeError):
        return None
    return Reference(cores, bw, ws, clock_hz) if bw > 0 and ws > 0 else None

"""Results of calibration: the fitted communication model, and a machine file made for this host."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from autotune.results.frames import frame
from autotune.results.registry import result_type


def caveat(where: dict | None) -> str:
    """What a fit measured on virtual or packed nodes is not: a measurement across a network."""
    if where and where["virtual"]:
        return "on virtual nodes of one host: not a measurement across a network"
    if where and where["packed"]:
        return "ranks packed on fewer nodes than asked: not a measurement across a network"
    return ""


@dataclass
class OperationFit:
    fit: dict                          # the fitted model as written to the machine file
    heldout_error_pct: dict | None
    heldout_p_error_pct: dict | None
    measured_p: list[int]


@result_type
@dataclass
class CalibrateResult:
    machine: str
    machine_file: str
    runs: int
    wall_s: float
    procs: list[int]
    threads: list[int]
    operations: dict[str, OperationFit]
    barrier: dict | None = None
    plot: str | None = None
    measured_on: dict | None = None    # nodes the ranks ran on; virtual, packed (pipeline.calibrate)
    raw: dict = field(default_factory=dict, repr=False)   # the measurements per operation (not in to_dict)

    @classmethod
    def of(cls, d: dict, raw: dict | None = None) -> "CalibrateResult":
        return cls(d["machine"], d["machine_file"], d["runs"], d["wall_s"], d["procs"], d["threads"],
                   {op: OperationFit(**r) for op, r in d["operations"].items()}, d.get("barrier"), d.get("plot"),
                   d.get("measured_on"), raw or {})

    def to_dict(self) -> dict:
        d = asdict(self)
        del d["raw"]
        for key in ("barrier", "plot", "measured_on"):
            if d[key] is None:
                del d[key]
        return d

    def to_frame(self):
        """One row per (operation, p, size segment) of the fitted model."""
        rows = []
        for op, r in self.operations.items():
            groups = [("all", r.fit["segments"])] + list(r.fit.get("per_p", {}).items())
            for p, segs in groups:
                rows += [dict(operation=op, p=p, **s) for s in segs]
        return frame(rows, ["operation", "p", "max_bytes", "latency_s", "per_byte_s"])


@result_type
@dataclass
class HostMachineResult:
    """A cluster machine file made by calibrate --node (this host) or --from-kerncraft."""
    machine: str
    file: str
    uarch: dict                        # the identified microarchitecture (specs.cpus.Identified.to_dict)
    flags: list                        # the ISA flags the kernels are analysed and the solvers built with
    cores: int
    clock_ghz: float                   # the file's clock (calibrate --node: measured under load on all cores)
    nodes: int
    wall_s: float
    dry_run: bool
    bandwidth_gbs: dict                # level -> kernel -> GB/s on all cores
    bandwidth_1thread_gbs: dict        # level -> kernel -> GB/s on one core
    os_clock_ghz: float | None = None      # calibrate --node: the OS's figure
    clock_measured: bool = False           # calibrate --node: clock_ghz measured under load (not the OS's)
    clock_1core_ghz: float | None = None   # calibrate --node: measured under load on one core alone
    text: str | None = None            # dry run: the file that would be written
    imported_from: str | None = None   # --from-kerncraft: the source file
    # calibrate --node: how the file composes transfers and each cache level's rate, fitted to the
    # reference kernels (model.refkernels.summary: the rule, the rates, the in-core time, the
    # errors, the rows); empty: not checked
    reference_kernels: dict = field(default_factory=dict)
    # calibrate --node: the bandwidths whose runs spread wider than specs.hostmachine.WIDE_SPREAD
    # ((max - min) / median): level, kernel, threads, gbps (the figure written), spread (a fraction)
    wide_spreads: list = field(default_factory=list)
    # calibrate --node: per level and kernel, at 1, 2, ... threads, the 95 % interval of the GB/s
    # written ([low, high], specs.runstats.interval of the upper quartile), how many runs it
    # took to settle and the GB/s of each run, in the order run
    bandwidth_intervals: dict = field(default_factory=dict)
    bandwidth_runs: dict = field(default_factory=dict)
    bandwidth_samples: dict = field(default_factory=dict)
    # calibrate --node: the last cache level's capacity as the node's data get it
    # (specs.capacity.CapacityScan.to_dict: the OS's and the file's bytes, the scan); empty: not scanned
    last_level: dict = field(default_factory=dict)
    # calibrate --node: the step's barrier events measured (a parallel region's end and the next
    # one's start): per_doubling_s, and seconds per event at each thread count ("1", "2", ...)
    barrier: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)

    def to_frame(self):
        rows = [{"level": lvl, "kernel": k, "all_cores_gbs": v, "one_core_gbs": self.bandwidth_1thread_gbs[lvl][k]}
                for lvl, ks in self.bandwidth_gbs.items() for k, v in ks.items()]
        return frame(rows, ["level", "kernel", "all_cores_gbs", "one_core_gbs"])

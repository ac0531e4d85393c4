"""A calibration request: which operations, process and thread counts and message sizes to
measure, through which launcher, and where the fit goes; checked here, once, for every front
end (CalibrateRequest.of builds it from the command line's options or the API's keywords)."""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from autotune.errors import InputError
from autotune.request.keywords import Keywords
from autotune.request.scenario import Values, values_of
from autotune.specs.machine import Machine, load_machine
from autotune.storage.paths import check_output_path
from autotune.specs.schemes import OPERATIONS
from autotune.tools.launcher import Launcher, parse_launcher


@dataclass(frozen=True)
class Plan:
    machine: Machine
    launcher: Launcher
    procs: tuple[int, ...]
    threads: tuple[int, ...]
    ops: tuple[str, ...] = tuple(OPERATIONS)
    min_bytes: int = 8
    max_bytes: int = 64 * 2**20
    factor: float = 2.0
    max_seconds: float = 0.5
    timeout: float = 900.0
    nodes: dict = field(default_factory=dict)   # procs -> nodes for the launcher (default: one rank per node)
    kinds: tuple[str, ...] = ()     # across these partitions of the machine: a group of ranks on each

    def series(self, op: str, p: int) -> str:
        key = [self.machine.name, op, p, self.launcher.template, self.min_bytes, self.max_bytes,
               self.factor, self.max_seconds] + ([list(self.kinds)] if self.kinds else [])
        return hashlib.sha256(json.dumps(key).encode()).hexdigest()[:24]

    def groups(self, p: int) -> list[tuple[int, int]]:
        """Across kinds: p ranks shared out over the kinds, one thread each (the first ones one more)."""
        k = len(self.kinds)
        return [(p // k + (1 if i < p % k else 0), 1) for i in range(k)]

    def barrier_series(self, t: int) -> str:
        # "fork-join": the benchmark times a region's end and the next one's start (it timed an omp
        # barrier inside one region before): older records are not reused
        return hashlib.sha256(json.dumps([self.machine.name, "barrier", t, "fork-join"]).encode()).hexdigest()[:24]


def calibration_plan(machine: Machine, procs="2", threads="1,2", ops=None, launcher: str | None = None,
                     min_bytes: int = 8, max_bytes: int = 64 * 2**20, factor: float = 2.0,
                     max_seconds: float = 0.5, timeout: float = 900.0, kinds=None) -> Plan:
    """The checked plan; procs and threads take a list or the sweep grammar ("2,4,8"); kinds:
    partitions of the machine to measure across (a group of ranks on each; no barrier, a node's)."""
    names = tuple(OPERATIONS) if ops is None else tuple(
        o.strip() for o in (ops.split(",") if isinstance(ops, str) else ops) if o.strip())
    bad = [o for o in names if o not in OPERATIONS]
    if bad or not names:
        raise InputError(f"{','.join(names)!r}: expected some of {', '.join(OPERATIONS)}", field="ops")
    p = tuple(values_of(procs, "procs"))
    if min(p) < 2:
        raise InputError(f"{','.join(map(str, p))}: communication needs at least 2 processes", field="procs")
    t = tuple(values_of(threads, "threads"))
    if not 8 <= min_bytes <= max_bytes:
        raise InputError(f"{min_bytes}: expected 8 <= min_bytes <= max_bytes ({max_bytes})", field="min_bytes")
    if not factor > 1:   # nan too
        raise InputError(f"{factor}: expected a number > 1", field="factor")
    for name, v in (("max_seconds", max_seconds), ("timeout", timeout)):
        if not v > 0:
            raise InputError(f"{v}: expected seconds > 0", field=name)
    across = _kinds(kinds, machine, p)
    # one rank per node; every rank on the one node of a single-node machine
    nodes = {q: 1 if machine.nodes == 1 and not across else q for q in p}
    return Plan(machine, parse_launcher(launcher), p, () if across else t, names, min_bytes, max_bytes, factor,
                max_seconds, timeout, nodes, across)


def _kinds(kinds, machine: Machine, procs: tuple[int, ...]) -> tuple[str, ...]:
    """The partitions to measure across, checked: two or more of the machine's, each given a rank
    at every process count."""
    if not kinds:
        return ()
    names = tuple(k.strip() for k in (kinds.split(",") if isinstance(kinds, str) else kinds) if k.strip())
    unknown = [k for k in names if k not in machine.partitions]
    if unknown or len(set(names)) < 2 or len(set(names)) != len(names):
        known = ", ".join(sorted(machine.partitions)) or "none"
        raise InputError(f"{','.join(names)}: expected two or more different partitions of {machine.name} "
                         f"(its cluster.partitions: {known})", field="kinds")
    if min(procs) < len(names):
        raise InputError(f"{','.join(map(str, procs))}: a rank on each of the {len(names)} kinds needs at least "
                         f"{len(names)} processes", field="procs")
    return tuple(sorted(names))


@dataclass(frozen=True)
class CalibrateRequest(Keywords):
    """calibrate: the machine to calibrate (a name or YAML path) and what to measure; `out`: the
    machine file to write (default: the one given), `raw`: every measurement as JSON Lines too,
    `fresh`: measure again what the store holds."""
    PRIMARY = "machine"

    machine: str | Path
    procs: Values = "2"
    threads: Values = "1,2"
    ops: str | list | tuple | None = None      # None: every operation
    launcher: str | None = None
    min_bytes: int = 8
    max_bytes: int = 64 * 2**20
    factor: float = 2.0
    max_seconds: float = 0.5
    timeout: float = 900.0
    out: str | Path | None = None
    fresh: bool = False
    raw: str | Path | None = None
    kinds: str | list | tuple | None = None   # partitions to measure across (calibrate --kinds big,small)

    def __post_init__(self):
        for name in ("out", "raw"):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, Path(getattr(self, name)))

    def resolve(self) -> tuple[Plan, Path]:
        """The checked plan and the machine file it writes; the outputs are refused here, before
        anything is measured.  The machine is read without its learned factors (a stale learned
        section does not stop its calibration)."""
        machine = load_machine(str(self.machine), "ecm")
        target = Path(self.out) if self.out else Path(machine.path)
        check_output_path(target, "out", "machine")
        if self.raw:
            check_output_path(Path(self.raw), "raw", "raw")
        return calibration_plan(machine, self.procs, self.threads, self.ops, self.launcher, self.min_bytes,
                                self.max_bytes, self.factor, self.max_seconds, self.timeout, self.kinds), target

"""Each kernel part's in-core time measured on the target (model.incore), at the first analysis.

For a machine whose file has an `in-core measured` section (calibrate --node writes one), the
parts a ranking needs are built as kerncraft analyses them and timed on an L1-resident working set
(tools.incore_bench), round-robin, the median kept; the records go to the store (the `derived`
table, kind "incore"), keyed by the part's code, its constants, the compiler, its flags and the
CPU, not by the rest of the file: a second calibration of the same CPU reuses them, and their
seconds are converted to cycles at the clock of the file in use.  A part is measured only on a host of
the file's CPU; elsewhere the stored records are used, and a part without one is priced by the
port model (its analysis says so).
"""
from __future__ import annotations

import json
import statistics

from autotune.progress import SILENT, Progress
from autotune.model import incore as incmod
from autotune.model import regime as regmod
from autotune.specs.runstats import settled
from autotune.specs.machine import Machine
from autotune.specs.parts import KernelPart
from autotune.storage.store import Store, ecm_key

KIND = "incore"
L1, L2 = "L1", "L2"  # the levels each part is measured in: its in-core time, its time from L2
ROUNDS = 5          # runs of each part's harness, round-robin over the parts; the median is kept,
MAX_ROUNDS = 11     # and more rounds, up to this, while some part's median is not settled (its 95 %
                    # interval wider than specs.runstats.STABLE of it, as the bandwidths settle)
MIN_S = 0.01        # seconds a timed batch of calls lasts at least
PROGRESS = "in-core"


HALO = 16           # the size parameter of a stencil whose halo grows with the IVP (a short row)


def l1_constants(part: KernelPart, machine: Machine, level: int = 0) -> dict[str, int]:
    """Constants that fill half of L1 (of cache level `level`'s share of one core) with the part's
    working set (M + 2 halo components of every row); a stencil whose halo is the IVP's size
    parameter gets a short one (HALO)."""
    if part.size_parameter is not None:
        halo = HALO
    else:
        halo = int(part.halo) if part.halo.isdigit() else 0
    c = machine.caches[level]
    fill = int(regmod.FILL * c.bytes_per_group / c.cores_per_group / part.bytes_per_component) - 2 * halo
    consts = {"M": max(64, fill // 8 * 8)}
    if part.size_parameter is not None:     # the halo is the size parameter to a power
        consts[part.size_parameter] = max(2, round(halo ** (1 / part.halo_power)))
    return consts


def l2_constants(part: KernelPart, machine: Machine) -> dict[str, int] | None:
    """Constants that fill half of one core's share of L2 with the part's working set (None: the
    machine has no L2)."""
    return l1_constants(part, machine, 1) if len(machine.caches) > 1 else None


def _inputs(part: KernelPart, machine: Machine, constants: dict) -> dict:
    from autotune.tools.incore_bench import HARNESS_VERSION
    from autotune.tools.toolchain import compiler_version, package_version
    return {"harness": HARNESS_VERSION, "code": part.code, "unroll": part.unroll, "constants": constants,
            "compiler": machine.compiler, "flags": machine.compiler_flags,
            "compiler_version": compiler_version(machine.compiler), "kerncraft": package_version("kerncraft"),
            "cpu": machine.incore_measured["cpu"]}


def host_is(machine: Machine) -> bool:
    """Whether this host's CPU is the one the file's parts are measured on."""
    from autotune.errors import InputError
    from autotune.specs.incoremeasure import cpu_key
    from autotune.tools.cpuprobe import host_cpu
    try:
        return cpu_key(host_cpu()) == machine.incore_measured["cpu"]
    except InputError:
        return False


def _wanted(parts: list[KernelPart], machine: Machine, store: Store) -> tuple[dict, dict]:
    """(the stored records of the parts, by (code, level); what is to measure: (code, level) ->
    (part, constants, store key))."""
    keyed: dict[tuple[str, str], tuple[KernelPart, dict, str]] = {}
    for part in parts:
        for level, consts in ((L1, l1_constants(part, machine)), (L2, l2_constants(part, machine))):
            if consts is not None and (part.code, level) not in keyed:
                keyed[(part.code, level)] = (part, consts, ecm_key(_inputs(part, machine, consts)))
    got_all: dict[tuple[str, str], dict] = {}
    todo = {}
    for ident, (part, consts, key) in keyed.items():
        got = store.get_derived(KIND, key)
        if got is not None:
            got_all[ident] = json.loads(got)
        else:
            todo[ident] = (part, consts, key)
    return got_all, todo


class Builds:
    """The harnesses of the parts a ranking will measure, built in a pool of their own from the
    start, while the kerncraft analyses run: a build times nothing, so it may share the cores with
    them (on a 2-core guest one analysis pool worker idled 8 s behind heat2d's last cache
    simulation, and the 46 builds took 7-8 s after it); the timing waits for both.  A context
    manager: leaving it stops what is left and removes the harnesses."""

    def __init__(self, parts: list[KernelPart], machine: Machine, store: Store, jobs: int | None = None) -> None:
        self.stored, self.todo = _wanted(parts, machine, store) if machine.incore_measured else ({}, {})
        self._tmp, self._pool, self._futures = None, None, {}
        if not self.todo or not host_is(machine):
            return                   # (a warm ranking: nothing of the pool is even imported)
        import tempfile
        from concurrent.futures import ProcessPoolExecutor

        from autotune.tools import incore_bench
        from autotune.tools.ecm_runner import init_worker_once, local_workers
        codes = list(self.todo)
        workers = local_workers(jobs, len(codes))
        self._tmp = tempfile.TemporaryDirectory(prefix="autotune-incore-")
        tasks = {c: {"name": self.todo[c][0].name, "code": self.todo[c][0].code, "machine_path": machine.path,
                     "constants": self.todo[c][1], "folder": f"{self._tmp.name}/{i}"} for i, c in enumerate(codes)}
        try:
            self._pool = ProcessPoolExecutor(max_workers=workers, initializer=init_worker_once)
            self._futures = {self._pool.submit(incore_bench.build, t): c for c, t in tasks.items()}
        except BaseException:
            self.__exit__(None, None, None)
            raise

    @property
    def started(self) -> bool:
        return self._pool is not None

    @property
    def folder(self) -> str | None:
        """Where the harnesses are built (None: nothing to build here)."""
        return self._tmp.name if self._tmp is not None else None

    def built(self, on_built) -> dict[tuple, dict]:
        """Every harness as built (waiting for those still building); on_built(count, code) as
        each one is."""
        from concurrent.futures import as_completed

        from autotune.tools.ecm_runner import cause_of
        out = {}
        for fut in as_completed(self._futures):
            try:
                out[self._futures[fut]] = fut.result()
            except Exception as e:     # a worker that died (killed, out of memory): its part keeps the port model
                out[self._futures[fut]] = {"ok": False, "error": f"the build's worker failed: {cause_of(e)}"}
            on_built(len(out), self._futures[fut])
        return out

    def __enter__(self) -> "Builds":
        return self

    def __exit__(self, *exc) -> None:
        try:
            if self._pool is not None:
                self._pool.shutdown(wait=True, cancel_futures=True)
        finally:
            if self._tmp is not None:
                self._tmp.cleanup()


def ensure_incore(parts: list[KernelPart], machine: Machine, store: Store,
                  progress: Progress = SILENT,
                  jobs: int | None = None, builds: Builds | None = None) -> dict[str, dict]:
    """Measured in-core records of the parts (code -> record; {} where the file asks for none):
    stored ones reused, missing ones measured where this host is the file's CPU (their harnesses
    the ones `builds` made, where given for these parts)."""
    if not machine.incore_measured:
        return {}
    if builds is None:
        with Builds(parts, machine, store, jobs) as mine:
            return ensure_incore(parts, machine, store, progress, jobs, mine)
    got_all, todo = dict(builds.stored), builds.todo
    if todo and builds.started:
        for ident, record in measure(todo, builds, progress).items():
            if "seconds_per_call" in record:     # a failure may pass (a full disk): it is not kept
                store.put_derived(KIND, todo[ident][2], json.dumps(record, sort_keys=True).encode())
            got_all[ident] = record
    elif todo:
        why = f"this host is not the CPU the file measures ({machine.incore_measured['cpu']}), and the store has none"
        got_all.update({ident: {"part": part.name, "error": why} for ident, (part, _, _) in todo.items()})
    clock = one_core_clock(machine)
    got_all = {ident: at_clock(record, clock) for ident, record in got_all.items()}
    out: dict[str, dict] = {}
    for (code, level), record in got_all.items():
        if level == L1:
            out[code] = dict(record, **({"l2": got_all[(code, L2)]} if (code, L2) in got_all else {}))
    return out


def measure(todo: dict[tuple, tuple[KernelPart, dict, str]], builds: Builds,
            progress: Progress) -> dict[tuple, dict]:
    """Every part's harness as `builds` built it, timed round-robin: the seconds per call and what
    converts them to cycles per line of work (at_clock)."""
    from autotune.tools import incore_bench
    codes = list(todo)
    names = {c: todo[c][0].name for c in codes}
    total = len(codes) + ROUNDS               # a build of each part, then the rounds
    progress.step(0, len(codes), PROGRESS)
    built = builds.built(lambda count, c: progress.step(count, total, f"{PROGRESS}: {names[c]} built"))
    ready = {c: built[c] for c in codes if built[c]["ok"]}
    runs, failed = incore_bench.time_all(
        ready, ROUNDS, MIN_S, lambda done: progress.step(
            len(codes) + done, len(codes) + max(done, ROUNDS), f"{PROGRESS}: round {done} timed"),
        MAX_ROUNDS, settled)
    out = {}
    for c in codes:
        b, part = built[c], todo[c][0]
        error = b.get("error") or failed.get(c)
        if error:
            out[c] = {"part": names[c], "error": error, "constants": todo[c][1]}
            continue
        seconds = statistics.median(runs[c])
        per_line = b["elements_per_cacheline"] / part.loops[-1].step   # kerncraft's line of work
        out[c] = {"part": names[c], "constants": todo[c][1], "seconds_per_call": seconds, "runs": runs[c],
                  "iterations": b["iterations"], "per_line": per_line}
    return out


def at_clock(record: dict, clock: float) -> dict:
    """A measured record's cycles at `clock` (its seconds are what was measured; a failure as is)."""
    if "seconds_per_call" not in record:
        return record
    return dict(record, clock_hz=clock, cy_per_cl=incmod.cycles_per_line(
        record["seconds_per_call"], clock, record["iterations"], record["per_line"]))


def one_core_clock(machine: Machine) -> float:
    """The clock a harness runs at: one core busy, the others idle (the file's `in-core
    measured.clock`, where calibrate --node measured it; else the file's clock).  Its cycles are
    the core's own, which the model converts back at the file's clock, the all-cores one."""
    from autotune.specs.units import quantity
    given = machine.incore_measured.get("clock")
    return quantity(str(given), "frequency") if given else machine.clock_hz


def apply(got: dict[tuple, dict], records: dict[str, dict], machine: Machine) -> dict[tuple, dict]:
    """The analyses (keyed by (code, data, layer)) as they are priced on this machine: each with
    the in-core source model.incore chooses for its part."""
    spec = machine.incore_measured
    if not spec:
        return got
    return {ident: incmod.priced(result, records.get(ident[0]), spec["when"], float(spec["tolerance"]),
                                 machine.numa_cores, machine.cores)
            for ident, result in got.items()}


def by_part(needs: list[tuple[KernelPart, regmod.Regime]], got: dict[tuple, dict]) -> dict[str, dict]:
    """Part name -> the in-core source its analyses were priced with (model.incore's `incore` entry)."""
    out = {}
    for part, reg in needs:
        entry = got.get((part.code, reg.data, reg.layer), {}).get("incore")
        if entry is not None and part.name not in out:
            out[part.name] = entry
    return out

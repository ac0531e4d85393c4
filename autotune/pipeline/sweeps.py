"""Each fused sweep's time measured as the solver runs it (model.sweeps), at the first ranking
that needs it.

For a machine whose file has an `in-core measured` section (calibrate --node writes one), one
variant of each step form with fused sweeps or pipelined levels (timed together, group PIPE) is
built as `tune` builds it and run on one rank and every core at two sizes (`measure_sizes`): one
where each core's share stays in its L2, and one where the step's vectors stream from memory
(forms whose sweeps are the same code share that run: memory_twins), round-robin with the
others, several rounds, the median kept (tools.sweep_bench).  A ranking plans the runs first
(plan_sweeps), starts their builds while it times the in-core harnesses (start_builds), and
measures them after (finish_sweeps).  The records go to the store (its `derived` table, kind
"sweep"), keyed by the solver's source, the compiler, its version and flags
and the CPU, and are reused like analyses: the sweeps are measured once per code and CPU.  A
sweep is measured only on a host of the file's CPU; elsewhere the stored records are used, and a
sweep without one is priced by its analysed loops alone (model.loops; the prices say so).
"""
from __future__ import annotations

import json
import math
import statistics
from dataclasses import dataclass

from autotune.progress import SILENT, Progress
from autotune.model import regime as regmod
from autotune.model.reuse import level_reach
from autotune.pipeline.layout import Layout, tile_of
from autotune.specs.ivp import IVP
from autotune.specs.machine import Machine
from autotune.specs.method import Method
from autotune.specs.parts import DOUBLE
from autotune.specs.step import FUSED_GROUPS, StepForm
from autotune.storage.store import Store, ecm_key

KIND = "sweep"
ROUNDS = 3           # runs of each solver, round-robin; the median of each sweep is kept
TILES = 2            # a measured sweep covers at least this many tiles
LEAST_N = 1024       # and at least this many components
MARGIN = 0.8         # of the half of a level aimed at (the nearest valid size may be larger)
MOST_N = 4_000_000   # a level whose size needs more components is not measured (the time it takes)
# in memory: one vector on the node is this many times what the caches hold of the node's data
# (model.reuse: every touch of the step then comes from memory) ...
MEMORY_OVER = 1.25
# ... snapped up to a fixed grid of sizes (powers of MEMORY_GRID components): the capacity a
# guest gets of its last level moves a few percent between calibrations (7145 and 7339 kB an
# hour apart on a Zen 1 guest), and a size that moved with it was a record the store lacked,
# measured again in another minute (heat2d's fused sweeps 14 % apart: 3 of its 414 variants
# moved 15 %); on the grid both calibrations keep one size and its record
MEMORY_GRID = math.sqrt(2)
# ... where the step's vectors pass the node's memory in this long at its bandwidth (the time it
# takes: a 2-core guest that reports 300 MiB of L3 would stream 1.4 GB a sweep), and at most
MEMORY_SECONDS = 0.02
MOST_MEMORY_N = 16_000_000
PROGRESS = "sweeps"
# the pipelined levels of a step are one group, timed by the solver's phase that holds them (one
# rank: no exchange inside the step; the levels' barriers and the ring's restarts are in it)
PIPE = "pipe"
PIPE_TIMER = "RHS"


@dataclass(frozen=True)
class SweepMeasure:
    """One fused sweep of a unit measured as it runs: seconds per execution (None: not measured,
    `error` says why) at n components on `threads` threads, its data in level `level` (an index of
    the node's levels: a cache level, or len(caches), memory)."""
    variant: str
    group: str
    n: int
    level: int
    seconds: float | None
    error: str = ""
    threads: int = 1
    executions: int = 1       # how often the unit runs in one execution of its group (the pipelined step: its levels)
    form: str = ""            # the variant of the step form whose sweep it is, where another's run measured it


def sweep_units(layout: Layout) -> dict[int, tuple[int, str]]:
    """Per unit of a fused sweep whose tile of F is stored, the step form whose first variant
    measures it and its group; per unit of a pipelined level (pipe=wavefront), the same with the
    group PIPE: the levels are timed together, as the step that runs them."""
    out: dict[int, tuple[int, str]] = {}
    for fi, form in enumerate(layout.forms):
        for s in form.slots:
            u = layout.slots[s].unit
            unit = layout.units[u]
            if unit.part.kernel not in FUSED_GROUPS or u in out:
                continue
            if unit.windowed:
                out[u] = (fi, PIPE)
            elif unit.stores_f:
                out[u] = (fi, str(unit.part.kernel))
    return out


def executions(layout: Layout, fi: int, u: int) -> int:
    """How often unit u runs in one step of form fi (its slots' executions)."""
    return sum(layout.slots[s].executions for s in layout.forms[fi].slots if layout.slots[s].unit == u)


def step_vectors(step: StepForm) -> int:
    """The distinct vectors one step touches (y, the argument sets, ...)."""
    return len({v for sw in step.sweeps() for v in sw.vectors})


def memory_target(reach: float) -> int:
    """Components of one vector on the node for the measurement in memory: MEMORY_OVER times the
    bytes the caches hold of the node's data (reach), as the least power of MEMORY_GRID at or
    above it (rounded up to a whole component)."""
    least = MEMORY_OVER * reach / DOUBLE
    if least <= 1:
        return 1
    k = math.ceil(math.log(least, MEMORY_GRID) - 1e-9)
    return math.ceil(MEMORY_GRID ** k - 1e-6)


def measure_sizes(ivp: IVP, machine: Machine, vectors: int, tile: int) -> list[tuple[int, int, int]]:
    """(n, level, threads) of the sizes a form's sweeps are measured at, on every core of the node
    (the file's cores): in L2 and in memory.

    In L2: each core's share of the step's vectors filling up to MARGIN of half of its L2 (at
    least TILES tiles and LEAST_N components a core), where that keeps them in L2 (a tile that
    fills half of L2, block=l2, does not); level: the index of the first level of one core that
    holds its share (regime.FILL of its capacity).  On every core, not one: heat2d's sweeps on two
    threads of a 2-core guest ran 1.2-1.55 x their analysis in L2, on one thread 0.7-1.3 x, and
    the pool is priced on all of them.  The shared levels beyond are not measured: a sweep
    measured in L3 at the size its rates were fitted at priced larger sizes in the same level
    wrongly (docs/node-model.md, "The fused sweeps as they run").

    In memory (level: the index past the caches): one vector on the node MEMORY_OVER times what
    the caches hold of the node's data, snapped up to the grid (memory_target), where the step's
    vectors pass memory in MEMORY_SECONDS at the file's bandwidth (the time it takes) and n stays
    under MOST_MEMORY_N.  A sweep's cost
    per component does not depend on the size there, and its tiles' compute and its streams
    share the time in a way no rule of the file composes (the same docs, "In memory").  A
    pipelined step is not measured there (ensure_sweeps): its rings stay in cache at any size,
    and what its levels read from memory is a share the model prices at the size it runs."""
    caches = machine.caches
    if len(caches) < 2:
        return []
    threads = max(1, machine.cores)
    out = []
    room = caches[1].bytes_per_group / caches[1].cores_per_group
    per_thread = max(int(MARGIN * regmod.FILL * room / (DOUBLE * max(vectors, 1))), TILES * tile, LEAST_N)
    n = ivp.nearest_n(per_thread * threads)
    need = DOUBLE * vectors * n / threads
    level = next((j for j, d in enumerate(caches) if need <= regmod.FILL * d.bytes_per_group / d.cores_per_group),
                 len(caches))
    if level == 1 and n <= MOST_N:
        out.append((n, level, threads))
    n = ivp.least_n(memory_target(level_reach(machine, threads)[-1]))
    bandwidth = machine.bandwidth("MEM", threads)
    if n <= MOST_MEMORY_N and bandwidth and DOUBLE * vectors * n / bandwidth <= MEMORY_SECONDS \
            and n >= TILES * tile * threads:
        out.append((n, len(caches), threads))
    return out


def run_flags(machine: Machine) -> tuple[str, ...]:
    """The flags `tune` builds the machine's solvers with by default (request.run.machine_flags)."""
    import shlex

    from autotune.request.run import machine_flags
    return tuple(shlex.split(machine_flags(machine.isa_flags)))


def _inputs(source: str, machine: Machine) -> dict:
    from autotune.tools.build import find_mpicc
    from autotune.tools.sweep_bench import HARNESS_VERSION
    from autotune.tools.toolchain import compiler_version
    cc = find_mpicc()
    return {"harness": HARNESS_VERSION, "source": source, "compiler": cc, "flags": list(run_flags(machine)),
            "compiler_version": compiler_version(cc), "cpu": machine.incore_measured["cpu"]}


@dataclass
class SweepPlan:
    """What one layout's sweeps need: per (form, level) the run that measures them (its solver's
    source, size and timers, its store key), the records the store has, and the runs it lacks."""
    units: dict[int, tuple[int, str]]
    twin: dict[int, int]
    memory_level: int
    plans: dict[tuple[int, int], dict]
    records: dict[tuple[int, int], dict]
    todo: list[tuple[int, int]]


def ensure_sweeps(layout: Layout, ivp: IVP, method: Method, machine: Machine, store: Store,
                  progress: Progress = SILENT, in_memory: set[int] | None = None) -> dict[int, tuple[SweepMeasure, ...]]:
    """Per fused unit of the layout, its sweep as measured at each size (stored records reused,
    missing ones measured where this host is the file's CPU); {} where the file asks for no
    measurement.  in_memory: the units some of whose data the ranking takes from memory (a form
    with none is not measured there: nothing would price with it); None: every unit."""
    plan = plan_sweeps(layout, ivp, method, machine, store, in_memory)
    return {} if plan is None else finish_sweeps(plan, layout, ivp, machine, store, progress)


def plan_sweeps(layout: Layout, ivp: IVP, method: Method, machine: Machine, store: Store,
                in_memory: set[int] | None = None) -> SweepPlan | None:
    """The runs a layout's sweeps need (ensure_sweeps), and the records the store has of them;
    None where the file asks for no measurement."""
    if not machine.incore_measured:
        return None
    from autotune.codegen.solver import solver_source
    from autotune.specs.stepvalues import step_form
    from autotune.specs.variants import fixed_twin
    units = sweep_units(layout)
    forms = sorted({fi for fi, _ in units.values()})
    memory_level = len(machine.caches)
    sizes: dict[int, list[tuple[int, int, int]]] = {}
    for fi in forms:
        tile = max((tile_of(layout.units[u].tiling, machine, method.stages) for u, (f, _) in units.items()
                    if f == fi), default=0)
        sizes[fi] = measure_sizes(ivp, machine, step_vectors(step_form(method, layout.variants[
            layout.form_of.index(fi)])), tile)
        # a pipelined step's rings stay in cache at any size: measured in L2 alone
        if not any(g != PIPE and (in_memory is None or u in in_memory) for u, (f, g) in units.items() if f == fi):
            sizes[fi] = [size for size in sizes[fi] if size[1] != memory_level]
    twin = memory_twins(layout, [fi for fi in forms if any(lv == memory_level for _, lv, _ in sizes[fi])])
    plans: dict[tuple[int, int], dict] = {}
    for fi in forms:
        v = fixed_twin(layout.variants[layout.form_of.index(fi)])   # a controlled one's sweeps are its twin's
        step = step_form(method, v)
        for n, level, threads in sizes[fi]:
            if level == memory_level and twin.get(fi, fi) != fi:
                continue     # its sweeps in memory are its twin's
            source = solver_source(ivp, method, v, n, machine)
            memory = level == memory_level
            plans[(fi, level)] = {"variant": v.name, "n": n, "level": level, "threads": threads, "source": source,
                                  "memory": memory,
                                  "timers": step.timers + (((PIPE_TIMER, PIPE),) if not memory and any(
                                      g == PIPE for f, g in units.values() if f == fi) else ()),
                                  "key": ecm_key(dict(_inputs(source, machine), n=n, threads=threads))}
    plan = SweepPlan(units, twin, memory_level, plans, {}, [])
    _look_up(plan, store)
    return plan


def _look_up(plan: SweepPlan, store: Store) -> None:
    """The records the store has of the plan's runs that lack one (another layout's ranking may
    have measured them since)."""
    for pk, run in plan.plans.items():
        if pk in plan.records:
            continue
        got = store.get_derived(KIND, run["key"])
        if got is not None:
            plan.records[pk] = json.loads(got)
    plan.todo = [pk for pk in plan.plans if pk not in plan.records]


def start_builds(plans: list[SweepPlan], machine: Machine, at_once: int | None = None):
    """The solvers of the runs the plans lack, building in the background (tools.sweep_bench.
    Building; at_once: how many at a time until it widens); None where there is nothing to build
    or this host is not the file's CPU."""
    from autotune.pipeline.incore import host_is
    sources = {p.plans[pk]["key"]: p.plans[pk]["source"] for p in plans for pk in p.todo}
    if not sources or not host_is(machine):
        return None
    from autotune.tools.sweep_bench import Building
    return Building(sources, run_flags(machine), at_once)


def finish_sweeps(plan: SweepPlan, layout: Layout, ivp: IVP, machine: Machine, store: Store,
                  progress: Progress = SILENT, building=None) -> dict[int, tuple[SweepMeasure, ...]]:
    """Per fused unit, its sweep as measured at each size (ensure_sweeps): the plan's missing runs
    measured where this host is the file's CPU (their solvers as `building` built them, where it
    has them)."""
    from autotune.pipeline.incore import host_is
    _look_up(plan, store)
    plans, records = plan.plans, plan.records
    if plan.todo and host_is(machine):
        for pk, record in measure({pk: plans[pk] for pk in plan.todo}, ivp, machine, progress, building).items():
            if "sweeps" in record:       # a failure is not kept: the next ranking tries again
                store.put_derived(KIND, plans[pk]["key"], json.dumps(record, sort_keys=True).encode())
            records[pk] = record
    elif plan.todo:
        why = f"this host is not the CPU the file measures ({machine.incore_measured['cpu']}), and the store has none"
        records.update({pk: {"error": why} for pk in plan.todo})
    plan.todo = []
    out = {}
    for u, (fi, group) in plan.units.items():
        mine = []
        for (f, level), run in sorted(plans.items(), key=lambda item: item[0][1]):
            if f != fi and not (level == plan.memory_level and f == plan.twin.get(fi)):
                continue
            seconds = (records[(f, level)].get("sweeps") or {}).get(group)
            error = "" if seconds is not None else records[(f, level)].get("error", "the solver has no timer of it")
            mine.append(SweepMeasure(run["variant"], group, run["n"], level, seconds, error, run["threads"],
                                     executions(layout, fi, u) if group == PIPE else 1,
                                     "" if f == fi else layout.variants[layout.form_of.index(fi)].name))
        out[u] = tuple(mine)
    return out


def sweep_code(layout: Layout, fi: int) -> tuple:
    """What a step form's fused sweeps run, as far as their time in memory goes: per fused unit of
    its slots (not a pipelined level's) its group, its code, its tile and its streams.  Forms
    alike in this run the same sweeps (heat2d's buf=ghost and buf=pack: other buffers, the same
    loops); in memory, where every touch of the step comes from memory, their reuse distances
    do not change the time."""
    units = (layout.units[layout.slots[s].unit] for s in layout.forms[fi].slots)
    return tuple(sorted({(str(u.part.kernel), u.part.code, u.tiling, u.streams) for u in units
                         if u.part.kernel in FUSED_GROUPS and u.stores_f and not u.windowed}))


def memory_twins(layout: Layout, forms: list[int]) -> dict[int, int]:
    """Per form (of those measured in memory), the first of them whose fused sweeps are the same
    (sweep_code; itself where none is before it): its run in memory measures both.  Two runs of
    one code gave heat2d's corrector 7.9 and 8.4 ms apart, and the 4 of 8 runs were 4-5 s of a
    cold ranking (2-core Zen 1 guest)."""
    first: dict[tuple, int] = {}
    return {fi: first.setdefault(sweep_code(layout, fi), fi) for fi in forms}


def measure(plans: dict[tuple, dict], ivp: IVP, machine: Machine, progress: Progress,
            building=None) -> dict[tuple, dict]:
    """Build each plan's solver (or take it from `building`, waiting for those still building),
    run them round-robin; per plan its record: seconds per execution of each fused group (the
    median over the rounds), or the error."""
    from autotune.tools import sweep_bench
    total = len(plans) + ROUNDS
    progress.step(0, total, PROGRESS)
    keys = {plans[pk]["key"]: pk for pk in plans}

    def on_built(what: str) -> None:
        progress.step(0, total, f"{PROGRESS}: {what}")
    if building is None or not set(keys) <= set(building.sources):
        built, failed = sweep_bench.build_all({k: plans[pk]["source"] for k, pk in keys.items()}, run_flags(machine),
                                              on_built)
    else:
        built, failed = building.results(on_built)
        built = {k: exe for k, exe in built.items() if k in keys}
        failed = {k: why for k, why in failed.items() if k in keys}
    runs = {k: (exe, plans[keys[k]]["n"], ivp.size_value(plans[keys[k]]["n"]), ivp.default_step(plans[keys[k]]["n"]),
                plans[keys[k]]["threads"], plans[keys[k]].get("memory", False)) for k, exe in built.items()}
    timed, broke = sweep_bench.time_all(runs, ROUNDS, lambda done: progress.step(
        len(plans) + done, total, f"{PROGRESS}: round {done} of {ROUNDS} timed"))
    failed.update(broke)
    out = {}
    for pk, plan in plans.items():
        error = failed.get(plan["key"])
        if error:
            out[pk] = {"variant": plan["variant"], "n": plan["n"], "error": error}
            continue
        out[pk] = {"variant": plan["variant"], "n": plan["n"], "level": plan["level"], "threads": plan["threads"],
                   "runs": timed[plan["key"]], "sweeps": per_execution(timed[plan["key"]], plan["timers"])}
    return out


def per_execution(runs: list[dict[str, float]], timers) -> dict[str, float]:
    """Seconds of one execution of each fused group: per run, the mean of the group's timers (the
    corrector's sweeps, m - 1 of them, are one group); the median over the runs."""
    out = {}
    for group in dict.fromkeys(str(g) for _, g in timers):
        names = [name for name, g in timers if str(g) == group]
        per_run = [statistics.fmean(r[n] for n in names) for r in runs if all(n in r for n in names)]
        if per_run:
            out[group] = statistics.median(per_run)
    return out


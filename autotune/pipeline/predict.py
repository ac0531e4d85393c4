"""From a scenario (IVP, method, machine, n, nodes, threads) to predicted seconds per step.

This is the orchestration edge: it lays out the kernel parts of every variant (pipeline.layout),
places their data in each scenario and collects the ECM results that needs (pipeline.pricebatch),
looks them up in the store, runs the missing analyses, and feeds plain numbers to the pure model
and ranking (model.steptime), for a batch of scenarios at once.
"""
from __future__ import annotations

from contextlib import ExitStack
from typing import Callable

from autotune.progress import SILENT, Progress
from autotune.codegen.dataview import data_view, view_constants
from autotune.model import regime as regmod
from autotune.model.ops import SCALAR
from autotune.model.preselect import Rule
from autotune.pipeline.incore import Builds, apply as apply_incore, by_part as incore_by_part, ensure_incore
from autotune.pipeline.layout import Session
from autotune.pipeline.mergedrows import merged, split
from autotune.pipeline.controlrate import with_measured_rate
from autotune.pipeline.pricebatch import Batch, place, price
from autotune.pipeline.scenariorows import rank_priced
from autotune.pipeline.sweeps import finish_sweeps, plan_sweeps, start_builds
from autotune.pipeline.sweepprice import memory_units
from autotune.results.rank import RankResult
from autotune.errors import InputError, ToolError
from autotune.specs.machine import Machine, kerncraft_file_error
from autotune.specs.parts import KernelPart
from autotune.specs.exclusion import Exclusions
from autotune.specs.scenario import Scenario
from autotune.specs.variants import Variant
from autotune.storage.store import Store, ecm_key
from autotune.tools.toolchain import compiler_version, package_version

BACKEND_VERSION = 2  # bump when the analysis set-up (patches, predictor) changes


def _analysis_inputs(part: KernelPart, machine: Machine, regime: regmod.Regime) -> dict:
    """Everything an analysis' result depends on (its store key).  The cache predictor is
    model.regime's choice; a part with no data view (codegen.dataview) is simulated."""
    from autotune.tools.cpuprobe import incore_key
    constants = regmod.representative_constants(part, machine, regime)
    predictor = regmod.cache_predictor(part, regime)
    view = data_view(part, constants) if predictor == "LC" else None
    extra = view_constants(view) if view else {}
    if extra and (set(extra) & set(constants) or
                  not regmod.sweep_outgrows_faster_levels(part, machine, regime, constants["M"])):
        view, extra = None, {}    # a padded view (loops reordered) only where no faster level keeps the rows
    inputs = {
        "backend": BACKEND_VERSION,
        "code": part.code,
        "unroll": part.unroll,
        "constants": constants,
        "regime": regime.label,
        "machine": machine.kerncraft_digest,
        "compiler": machine.compiler,
        "flags": machine.compiler_flags,
        "compiler_version": compiler_version(machine.compiler),
        "kerncraft": package_version("kerncraft"),
        "osaca": package_version("osaca"),
        "cache_predictor": "LC" if view else "SIM",
        "incore": incore_key(machine),     # "OSACA:<model>", @sha256:<digest> where a file gives the model
    }
    if view:
        inputs["view"] = view
    if extra:
        inputs["view_constants"] = extra
    return inputs


def ensure_ecm(needs: list[tuple[KernelPart, regmod.Regime]], machine: Machine, store: Store,
               progress: Progress = SILENT,
               jobs: int | None = None) -> tuple[dict[tuple, dict], int]:
    """ECM results of every (part, regime) pair, by (part code, data level, layer level); runs and
    stores only what the store lacks, each part's missing regimes in one task (its in-core
    analysis made once)."""
    keyed: dict[tuple, tuple[dict, str, KernelPart, regmod.Regime]] = {}
    for part, reg in needs:
        ident = (part.code, reg.data, reg.layer)
        if ident not in keyed:
            inputs = _analysis_inputs(part, machine, reg)
            keyed[ident] = (inputs, ecm_key(inputs), part, reg)
    have = store.get_ecm([k for _, k, _, _ in keyed.values()])
    todo = {k: (part, reg, inputs) for inputs, k, part, reg in keyed.values() if k not in have}
    ran = 0
    if todo:
        from autotune.tools.cpuprobe import cross_analysis_error
        from autotune.tools.ecm_runner import MPI_JOBS, run_analyses
        cross = kerncraft_file_error(machine, package_version("kerncraft"))
        cross = cross or (None if jobs == MPI_JOBS else cross_analysis_error(machine))
        if cross:
            raise InputError(f"{cross} ({len(todo)} kernel analyses missing)", field="machine")
        tasks: dict[str, dict] = {}
        for k, (part, reg, inputs) in todo.items():
            task = tasks.setdefault(part.code, {"name": part.name, "code": part.code, "machine_path": machine.path,
                                                "unroll": part.unroll, "regimes": []})
            task["regimes"].append({"key": k, "label": reg.label, "constants": inputs["constants"],
                                    "cache_predictor": inputs["cache_predictor"], "view": inputs.get("view"),
                                    "view_constants": inputs.get("view_constants", {})})

        def keep(task, regime, result):
            part, reg, inputs = todo[regime["key"]]
            if not result.get("transient"):  # a crashed worker is not a property of the kernel
                store.put_ecm(regime["key"], part.name, reg.label, machine.name, result, inputs)
            have[regime["key"]] = result

        ran = run_analyses(list(tasks.values()), keep, progress, jobs)
    return {ident: have[k] for ident, (_, k, _, _) in keyed.items()}, ran


def rank_scenario(sc: Scenario, variants: list[Variant], rule: Rule, store: Store,
                  excluded: Exclusions | None = None,
                  progress: Progress = SILENT,
                  jobs: int | None = None) -> RankResult:
    return rank_many([(sc, variants, excluded)], rule, store, progress, jobs)[0]


def rank_many(items: list[tuple[Scenario, list[Variant], Exclusions | None]], rule: Rule, store: Store,
              progress: Progress = SILENT,
              jobs: int | None = None, detail: bool = True) -> list[RankResult]:
    """Rank a batch of scenarios: one store lookup and one round of analyses for all of them
    (each kernel part at most once per memory regime), then the model for every scenario that
    shares IVP, method, machine, threads and variant pool at once.  Without detail the
    predictions carry no per-kernel breakdown (a sweep of thousands of scenarios needs only the
    times).  A scenario whose variants store its IVP in more than one way is ranked as one
    scenario per way, with the IVP stored so, and merged (pipeline.mergedrows)."""
    flat, ways, known = [], [], {}
    rates: dict = {}
    items = [(with_measured_rate(sc, store, rates), variants, excluded) for sc, variants, excluded in items]
    for sc, variants, excluded in items:
        subs = split(sc, variants, known)
        start = len(flat)
        flat += [(s, vs, excluded) for s, vs in subs] if subs else [(sc, variants, excluded)]
        ways.append((start, len(flat), bool(subs)))
    ranked = _rank_flat(flat, rule, store, progress, jobs, detail)
    return [merged(items[i][0], rule, ranked[a:b], items[i][2], ranked[a].analyses_run) if subs else ranked[a]
            for i, (a, b, subs) in enumerate(ways)]


def _rank_flat(items: list[tuple[Scenario, list[Variant], Exclusions | None]], rule: Rule, store: Store,
               progress: Progress, jobs: int | None, detail: bool) -> list[RankResult]:
    session = Session(store)
    batches: dict[tuple, tuple[list[int], list[Scenario], list[Variant]]] = {}
    for i, (sc, variants, _) in enumerate(items):
        key = (sc.ivp, sc.method, sc.machine, sc.threads, sc.node_threads, sc.ranks_per_node, tuple(variants))
        got = batches.setdefault(key, ([], [], variants))
        got[0].append(i)
        got[1].append(sc)
    planned = []
    needs: dict[str, tuple[Machine, list]] = {}
    for index, scenarios, variants in batches.values():
        sc = scenarios[0]
        ops = SCALAR
        if len(scenarios) > 1:
            from autotune.model.batch import NUMPY
            ops = NUMPY
        batch = Batch(session.layout(sc.ivp, sc.method, variants), scenarios, ops)
        needs.setdefault(sc.machine.path, (sc.machine, []))[1].extend(place(batch))
        planned.append((index, batch))
    results, incore, ran = {}, {}, 0
    sweeps = {id(batch): plan_sweeps(batch.layout, batch.first.ivp, batch.first.method, batch.first.machine, store,
                                     memory_units(batch.placed)) for _, batch in planned}
    with ExitStack() as solvers:
        building = {}
        for machine, mine in needs.values():
            parts = [part for part, _ in mine]
            with Builds(parts, machine, store, jobs) as builds:      # built while the analyses run
                got, n = ensure_ecm(mine, machine, store, progress, jobs)
                # the solvers whose sweeps are measured build on the cores the in-core timing
                # leaves (it runs on one), then on all
                building[machine.path] = start_builds(
                    [p for _, b in planned if b.first.machine.path == machine.path and (p := sweeps[id(b)])],
                    machine, 1 if builds.started else None)
                if building[machine.path] is not None:
                    solvers.enter_context(building[machine.path])
                records = ensure_incore(parts, machine, store, progress, jobs, builds)
                if building[machine.path] is not None:
                    building[machine.path].widen()
            results[machine.path] = apply_incore(got, records, machine)
            incore[machine.path] = incore_by_part(mine, results[machine.path])
            ran += n
        measured = {}
        for _, batch in planned:
            sc, plan = batch.first, sweeps[id(batch)]
            measured[id(batch)] = {} if plan is None else finish_sweeps(
                plan, batch.layout, sc.ivp, sc.machine, store, progress, building.get(sc.machine.path))
    out: list[RankResult | None] = [None] * len(items)
    for index, batch in planned:
        sc = batch.first
        priced = price(batch, result_source(sc.machine, results[sc.machine.path]), session, measured[id(batch)])
        for i, rows in zip(index, rank_priced(priced, rule, detail)):
            sc, _, excluded = items[i]
            out[i] = RankResult(sc, rule, excluded=excluded, analyses_run=ran, failures=rows.failures(),
                                bound=priced.bounds[rows.index], source=rows, incore=incore[sc.machine.path])
    return out


def result_source(machine: Machine, got: dict[tuple, dict]) -> Callable[[KernelPart, regmod.Regime], dict]:
    """result_of(part, regime) for pricing: the stored ECM result.  The machine's learned factors
    (model.learned) are applied by the pricing, after the code's own changes to the analysis
    (streaming stores, the tile); here only checked against the installed kerncraft."""
    learned = machine.learned
    if learned is not None:
        installed = package_version("kerncraft")
        if learned.kerncraft != installed:
            raise InputError(f"{machine.path}: field 'cluster.learned': fitted on kerncraft {learned.kerncraft}'s "
                             f"analyses, and kerncraft {installed} is installed: fit again with `autotune "
                             f"calibrate --machine {machine.name} --from-runs`, or predict without it (--model ecm)")
    return lambda part, reg: got[(part.code, reg.data, reg.layer)]


def require_predictions(results: list[RankResult]) -> None:
    """Raise ToolError where a scenario has no prediction at all (every variant needs a kernel
    part whose analysis failed), naming the cause of the first such scenario: a rank that
    cannot predict must not pass for one.  Variants that failed beside predicted ones are left
    to the results (listed last)."""
    missing = [r for r in results if not r.predicted_any]
    if not missing:
        return
    first = missing[0]
    sc = first.scenario
    where = f"{sc.ivp.name}, n = {sc.n}, {_count(sc.nodes, 'node')}, {_count(sc.threads, 'thread')}"
    what = f"no variant could be predicted ({where})" if len(results) == 1 else \
        f"{len(missing)} of {len(results)} scenarios have no prediction (the first: {where})"
    raise ToolError(f"kerncraft: {what}{failure_cause(first.failures)}")


def failure_cause(failures: dict[str, dict]) -> str:
    """': N kernel parts failed, the first <part> (<regime>): <error> (log: <path>)', or '' for none."""
    if not failures:
        return ""
    part, info = next(iter(failures.items()))
    log = f" (log: {info['log']})" if info.get("log") else ""
    count = f"{len(failures)} kernel parts failed, the first " if len(failures) > 1 else "kernel part "
    return f": {count}{part} ({info.get('regime')}): {info.get('error')}{log}"


def _count(k: int, what: str) -> str:
    return f"{k} {what}" if k == 1 else f"{k} {what}s"

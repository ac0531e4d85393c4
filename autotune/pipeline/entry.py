"""The one door: one function per command over request objects (autotune.request), what the
command line and the Python API both call, and the only module of the pipeline they import
(docs/design.md#one-door).  Each returns a typed result (autotune.results) and renders nothing."""
from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from autotune.errors import InputError, ToolError
from autotune.model.preselect import Rule
from autotune.progress import SILENT, Progress
from autotune.pipeline.predict import failure_cause, rank_scenario, require_predictions
from autotune.request.scenario import ScenarioRequest
from autotune.results.rank import ExplainResult, RankResult
from autotune.pipeline.applicable import applicable_pool, control_terms, why_excluded, window_of
from autotune.specs.exclusion import Exclusions
from autotune.specs.scenario import Scenario, scenario_spaces
from autotune.specs.variants import Variant, parse_variant
from autotune.storage.store import Store

if TYPE_CHECKING:       # each command imports what only it needs when it runs
    from pathlib import Path

    from autotune.request.calibrate import CalibrateRequest
    from autotune.request.commands import RankRequest
    from autotune.request.generate import GenerateRequest
    from autotune.request.machinefile import LearnRequest, NewMachineRequest
    from autotune.request.plan import PlanRequest, TunePlanRequest
    from autotune.request.run import RunOptions
    from autotune.request.selection import Sample
    from autotune.results.rankset import RankSet
    from autotune.results.scale import ScaleResult
    from autotune.results.sweep import SweepResult
    from autotune.results.tune import TuneResult
    from autotune.results.online import OnlineResult



def _require_applicable(sc: Scenario, named: list[Variant], excluded: Exclusions, field: str) -> None:
    for v in named:
        why = why_excluded(sc, excluded, v)
        if why:
            raise InputError(f"{v.name} with n = {sc.n} and {sc.nodes} nodes: {why}", field=field)


def rank(req: ScenarioRequest, rule: Rule, store: Store, progress: Progress = SILENT,
         jobs: int | None = None, selected_only: bool = False) -> RankResult | RankSet | SweepResult:
    """One scenario ranked; each shipped IVP ranked (ivp 'all', one value of the others); or a
    sweep (lists or ranges in ivp, n, nodes or threads; selected_only: its rows of the
    pre-selected variants only)."""
    spec = req.sweep_spec()
    if spec.mix:                    # nodes of several kinds (docs/method.md "Mixed allocations")
        from autotune.pipeline.mixed import rank_mixed
        result = rank_mixed(req.mixed(), rule, store, progress, jobs, spec.comm, spec.variant_filter)
        if result.best is None:
            raise ToolError(f"kerncraft: no variant could be predicted on {req.mixed().label}")
        return result
    if spec.each_ivp or spec.is_sweep:
        from autotune.pipeline.sweep import rank_each_ivp, run_sweep
        if spec.each_ivp:
            return rank_each_ivp(spec, rule, store, progress, jobs)
        return run_sweep(spec, rule, store, progress, jobs, selected_only)
    sc = req.scenario()
    variants, excluded = applicable_pool(sc, spec.comm, spec.variant_filter)
    schemes = [e for e in excluded.schemes() if not e.where]    # (one a way of storing the IVP runs: it is asked)
    if spec.comm and schemes:
        raise InputError(f"{schemes[0].value} with n = {sc.n} and {sc.nodes} nodes: {schemes[0].why}", field="comm")
    result = rank_scenario(sc, variants, rule, store, excluded, progress, jobs)
    require_predictions([result])
    return result


def explain(req: ScenarioRequest, variant: str, rule: Rule, store: Store, progress: Progress = SILENT,
            jobs: int | None = None) -> ExplainResult:
    if req.sweep_spec().mix:          # each kind's share and breakdown (docs/method.md "Mixed allocations")
        from autotune.pipeline.mixed import explain_mixed
        msc = req.mixed()
        kind = msc.rank_scenario(msc.kinds[0], msc.even()[0])
        return explain_mixed(msc, parse_variant(variant, scenario_spaces(kind)), rule, store, progress, jobs)
    sc = req.scenario()
    v = parse_variant(variant, scenario_spaces(sc))
    variants, excluded = applicable_pool(sc)
    _require_applicable(sc, [v], excluded, "variant")
    ranked = rank_scenario(sc, variants, rule, store, excluded, progress, jobs)
    require_predictions([ranked])
    res = ranked.explain(v.name)
    res.window = window_of(sc, v)
    res.control = control_terms(ranked.scenario, v)     # at the rejections the ranking priced
    if sc.machine.learned:      # each part's time by the ECM model alone beside it
        alone = replace(sc, machine=replace(sc.machine, learned=None))
        res.ecm = rank_scenario(alone, [v], rule, store, excluded, progress, jobs)
    if res.predicted_s is None:
        failed = {part: ranked.failures[part] for part in res.result.failed_parts if part in ranked.failures}
        raise ToolError(f"kerncraft: {v.name} cannot be predicted{failure_cause(failed)}")
    return res


def scale(req: ScenarioRequest, rule: str, store: Store, progress: Progress = SILENT,
          jobs: int | None = None) -> ScaleResult:
    from autotune.model.scaling import parse_rule
    from autotune.pipeline.sweep import run_scale
    from autotune.request.defaults import SCALE_NODES
    try:
        parsed = parse_rule(rule)
    except ValueError as e:
        raise InputError(f"{rule}: {e}", field="rule") from None
    from autotune.request.mixed import is_mix_sweep
    if is_mix_sweep(req.nodes):       # node counts of several kinds: each allocation with its splits
        from autotune.pipeline.mixedscale import scale_mixed
        from autotune.request.selection import selection
        return scale_mixed(req, selection(), store, progress, jobs)
    if req.nodes is None:           # a study over node counts: the same default for both front ends
        req = ScenarioRequest.of(req, nodes=SCALE_NODES)
    return run_scale(req.sweep_spec(), parsed, store, progress, jobs)


def tune(req: ScenarioRequest, rule: Rule, run: RunOptions, store: Store, progress: Progress = SILENT,
         variants: list[str] | None = None, jobs: int | None = None,
         sample: Sample | None = None, baseline: bool = False) -> TuneResult | OnlineResult:
    """Build and run variants: the named ones, else those the rule selects (Rule('all'): every one);
    sample (request.selection.sample_of): also a random draw of the others, to check the selection;
    baseline: the paper's forms too.  run.online: one solver carries the chosen variants and picks
    among them while it runs (pipeline.online): an OnlineResult."""
    from autotune.pipeline.tune import tune as run_tune
    if req.sweep_spec().mix:        # one world over nodes of several kinds, at the model's split and the even one
        from autotune.pipeline.mixedtune import tune_mixed
        if sample or baseline:
            raise InputError(": not with nodes of several kinds (the even split is run beside each variant's)",
                             field="sample" if sample else "baseline")
        if run.online:
            from autotune.pipeline.mixedonline import tune_online_mixed
            return tune_online_mixed(req.mixed(), rule, run, store, progress, variants, jobs)
        return tune_mixed(req.mixed(), rule, run, store, progress, variants, jobs)
    sc = req.scenario()
    applicable, excluded = applicable_pool(sc, select=req.sweep_spec().variant_filter)
    named = [parse_variant(x.strip(), scenario_spaces(sc), "variants") for x in variants] if variants else []
    _require_applicable(sc, named, excluded, "variants")
    kept = {v.name for v in applicable}
    for v in named:
        if v.name not in kept:
            raise InputError(f"{v.name}: not among the variants --variant-filter keeps", field="variants")
    plan = run.plan(run.h if run.h is not None else sc.ivp.default_step(sc.n), sc.machine.isa_flags)
    ranked = rank_scenario(sc, applicable, rule, store, excluded, progress, jobs)
    chosen = named or [r.variant for r in ranked.ordered if r.variant.name in ranked.preselected]
    if run.online:
        from autotune.pipeline.online import tune_online
        return tune_online(ranked, chosen, plan, store, progress, run.recheck)
    return run_tune(ranked, chosen, plan, store, progress, sample=sample, baseline=baseline)


def generate_online(req: GenerateRequest, store: Store, progress: Progress = SILENT, jobs: int | None = None):
    """generate --online: one solver of the variants req.online pre-selects in the scenario (at
    most codegen.online.MAX_CANDIDATES), written to out/online.c (pipeline.online)."""
    from autotune.pipeline.online import generate_online as write
    from autotune.storage.paths import check_output_path
    check_output_path(req.out, "out", "folder")
    sc = req.scenario.scenario()
    applicable, excluded = applicable_pool(sc, select=req.scenario.sweep_spec().variant_filter)
    ranked = rank_scenario(sc, applicable, req.online, store, excluded, progress, jobs)
    return write(ranked, req.out, progress, req.recheck)


def learn(req: LearnRequest, store: Store, progress: Progress = SILENT):
    """calibrate --from-runs: the node model fitted to the machine's stored runs, cross-validated,
    and (unless dry_run) written into its machine file (or `out`)."""
    from pathlib import Path

    from autotune.pipeline.learn import learn as fit_runs, write_learned
    from autotune.specs.machine import load_machine
    from autotune.storage.paths import check_output_path
    machine = load_machine(req.machine, "ecm")
    target = Path(req.out) if req.out else Path(machine.path)
    if not req.dry_run:
        check_output_path(target, "out", "machine")
    res, learned = fit_runs(machine, store, progress, req.folds, req.holdout)
    res.dry_run = req.dry_run
    if learned is not None and not req.dry_run:
        write_learned(Path(machine.path), target, learned, res)
        res.machine_file = str(target)
    return res


def check_jobs(jobs) -> None:
    """--jobs mpi without MPI workers: said before any work (tools.ecm_runner)."""
    from autotune.tools.ecm_runner import check_jobs as check
    check(jobs)


def sweep(req: RankRequest, store: Store, progress: Progress = SILENT, jobs: int | None = None) -> SweepResult:
    """Many scenarios at once, in long format (rank's sweep, whatever the request asks)."""
    from autotune.pipeline.sweep import run_sweep
    return run_sweep(req.scenario.sweep_spec(), req.rule, store, progress, jobs, req.selected_only)


def generate(req: GenerateRequest):
    """generate: every variant's kernel parts and solvers written to req.out (a GenerateResult)."""
    from autotune.pipeline.generate import generate as write
    from autotune.storage.paths import check_output_path
    check_output_path(req.out, "out", "folder")
    spec = req.scenario.sweep_spec()
    spec.one_each("ivp", "n")
    return write(spec.ivps[0], spec.method, req.out, spec.ns[0] if spec.ns else None, spec.machine, req.likwid,
                 spec.control)


def plan(req: PlanRequest, store: Store, progress: Progress = SILENT, jobs: int | None = None):
    """plan: the scenarios file's pre-selections, written to req.out (a PlanResult)."""
    from autotune.pipeline.plan import make_plan, write_plan
    from autotune.storage.paths import check_output_path
    check_output_path(req.out, "out", "plan")
    res = make_plan(req.scenarios, store, progress, jobs)
    write_plan(res, req.out)
    return res


def tune_plan(req: TunePlanRequest, store_path: Path | None, progress: Progress = SILENT, jobs: int | None = None):
    """tune --plan: the plan run here, its jobs submitted or collected, or their status; the
    store is the plan's jobs' where it was submitted (store_path: None, or that one)."""
    from autotune.pipeline.submit import tune_plan as run
    return run(req, store_path, progress, jobs)


def ingest(path: Path, store: Store, progress: Progress = SILENT) -> OnlineResult:
    """tune --ingest: an online solver's JSON into the store, each candidate's trial as its runs."""
    from autotune.pipeline.online import ingest as take
    return take(path, store, progress)


def calibrate(req: CalibrateRequest, store: Store, progress: Progress = SILENT):
    """calibrate: the MPI micro-benchmarks run, the communication model fitted and written."""
    from autotune.pipeline.calibrate import calibrate as run
    plan, target = req.resolve()
    return run(plan, store, target, progress, req.fresh, req.raw)


def new_machine(req: NewMachineRequest, progress: Progress = SILENT):
    """calibrate --node or --from-kerncraft: a new cluster machine file (a HostMachineResult)."""
    from autotune.pipeline.hostmachine import import_kerncraft, new_machine_target, write_host_machine
    from autotune.storage.paths import check_output_path
    name, target = new_machine_target(req.name, req.out)
    if not req.dry_run:
        check_output_path(target, "out", "machine")
    if req.from_kerncraft is not None:
        return import_kerncraft(req.from_kerncraft, target, name, req.nodes)
    return write_host_machine(target, name, progress, req.nodes, req.uarch, req.min_seconds, req.dry_run, req.port_model)


def identify_cpu(cpuinfo: str | None = None, uarch: str | None = None, port_model=None):
    """The microarchitecture of the CPU cpuinfo describes (tools.cpuprobe.identify_cpu)."""
    from autotune.tools.cpuprobe import identify_cpu as identify
    return identify(cpuinfo, uarch, port_model)


def schema(name: str) -> str:
    """The JSON Schema document of a kind of data file (pipeline.schemas: machine, ivp, method, plan)."""
    from autotune.pipeline.schemas import schema_text
    return schema_text(name)

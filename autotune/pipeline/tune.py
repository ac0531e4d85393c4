"""`autotune tune`: build and run chosen variants for real, compare with the predictions.

Three steps, each small: the selection (the chosen variants, a random sample of the others,
what the store holds already), the measurement (a runner of pipeline.runners builds each
variant, then runs the repetitions round-robin, and every result goes to the store as soon as
it is known), and the summary (compare.py's comparison, the floor, the paper's best form).
Every run is stored with the machine, compiler, flags, versions and date; a failing variant
(not generated, compile error, crash, timeout) is reported without losing the others.
"""
from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field

from autotune.arith import ordered_sum
from autotune.errors import InputError, ToolError
from autotune.model.check import check_sample, draw_sample
from autotune.model.compare import compare
from autotune.progress import Progress
from autotune.pipeline.incore import host_is
from autotune.pipeline.controlrate import add_counts
from autotune.pipeline.runners import Runner, make_runner, run_key, run_key_of, runner_for
from autotune.pipeline.tunerecord import partial_of, partial_record, row_of_stored, stored_record
from autotune.pipeline.tunerounds import RoundLog, run_rounds
from autotune.pipeline.tunestate import Probe, reference_of
from autotune.specs.runstate import Reference
from autotune.pipeline.tunesummary import adjust_row, summarize
from autotune.request.run import RunPlan
from autotune.request.selection import Sample
from autotune.results.rank import RankResult
from autotune.specs.variants import Variant
from autotune.results.tune import TuneCheck, TuneResult, TuneRow, TuneSummary
from autotune.specs.stepvalues import step_form
from autotune.storage.store import Store
from autotune.tools.toolchain import compiler_version, package_version

__all__ = ["tune", "run_key", "run_key_of"]


def _phases(r, method, phase_runs: dict[str, list[float]]) -> dict[str, dict]:
    """Predicted and measured (median over the runs, mean per step in a run) seconds per phase,
    and per timed sweep (a fused variant's sweeps, each against the parts it runs)."""
    pred = r.predicted_phases(step_form(method, r.variant).timers)
    out = {}
    for ph, v in phase_runs.items():
        measured = statistics.median(v) if v else None
        if ph in pred or measured:      # a phase this variant does not have (the copy of pred=direct)
            out[ph] = {"predicted_s": pred.get(ph), "measured_s": measured}
    return out


def _partial_key(sc, name: str, plan: RunPlan) -> str:
    """Store key of the repetitions of an unfinished measurement (same scenario, variant, flags and
    run length: steps, warm-up, step size)."""
    return run_key(sc, name, plan.flags) + f"/partial/{plan.steps}/{plan.warmup}/{plan.h!r}"


@dataclass
class Selection:
    """What tune measures: a row per chosen (and sampled) variant, those still to run, and the
    repetitions a cancelled run left (phase seconds per repetition)."""
    rows: dict[str, TuneRow]
    variants: dict[str, Variant]          # each row's variant, by its name (the store's and the rows' key)
    sampled: list[str]
    pool: list[str]
    todo: list[str]
    phase_runs: dict[str, dict[str, list[float]]] = field(default_factory=dict)


def select(ranked: RankResult, variants: list[Variant], plan: RunPlan, store: Store, progress: Progress,
           resume: bool, sample: Sample | None, run_missing: bool, baseline: bool = False) -> Selection:
    sc = ranked.scenario
    by_name = {r.variant.name: r for r in ranked.ordered}
    chosen = [v.name for v in variants]
    pool = [r.variant.name for r in ranked.ordered if r.prediction]
    sampled = draw_sample(pool, chosen, sample.size, sample.seed) if sample else []
    if sample:
        progress.say(f"check: {len(sampled)} variants drawn at random (seed {sample.seed}) from the "
                 f"{len(set(pool) - set(chosen))} the pre-selection leaves out")
    # the paper's forms as the baseline: drawn after the sample, so the sample's draw is the same
    taken = set(chosen) | set(sampled)
    paper = [name for name in pool if by_name[name].variant.is_paper_form and name not in taken] if baseline else []
    if paper:
        progress.say(f"baseline: {len(paper)} of the paper's forms run beside them")
    chosen = list(chosen) + sampled + paper
    stored = {}
    for name in chosen if resume else []:
        prev = [r for r in _stored(store, sc, name, plan) if r[0].measured_s is not None]
        if prev:
            stored[name] = prev[-1]
    rows = {name: TuneRow(name, by_name[name].prediction.total_s if by_name[name].prediction else None,
                          preselected=name in ranked.preselected, sampled=name in sampled, baseline=name in paper)
            for name in chosen}
    for name, (old, run) in stored.items():
        row = rows[name]
        row.measured_s, row.runs_s, row.phases = old.measured_s, old.runs_s, old.phases
        row.runs_state, row.reused, row.measured_on = old.runs_state or [], True, run.get("date")
        row.runs_steal_pct, row.runs_wall_over_cpu = list(old.runs_steal_pct), list(old.runs_wall_over_cpu)
    if resume:
        progress.say(f"{len(stored)} of {len(chosen)} variants measured before, {len(chosen) - len(stored)} to run")
    todo = [name for name in chosen if name not in stored] if run_missing else []
    for name in set(chosen) - set(stored) - set(todo):
        last = _stored(store, sc, name, plan)
        rows[name].error = (last[-1][0].error if last else None) or "not measured"
    sel = Selection(rows, {name: by_name[name].variant for name in chosen}, sampled, pool, todo,
                    {name: {} for name in todo})
    for name in todo if resume else []:
        partials = store.get_runs(_partial_key(sc, name, plan))
        if partials:
            row = rows[name]
            row.runs_s, sel.phase_runs[name], row.runs_state, row.runs_steal_pct, row.runs_wall_over_cpu = \
                partial_of(partials[-1], f"the store's unfinished repetitions of {name}")
            progress.say(f"{name}: {len(row.runs_s)} of {plan.reps} repetitions measured before")
    return sel


def _stored(store: Store, sc, name: str, plan: RunPlan) -> list[tuple[TuneRow, dict]]:
    """The store's runs of the variant (same scenario and flags), oldest first: (row, the run's fields)."""
    return [row_of_stored(r, f"the store's run of {name}") for r in store.get_runs(run_key(sc, name, plan.flags))]


def measure(ranked: RankResult, sel: Selection, runner: Runner, plan: RunPlan, store: Store,
            progress: Progress) -> RoundLog:
    """Prepare every variant to run, then run them in rounds (pipeline.tunerounds: variant 1, 2,
    ..., 1, 2, ..., with the machine's reference kernels between the rounds): a slow drift of a
    shared machine then touches every variant alike instead of the ones that happened to run
    during it, and each run records the state it ran in.  Every repetition is stored as it ends,
    so a resumed run (a batch job cancelled and submitted again) runs only those still missing."""
    sc, rows, todo = ranked.scenario, sel.rows, sel.todo
    by_name = {r.variant.name: r for r in ranked.ordered}
    runner.check(todo)
    placed: dict[str, dict] = {}       # where each variant's last run ran (the solver's report)
    ref = reference_of(ranked)

    def finish(name: str) -> None:
        """The variant's measurement, or its failure, to the store as soon as it is known."""
        row = rows[name]
        if row.error is None and row.runs_s:
            row.measured_s = statistics.median(row.runs_s)
            row.phases = _phases(by_name[name], ranked.scenario.method, sel.phase_runs[name])
            adjust_row(ranked, row, ref, store)
        if not runner.stores:
            return
        if row.control and not row.reused:    # the rejections the ranking prices (pipeline.controlrate)
            add_counts(sc, store, row.control["timed_accepted"], row.control["timed_rejected"])
        store.put_run(run_key(sc, name, plan.flags), sc.machine.name, sc.ivp.name, name, row.measured_s, stored_record(
            row, dict(method=sc.method.name, model=ranked.model, n=sc.n, nodes=sc.nodes, threads=sc.threads,
                      steps=plan.steps, warmup=plan.warmup, h=plan.h, flags=list(plan.flags),
                      compiler=compiler_version(runner.compiler) if runner.compiler else None,
                      kerncraft=package_version("kerncraft"), date=time.strftime("%Y-%m-%d %H:%M:%S %Z"),
                      placement=placed.get(name))))

    def partial(name: str) -> None:
        """A job cancelled now keeps this variant's repetitions so far."""
        if runner.stores:
            store.put_run(_partial_key(sc, name, plan), sc.machine.name, sc.ivp.name, name, None,
                          partial_record(rows[name], sel.phase_runs[name]))

    ready = []
    for i, name in enumerate(todo, 1):
        progress.say(f"[{i}/{len(todo)}] {name}: " + ("build" if runner.kind != "replay" else "replay"))
        try:
            runner.prepare(sel.variants[name])
            ready.append(name)
        except (InputError, ToolError) as e:
            rows[name].error = str(e)
            progress.say(f"[{i}/{len(todo)}] {name}: failed: {e}")
            finish(name)
    probe = _probe(ranked, ref, runner, progress) if ready else None
    try:
        return run_rounds(ready, rows, sel.phase_runs, runner, plan, progress, probe, finish, partial, placed)
    finally:
        if probe:
            probe.close()


def _probe(ranked: RankResult, ref: Reference | None, runner: Runner,
           progress: Progress) -> Probe | None:
    """The reference kernels for this run, where the machine file has the figures to compare them
    with and the runner can run them where the solvers run (None, said, where not)."""
    prefix = runner.probe_prefix()
    if prefix is None:
        return None
    machine = ranked.scenario.machine
    if not (machine.incore_measured and host_is(machine)):       # here, or the job's first node
        progress.say(f"machine state: not measured (the machine file {machine.name} was not made on this host's CPU: "
                 f"its figures are no reference for what this host measures): deviations are raw only")
        return None
    if ref is None:
        progress.say(f"machine state: not measured (the machine file {ranked.scenario.machine.name} has no "
                 f"triad in memory at {ranked.scenario.node_threads} cores to compare with): deviations are raw only")
        return None
    try:
        return Probe(ref, prefix)
    except ToolError as e:
        progress.say(f"machine state: not measured ({e}): deviations are raw only")
        return None


def tune(ranked: RankResult, chosen: list[Variant], plan: RunPlan, store: Store,
         progress: Progress, resume: bool = False, sample: Sample | None = None,
         run_missing: bool = True, runner: str | None = None, baseline: bool = False) -> TuneResult:
    """Measure the chosen variants (and `sample` more drawn from the others, to check the chosen
    against them) and compare with their predictions.  resume: a variant the store has measured
    (same scenario, variant and flags) is reported from there, not run again.  runner: a kind of
    pipeline.runners.RUNNERS (None: srun where the launcher is srun, else local); "replay" runs
    nothing and reports the store's repetitions.  baseline: the paper's forms run too (those not
    chosen or sampled already), the yardstick of the fast forms."""
    kind = runner or runner_for(plan)
    sel = select(ranked, chosen, plan, store, progress, resume and kind != "replay", sample, run_missing,
                 baseline)
    t0 = time.perf_counter()
    log = measure(ranked, sel, make_runner(kind, ranked.scenario, plan, store, progress), plan, store, progress)
    return summarize(ranked, sel, plan, sample, store, log, time.perf_counter() - t0)

"""tune over a mixed allocation (docs/usage.md "Mixed allocations"): the chosen variants built for
uneven blocks and run at the model's split and at the even split, round-robin, one MPI world of a
group of ranks per kind; predicted against measured, the step and each kind's own time."""
from __future__ import annotations

from autotune.errors import InputError, ToolError
from autotune.model.preselect import Rule
from autotune.pipeline.mixed import rank_mixed
from autotune.progress import SILENT, Progress
from autotune.request.run import RunOptions
from autotune.results.mixed import MixedRankResult, MixedRow
from autotune.results.mixedtune import MixedTuneResult, SplitRun
from autotune.specs.mixed import MixedScenario
from autotune.storage.store import Store


def _chosen(ranking: MixedRankResult, named: list[str] | None) -> list[MixedRow]:
    if not named:
        return [r for r in ranking.ordered if r.variant.name in ranking.preselected]
    from autotune.specs.scenario import scenario_spaces
    from autotune.specs.variants import parse_variant
    sc = ranking.scenario
    spaces = scenario_spaces(sc.rank_scenario(sc.kinds[0], sc.even()[0]))
    out = []
    for given in named:
        name = parse_variant(given, spaces, "variants").name
        try:
            out.append(ranking.row(name))
        except KeyError:
            raise InputError(f"{name}: not a variant that can run in {ranking.scenario.label}",
                             field="variants") from None
    return out


def _flags(msc: MixedScenario, run: RunOptions) -> tuple[str, ...]:
    """One build runs on every kind: the kinds' instruction sets must agree where no flags are given."""
    sets = {k.machine.isa_flags for k in msc.kinds}
    if run.flags is None and len(sets) > 1:
        raise InputError(f": the kinds' machine files name different instruction sets "
                         f"({'; '.join(' '.join(s) or '-march=native' for s in sorted(sets))}); give the flags "
                         f"of one build that runs on all", field="flags")
    return run.plan(1.0, next(iter(sets))).flags


def tune_mixed(msc: MixedScenario, rule: Rule, run: RunOptions, store: Store, progress: Progress = SILENT,
               named: list[str] | None = None, jobs: int | None = None) -> MixedTuneResult:
    """Rank the allocation, build the chosen variants for uneven blocks, and run each at its
    split and at the even split (reps rounds, every configuration once a round), each run one
    MPI world of the kinds' groups."""
    from autotune.codegen.solver import solver_source
    from autotune.tools import build as buildmod
    from autotune.tools.mixedrun import run_split
    if run.reps == "auto" or run.online or run.replay:
        raise InputError(": a mixed allocation runs a fixed number of repetitions, neither racing, "
                         "--online nor --replay", field="reps" if run.reps == "auto" else
                         "online" if run.online else "replay")
    flags = _flags(msc, run)
    ranking = rank_mixed(msc, rule, store, progress, jobs)
    rows = _chosen(ranking, named)
    plan = run.plan(run.h if run.h is not None else msc.ivp.default_step(msc.n))
    groups = [(k.nodes, k.threads) for k in msc.kinds]
    even = msc.even()
    configs = []
    for r in rows:
        if r.split is None:
            continue
        progress.say(f"building {r.variant.name} for uneven blocks")
        exe = buildmod.build(solver_source(msc.ivp, msc.method, r.variant, msc.n, msc.kinds[0].machine,
                                           control=msc.control, uneven=True), flags)
        which = "given" if msc.given else "model"
        configs.append(SplitRun(r, which, r.split, exe))
        if tuple(r.split) != even:
            configs.append(SplitRun(r, "even", even, exe))
    size = msc.ivp.size_value(msc.n)
    total = len(configs) * plan.reps
    done = 0
    for rep in range(plan.reps):
        for c in configs:          # round-robin: the host's drift falls on every configuration alike
            done += 1
            try:
                out = run_split(c.exe, plan.launcher, groups, c.split, msc.n, size, plan.steps, plan.h,
                                plan.warmup, plan.timeout)
                c.runs.append(out)
                progress.say(f"run {done}/{total}: {c.row.variant.name} at the {c.which} split: "
                             f"{out['median_step_s']:.4e} s/step")
            except ToolError as e:
                c.errors.append(str(e))
                progress.say(f"run {done}/{total}: {c.row.variant.name} at the {c.which} split failed: {e}")
    return MixedTuneResult(ranking, configs, plan.steps, plan.warmup, plan.reps)


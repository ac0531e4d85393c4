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


def mixed_run_key(msc: MixedScenario, name: str, flags, split: tuple[int, ...]) -> str:
    """The store's key of a variant's runs at one split of the allocation (its kinds' machines,
    nodes and threads; the flags; the tolerances where controlled)."""
    import hashlib
    import json
    kinds = [[k.name, k.machine.name, k.nodes, k.threads] for k in msc.kinds]
    control = msc.control.tolerances() if msc.control else None
    return hashlib.sha256(json.dumps(["mixed", kinds, msc.ivp.name, msc.method.name, msc.n, name, list(flags),
                                      list(split), control]).encode()).hexdigest()[:24]


def mixed_machine(msc: MixedScenario) -> str:
    """The name its runs are stored under: never one kind's machine (calibrate --from-runs fits a
    machine to its own runs)."""
    return "mixed:" + ",".join(f"{k.name}={k.machine.name}:{k.nodes}" for k in msc.kinds)


def tune_mixed(msc: MixedScenario, rule: Rule, run: RunOptions, store: Store, progress: Progress = SILENT,
               named: list[str] | None = None, jobs: int | None = None, resume: bool = False,
               run_missing: bool = True, splits: dict[str, tuple[int, ...]] | None = None) -> MixedTuneResult:
    """Rank the allocation, build the chosen variants for uneven blocks, and run each at its
    split (splits: a plan's, by variant; else the model's) and at the even split (reps rounds,
    every configuration once a round), each run one MPI world of the kinds' groups; every run
    stored.  resume: the runs the store holds count (tune --plan: a job that ran part of them is
    not run again from the start); run_missing False: only those (a submitted plan's scenario
    collected: its job runs the rest)."""
    from autotune.tools.launcher import mpmd_argv
    if run.reps == "auto" or run.online or run.replay:
        raise InputError(": a mixed allocation runs a fixed number of repetitions, neither racing, "
                         "--online nor --replay", field="reps" if run.reps == "auto" else
                         "online" if run.online else "replay")
    flags = _flags(msc, run)
    plan = run.plan(run.h if run.h is not None else msc.ivp.default_step(msc.n))
    groups = [(k.nodes, k.threads) for k in msc.kinds]
    mpmd_argv(plan.launcher, groups, [])          # a launcher without an MPMD form: refused before any work
    ranking = rank_mixed(msc, rule, store, progress, jobs)
    even, which = msc.even(), "given" if msc.given else "model"
    configs = []
    for r in _chosen(ranking, named):
        split = (splits or {}).get(r.variant.name) or r.split
        if split is not None:
            configs += [SplitRun(r, which, tuple(split))] + ([SplitRun(r, "even", even)] * (tuple(split) != even))
    for c in configs:
        c.key = mixed_run_key(msc, c.row.variant.name, flags, c.split)
        if resume or not run_missing:
            c.runs = [r for r in store.get_runs(c.key) if r.get("median_step_s") is not None][:plan.reps]
            c.reused = len(c.runs)
    if run_missing:
        _run_rounds(msc, configs, plan, flags, groups, store, progress)
    return MixedTuneResult(ranking, configs, plan.steps, plan.warmup, plan.reps)


def _run_rounds(msc: MixedScenario, configs: list[SplitRun], plan, flags, groups, store: Store,
                progress: Progress) -> None:
    """The configurations' missing repetitions, round-robin (the host's drift falls on every
    configuration alike), each variant built once for uneven blocks; every run stored."""
    from autotune.codegen.solver import solver_source
    from autotune.tools import build as buildmod
    from autotune.tools.mixedrun import run_split
    total, done, exes = sum(max(0, plan.reps - len(c.runs)) for c in configs), 0, {}
    size = msc.ivp.size_value(msc.n)
    for rep in range(plan.reps):
        for c in configs:
            if len(c.runs) > rep:
                continue
            done += 1
            name = c.row.variant.name
            try:
                if name not in exes:
                    progress.say(f"building {name} for uneven blocks")
                    exes[name] = buildmod.build(solver_source(msc.ivp, msc.method, c.row.variant, msc.n,
                                                              msc.kinds[0].machine, control=msc.control,
                                                              uneven=True), flags)
                c.exe = exes[name]
                out = run_split(c.exe, plan.launcher, groups, c.split, msc.n, size, plan.steps, plan.h,
                                plan.warmup, plan.timeout)
            except ToolError as e:
                c.errors.append(str(e))
                progress.say(f"run {done}/{total}: {name} at the {c.which} split failed: {e}")
                continue
            c.runs.append(out)
            store.put_run(c.key, mixed_machine(msc), msc.ivp.name, name, out["median_step_s"],
                          dict(out, split=list(c.split), which=c.which, nodes=msc.label))
            progress.say(f"run {done}/{total}: {name} at the {c.which} split: {out['median_step_s']:.4e} s/step")

"""`autotune tune`: build and run chosen variants for real, compare with the predictions.

The edge that runs compilers and the launcher; the comparison itself is
compare.py.  Every run goes into the store with the machine, compiler, flags,
versions and date, and a failing variant (not generated, compile error,
crash, timeout) is reported without losing the others.
"""
from __future__ import annotations

import hashlib
import json
import statistics
import time
from typing import Callable

from autotune.arith import ordered_sum
from autotune.tools import build as buildmod
from autotune.model.check import check_sample, draw_sample
from autotune.model.compare import compare
from autotune.errors import InputError, ToolError
from autotune.request.run import RunPlan
from autotune.request.selection import Sample
from autotune.results.rank import RankResult
from autotune.results.tune import TuneCheck, TuneResult, TuneRow, TuneSummary
from autotune.codegen.solver import solver_source
from autotune.storage.store import Store
from autotune.tools.toolchain import compiler_version, package_version


def _phases(r, phase_runs: dict[str, list[float]]) -> dict[str, dict]:
    """Predicted and measured (median over the runs, mean per step in a run) seconds per phase."""
    pred = r.predicted_phases()
    out = {}
    for ph, v in phase_runs.items():
        measured = statistics.median(v) if v else None
        if ph in pred or measured:      # a phase this variant does not have (the copy of pred=direct)
            out[ph] = {"predicted_s": pred.get(ph), "measured_s": measured}
    return out


def run_key(sc, name: str, flags) -> str:
    """Store key of one variant's measurement in one scenario (a resumed plan skips it)."""
    return run_key_of(sc.machine.name, sc.ivp.name, sc.method.name, sc.n, sc.nodes, sc.threads, name, flags)


def run_key_of(machine: str, ivp: str, method: str, n: int, nodes: int, threads: int, name: str, flags) -> str:
    return hashlib.sha256(json.dumps([machine, ivp, method, n, nodes, threads, name,
                                      list(flags)]).encode()).hexdigest()[:24]


def _stored(store: Store, sc, names: list[str], flags) -> dict[str, dict]:
    """The latest measurement the store holds of each variant (failed runs do not count)."""
    out = {}
    for name in names:
        prev = [r for r in store.get_runs(run_key(sc, name, flags)) if r.get("measured_s") is not None]
        if prev:
            out[name] = prev[-1]
    return out


def _partial_key(sc, name: str, plan: RunPlan) -> str:
    """Store key of the repetitions of an unfinished measurement (same scenario, variant, flags and
    run length: steps, warm-up, step size)."""
    return run_key(sc, name, plan.flags) + f"/partial/{plan.steps}/{plan.warmup}/{plan.h!r}"


def _partial(store: Store, sc, name: str, plan: RunPlan) -> dict | None:
    rows = store.get_runs(_partial_key(sc, name, plan))
    return rows[-1] if rows and len(rows[-1]["runs_s"]) < plan.reps else None


def check_host_isa(plan: RunPlan, machine, progress: Callable[[str], None]) -> None:
    """The solvers are built here with the plan's flags; a CPU that lacks an extension they use
    would die of an illegal instruction.  Where the runs happen on this host (a local launcher,
    or inside a Slurm job) that is an error before anything is built; elsewhere (srun from a
    login node) a warning."""
    import os

    from autotune.specs.isa import isa_part
    from autotune.tools.cpuprobe import host_cpu, missing_on_host
    missing = missing_on_host(plan.flags)
    if not missing:
        return
    msg = (f"the build flags {' '.join(isa_part(plan.flags))} (machine {machine.name}) use "
           f"{', '.join(missing)}, which this host's CPU ({host_cpu().describe()}) lacks: make a machine "
           f"file of this host with `autotune calibrate --node --name NAME`, or give --flags")
    local = not plan.launcher.template.lstrip().startswith("srun") or "SLURM_JOB_ID" in os.environ
    if local:
        raise InputError(msg, field="flags")
    progress(f"warning: {msg}")


def tune(ranked: RankResult, chosen: list[str], plan: RunPlan, store: Store,
         progress: Callable[[str], None], resume: bool = False, sample: Sample | None = None,
         run_missing: bool = True) -> TuneResult:
    """Build every chosen variant, then run the repetitions round-robin (variant 1, 2, ..., 1, 2,
    ...): a slow drift of a shared machine then touches every variant alike instead of the ones
    that happened to run during it.  resume: a variant the store has measured (same scenario,
    variant and flags) is reported from there, not run again.  sample: also run that many
    variants drawn from the other predicted ones, and check the chosen against them.  Every
    repetition but the last is stored as it ends, so a resumed run (a batch job cancelled and
    submitted again) runs only the repetitions still missing."""
    sc = ranked.scenario
    by_name = {r.variant.name: r for r in ranked.ordered}
    pool = [r.variant.name for r in ranked.ordered if r.prediction]
    sampled = draw_sample(pool, chosen, sample.size, sample.seed) if sample else []
    if sample:
        progress(f"check: {len(sampled)} variants drawn at random (seed {sample.seed}) from the "
                 f"{len(set(pool) - set(chosen))} the pre-selection leaves out")
    chosen = list(chosen) + sampled
    stored = _stored(store, sc, chosen, plan.flags) if resume else {}
    rows = {name: {"name": name, "predicted_s": by_name[name].prediction.total_s if by_name[name].prediction else None,
                   "measured_s": None, "runs_s": [], "error": None, "preselected": name in ranked.preselected,
                   "sampled": name in sampled, "reused": False}
            for name in chosen}
    for name, old in stored.items():
        rows[name].update(measured_s=old["measured_s"], runs_s=old.get("runs_s", []), phases=old.get("phases"),
                          reused=True, measured_on=old.get("date"))
    if resume:
        progress(f"{len(stored)} of {len(chosen)} variants measured before, {len(chosen) - len(stored)} to run")
    todo = [name for name in chosen if name not in stored] if run_missing else []
    for name in set(chosen) - set(stored) - set(todo):
        last = store.get_runs(run_key(sc, name, plan.flags))
        rows[name]["error"] = (last[-1].get("error") if last else None) or "not measured"
    phase_runs: dict[str, dict[str, list[float]]] = {name: {} for name in todo}
    for name in todo if resume else []:
        done = _partial(store, sc, name, plan)
        if done:
            rows[name]["runs_s"], phase_runs[name] = done["runs_s"], done["phase_runs"]
            progress(f"{name}: {len(done['runs_s'])} of {plan.reps} repetitions measured before")
    if todo:
        check_host_isa(plan, sc.machine, progress)
    mpicc, exes = None, {}

    def finish(name: str) -> None:
        """The variant's measurement, or its failure, to the store as soon as it is known."""
        row = rows[name]
        if row["error"] is None and row["runs_s"]:
            row["measured_s"] = statistics.median(row["runs_s"])
            row["phases"] = _phases(by_name[name], phase_runs[name])
        store.put_run(run_key(sc, name, plan.flags), sc.machine.name, sc.ivp.name, name, row["measured_s"], dict(
            row, method=sc.method.name, model=ranked.model, n=sc.n, nodes=sc.nodes, threads=sc.threads,
            steps=plan.steps, warmup=plan.warmup,
            h=plan.h, flags=list(plan.flags), compiler=compiler_version(mpicc) if mpicc else None,
            kerncraft=package_version("kerncraft"), date=time.strftime("%Y-%m-%d %H:%M:%S %Z")))

    for i, name in enumerate(todo, 1):
        progress(f"[{i}/{len(todo)}] {name}: build")
        try:
            mpicc = mpicc or buildmod.find_mpicc()
            exes[name] = buildmod.build(solver_source(sc.ivp, sc.method, by_name[name].variant, sc.n, sc.machine),
                                        plan.flags, mpicc)
        except (InputError, ToolError) as e:
            rows[name]["error"] = str(e)
            progress(f"[{i}/{len(todo)}] {name}: failed: {e}")
            finish(name)
    for rep in range(plan.reps):
        for name, exe in list(exes.items()):
            if len(rows[name]["runs_s"]) > rep:         # measured before this run was interrupted
                continue
            progress(f"run {rep + 1}/{plan.reps}: {name} ({plan.steps} steps)")
            try:
                out = buildmod.run(exe, plan.launcher, sc.nodes, sc.threads, sc.n, sc.ivp.size_value(sc.n),
                                   plan.steps, plan.h, plan.warmup, timeout=plan.timeout,
                                   pin=sc.ranks_per_node == 1, nodes=sc.nodes // sc.ranks_per_node)
            except (InputError, ToolError) as e:
                rows[name]["error"] = str(e)
                progress(f"{name}: failed: {e}")
                del exes[name]
                finish(name)
                continue
            rows[name]["runs_s"].append(out["median_step_s"])
            for phase, sec in out.get("phases_s", {}).items():
                phase_runs[name].setdefault(phase, []).append(sec)
            if len(rows[name]["runs_s"]) < plan.reps:   # a job cancelled now keeps this repetition
                store.put_run(_partial_key(sc, name, plan), sc.machine.name, sc.ivp.name, name, None, {
                    "runs_s": rows[name]["runs_s"], "phase_runs": phase_runs[name]})
            else:
                finish(name)
    skipped = [(r.variant.name, r.prediction.total_s) for r in ranked.ordered
               if r.variant.name not in rows and r.prediction]
    rows = list(rows.values())
    summary = TuneSummary(**compare(rows))
    summary.bound_s = ranked.bound_s
    ok = [r for r in rows if r["measured_s"]]
    if ok and ranked.bound_s:
        summary.best_over_bound = min(r["measured_s"] for r in ok) / ranked.bound_s
    paper = [r for r in ok if by_name[r["name"]].variant.is_paper_form]
    if paper:
        best_paper = min(paper, key=lambda r: r["measured_s"])
        summary.best_paper_form = best_paper["name"]
        summary.best_over_paper_form = min(r["measured_s"] for r in ok) / best_paper["measured_s"]
    summary.skipped = len(skipped)
    summary.skipped_predicted_cost_s = ordered_sum(t for _, t in skipped) * (plan.steps * plan.reps)
    if sample:
        summary.check = TuneCheck(**check_sample(rows, len(pool), ranked.rule.describe(), sample.seed))
    return TuneResult(sc.ivp.name, sc.method.name, sc.machine.name, sc.n, sc.nodes, sc.threads, plan.steps,
                      plan.warmup, plan.reps, plan.h, list(plan.flags), ranked.rule.describe(),
                      [TuneRow.of(r) for r in rows], summary, ranked.model)

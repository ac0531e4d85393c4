"""Plans over mixed allocations (docs/usage.md "Plans"): a scenario whose nodes name several kinds
is planned with each variant's split, run by `tune --plan` as one MPI world across its kinds, and
submitted as one Slurm heterogeneous job, a component per kind in its partition (edge: files)."""
from __future__ import annotations

import shlex

from autotune.model.preselect import Rule
from autotune.pipeline.mixed import rank_mixed
from autotune.pipeline.mixedtune import mixed_run_key, tune_mixed
from autotune.progress import Progress
from autotune.request.run import RunOptions, machine_flags
from autotune.request.scenario import ScenarioRequest
from autotune.results.mixedtune import MixedTuneResult
from autotune.results.plan import PlannedScenario, PlannedVariant
from autotune.specs.control import Control
from autotune.specs.ivp import load_ivp
from autotune.specs.loading import absolute_path
from autotune.specs.machine import load_machine
from autotune.specs.method import load_method
from autotune.specs.mixed import Kind, MixedScenario
from autotune.storage.store import Store
from autotune.tools import slurm


def plan_mixed(req: ScenarioRequest, rule: Rule, run: RunOptions, method_path: str, store: Store,
               progress: Progress, jobs: int | None) -> PlannedScenario:
    """One mixed scenario of a scenarios file: its pre-selected variants, each with its split."""
    msc = req.mixed()
    res = rank_mixed(msc, rule, store, progress, jobs)
    chosen = [r for r in res.ordered if r.step_s is not None and r.variant.name in res.preselected]
    rest = [r for r in res.ordered if r.step_s is not None and r.variant.name not in res.preselected]
    cluster = load_machine(req.machine) if req.machine else msc.kinds[0].machine
    threads = ",".join(f"{k.name}:{k.threads}" for k in msc.kinds)
    kinds = [{"kind": k.name, "partition": k.name if k.name in cluster.partitions else None,
              "machine": k.machine.name, "machine_path": _absolute(k.machine.path), "nodes": k.nodes,
              "threads": k.threads} for k in msc.kinds]
    return PlannedScenario(
        f"{msc.ivp.name}/n={msc.n}/nodes={msc.label}/threads={threads}/{cluster.name}", msc.ivp.name,
        _absolute(msc.ivp.path), msc.method.name, cluster.name, _absolute(cluster.path), msc.n, msc.n, msc.ranks,
        max(k.threads for k in msc.kinds), rule.describe(), run.to_dict(),
        [PlannedVariant(r.variant.name, r.step_s, list(r.split)) for r in chosen], len(rest),
        sum(r.step_s for r in rest) * run.steps * run.fixed_reps, None, method_path,
        msc.control.tolerances() if msc.control else None, kinds)


def _absolute(path) -> str:
    """Where a plan points to a file: from the root (as pipeline.plan writes every path)."""
    return str(absolute_path(path))


def scenario_of(entry: dict) -> MixedScenario:
    """A planned mixed scenario as it was planned: its files loaded (InputError where one no
    longer loads)."""
    kinds = tuple(Kind(k["kind"], load_machine(k["machine_path"]), int(k["nodes"]), int(k["threads"]))
                  for k in entry["kinds"])
    cluster = load_machine(entry["machine_path"])
    ctl = entry.get("control")
    return MixedScenario(load_ivp(entry["ivp_path"]), load_method(entry.get("method_path") or entry["method"]),
                         int(entry["n"]), kinds, dict(cluster.network), f"{cluster.name}, the plan's",
                         Control(ctl["rtol"], ctl["atol"]) if ctl else None)


def run_entry(entry: dict, store: Store, progress: Progress, launcher: str | None, jobs: int | None,
              run_missing: bool = True) -> MixedTuneResult:
    """Run a planned mixed scenario's variants (those the store holds every repetition of are not
    run again); run_missing False: report what the store holds."""
    msc = scenario_of(entry)
    names = [v["name"] for v in entry["variants"]]
    run = RunOptions(**dict(entry["run"], **({"launcher": launcher} if launcher else {})))
    splits = {v["name"]: tuple(v["split"]) for v in entry["variants"] if v.get("split")}
    return tune_mixed(msc, Rule("top", max(len(names), 1)), run, store, progress, names, jobs, resume=True,
                      run_missing=run_missing, splits=splits)


def measured(store: Store, entry: dict) -> int:
    """Planned variants the store holds every repetition of, at their split and at the even one
    (each repetition is stored as it ends: a job still running has stored some)."""
    msc = scenario_of(entry)
    flags = shlex.split(entry["run"]["flags"] or machine_flags(msc.kinds[0].machine.isa_flags))
    reps, even = int(entry["run"]["reps"]), msc.even()

    def held(name: str, split: tuple[int, ...]) -> bool:
        runs = store.get_runs(mixed_run_key(msc, name, flags, split))
        return sum(1 for r in runs if r.get("median_step_s") is not None) >= reps

    return sum(1 for v in entry["variants"] if v.get("split") and held(v["name"], tuple(v["split"]))
               and (tuple(v["split"]) == even or held(v["name"], even)))


def components(entry: dict, partition: str | None) -> tuple[slurm.Component, ...]:
    """The heterogeneous job of a mixed scenario (pipeline.submit.job_spec): one component per
    kind, in the kind's partition (else `partition`, the options'), its nodes, one task a node
    and the kind's threads each."""
    return tuple(slurm.Component(k.get("partition") or partition, int(k["nodes"]), int(k["threads"]))
                 for k in entry["kinds"])

"""Plans through a batch system (edge: files, sbatch/squeue/sacct, the store).

    autotune tune --plan P --submit slurm   one batch job per scenario, job ids kept in P's state
    autotune tune --plan P --status         per scenario: done, queued, running, failed, cancelled,
                                            lost (a job the batch system forgot, without results)
    autotune tune --plan P                  collects what finished; submits again what was lost

The state sits beside the plan (plan.state.json; scripts and job output in plan.jobs/).  Each
job runs `autotune tune --plan P --scenario I` into the same store, which keeps every repetition
as it ends: a job cancelled or failed mid-run loses at most the run it was in, the next collect
submits just that scenario again, and the job runs only what is missing.
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import shlex
import sys
import time
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path

from autotune.arith import ordered_sum
from autotune.errors import InputError
from autotune.pipeline.runners import run_key_of
from autotune.progress import Progress
from autotune.request.run import machine_flags
from autotune.results.plan import PlanStatusResult, ScenarioStatus
from autotune.specs.machine import load_machine
from autotune.storage.atomic import write_json, write_text
from autotune.storage.filesystems import NODE_LOCAL_LOCKS
from autotune.tools import slurm
from autotune.tools.launcher import parse_launcher

STATE_VERSION = 1
MAX_SUBMISSIONS = 3           # a scenario whose jobs keep ending without results is left failed
BUILD_S, START_S, MARGIN, MIN_TIME_S = 60.0, 120.0, 5.0, 600.0


@dataclass(frozen=True)
class SubmitOptions:
    scheduler: str = "slurm"
    partition: str | None = None
    account: str | None = None
    time: str | None = None        # the job time limit; None: from the predictions
    sbatch_args: str = ""          # further sbatch options
    launcher: str | None = None    # how a job starts the solver's ranks (default: srun)
    online: bool = False           # each job runs one online solver of its scenario's variants (tune --online)
    recheck: int = 0               # with online: the trial again every so many steps
    setup: tuple[str, ...] = ()    # shell lines each job runs before the solver (module load ...)
    exclusive: bool = True         # whole nodes: the jobs time their runs (False: --shared-nodes)

    def __post_init__(self):
        object.__setattr__(self, "setup", tuple(self.setup))
        for line in self.setup:
            if not line.strip() or "\n" in line:
                raise InputError(f"{line!r}: expected one shell line (give --setup again for another)",
                                 field="setup")
        if self.scheduler not in SCHEDULERS:
            raise InputError(f"{self.scheduler!r}: expected one of {', '.join(SCHEDULERS)}", field="submit")
        if self.time is not None:
            slurm.parse_time_limit(self.time)
        parse_launcher(self.launcher or "srun")
        try:
            shlex.split(self.sbatch_args)
        except ValueError as e:
            raise InputError(f"{self.sbatch_args!r}: {e}", field="sbatch_args") from None


# a batch system: batch_script(JobSpec), submit(script) -> job id, job_states(ids), STATE_OF,
# partitions() -> their sizes, partition_problem(sizes, nodes, partition) -> why a job cannot start
SCHEDULERS = {"slurm": slurm}


def state_path(plan_path: Path) -> Path:
    return plan_path.with_name(plan_path.stem + ".state.json")


def _digest(plan: dict) -> str:
    return hashlib.sha256(json.dumps(plan["scenarios"], sort_keys=True).encode()).hexdigest()[:16]


def read_state(plan_path: Path, plan: dict) -> dict | None:
    """The plan's submission state, None if it was never submitted."""
    path = state_path(plan_path)
    try:
        state = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, json.JSONDecodeError) as e:
        raise InputError(f"{path}: unreadable plan state ({e}); remove it to submit afresh") from None
    version = state.get("state_version") if isinstance(state, dict) else None
    if type(version) is not int or version != STATE_VERSION or state.get("plan_digest") != _digest(plan):
        raise InputError(f"{path}: belongs to another version of {plan_path} (the plan changed since it was "
                         f"submitted); remove it to submit afresh")
    return state


def _write_state(plan_path: Path, state: dict) -> None:
    write_json(state_path(plan_path), state, "plan")


@contextlib.contextmanager
def _locked(plan_path: Path):
    """One submitting or collecting command per plan at a time."""
    lock = plan_path.with_name(plan_path.stem + ".state.lock")
    try:
        f = open(lock, "w")
    except OSError as e:
        raise InputError(f"{lock}: cannot write beside the plan ({e.strerror})", field="plan") from None
    with f:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield


def _warn_unshared(store, progress: Progress) -> None:
    """Jobs on other nodes must reach the same store file, with locks that work across hosts."""
    mode = getattr(store, "mode", None)
    if mode is None:
        return
    if mode.mode == "wal":
        progress.say(f"note: the store {store.path} is on a local file system ({mode.reason}): jobs on other nodes "
            f"would write their own copy; put it on a shared file system (--store) unless the jobs run here")
    elif any(why in mode.reason for why in NODE_LOCAL_LOCKS.values()):
        progress.say(f"note: the store {store.path}: {mode.reason}; jobs on several hosts may corrupt it")


def job_seconds(entry: dict) -> float:
    """Time limit of a scenario's job: builds, then every run at a margin over its prediction,
    at most every run at its timeout; at least MIN_TIME_S."""
    run, variants = entry["run"], entry["variants"]
    compute = ordered_sum(v["predicted_s"] for v in variants) * run["steps"] * run["reps"]
    ceiling = len(variants) * (BUILD_S + run["reps"] * run["timeout"]) + START_S
    return max(MIN_TIME_S, min(ceiling, START_S + BUILD_S * len(variants) + MARGIN * compute))


def job_spec(plan_path: Path, index: int, entry: dict, store_path: Path, opts: SubmitOptions,
             machine_nodes: int) -> slurm.JobSpec:
    """The batch job of one scenario: one rank per node (all on one node of a one-node machine),
    in the scenario's partition, else in the one of the options (None: Slurm's default); a
    scenario over nodes of several kinds: a heterogeneous job (pipeline.mixedplan)."""
    components = ()
    if entry.get("kinds"):
        from autotune.pipeline.mixedplan import components as het
        components = het(entry, opts.partition)
    per_node = entry["nodes"] if machine_nodes == 1 and not components else 1
    command = [sys.executable, "-m", "autotune", "tune", "--plan", str(plan_path), "--scenario", str(index),
               "--store", str(store_path), "--launcher", opts.launcher or "srun", "--format", "json"]
    if opts.online:
        command += ["--online"] + (["--recheck", str(opts.recheck)] if opts.recheck else [])
    jobs = jobs_dir(plan_path)
    return slurm.JobSpec(
        f"autotune-{index}-{entry['ivp']}", entry["nodes"] // per_node, entry["nodes"], entry["threads"],
        slurm.parse_time_limit(opts.time) if opts.time else job_seconds(entry),
        str(jobs / f"scenario-{index}-%j.out"), command,
        None if components else entry.get("partition") or opts.partition, opts.account,
        tuple(shlex.split(opts.sbatch_args)), f"autotune plan {plan_path}, scenario {index}: {entry['id']}",
        opts.setup, opts.exclusive, components)


def jobs_dir(plan_path: Path) -> Path:
    return plan_path.with_name(plan_path.stem + ".jobs")


def _measured(store, entry: dict) -> int:
    """Planned variants the store holds a measurement of (as tune --plan counts them: a failed
    run does not count, so the scenario is submitted again, at most MAX_SUBMISSIONS times)."""
    if entry.get("kinds"):
        from autotune.pipeline.mixedplan import measured
        return measured(store, entry)
    # a scenario without flags builds with its machine's (as tune --plan does)
    flags = shlex.split(entry["run"]["flags"] or machine_flags(_isa_flags(entry["machine_path"])))
    return sum(1 for v in entry["variants"] if any(r.get("measured_s") is not None for r in store.get_runs(
        run_key_of(entry["machine"], entry["ivp"], entry["method"], entry["n"], entry["nodes"], entry["threads"],
                   v["name"], flags))))


@lru_cache(maxsize=64)
def _isa_flags(machine_path: str) -> tuple[str, ...]:
    return tuple(load_machine(machine_path).isa_flags)


def _status(measured: int, variants: int, job: str | None, state: str | None, state_of: dict) -> str:
    if measured >= variants:
        return "done"
    if job is None:
        return "not submitted"
    if state is None:
        return "lost"
    meaning = state_of.get(state, "failed")
    return "failed" if meaning == "finished" else meaning     # finished without storing its runs


def plan_status(plan_path: Path, plan: dict, state: dict | None, store) -> PlanStatusResult:
    scheduler = SCHEDULERS[(state or {}).get("options", {}).get("scheduler", "slurm")]
    jobs = {int(k): v["jobs"] for k, v in (state or {}).get("scenarios", {}).items()}
    latest = {i: js[-1]["job_id"] for i, js in jobs.items() if js}
    states = scheduler.job_states(sorted(set(latest.values()), key=int)) if latest else {}
    rows = []
    for i, entry in enumerate(plan["scenarios"]):
        job, k = latest.get(i), _measured(store, entry)
        log = str(jobs_dir(plan_path) / f"scenario-{i}-{job}.out") if job else None
        rows.append(ScenarioStatus(i, entry["id"], _status(k, len(entry["variants"]), job, states.get(job),
                                                           scheduler.STATE_OF), job,
                                   states.get(job), k, len(entry["variants"]),
                                   [j["job_id"] for j in jobs.get(i, [])], log))
    mode = getattr(store, "mode", None)
    return PlanStatusResult(str(plan_path), str(state_path(plan_path)), rows, [], str(store.path),
                            f"{mode.mode} ({mode.reason})" if mode else None)


def _refuse_oversized(specs: dict[int, "slurm.JobSpec"], scheduler, plan_path: Path) -> None:
    """Before any job is submitted: a scenario that asks for more nodes than its own partition
    has would wait forever, and one whose partition the batch system lacks would be refused
    halfway through the plan; refuse the plan in one line."""
    table = scheduler.partitions() if specs else None
    for index, spec in specs.items() if table else ():
        parts = [(c.nodes, c.partition) for c in spec.components] or [(spec.nodes, spec.partition)]
        why = next((w for nodes, partition in parts if (w := scheduler.partition_problem(table, nodes, partition))),
                   None)
        if why:
            raise InputError(f"{plan_path}: scenario {index} {why}: nothing submitted", field="plan")


def submit_plan(plan_path: Path, plan: dict, store, store_path: Path, opts: SubmitOptions | None,
                progress: Progress, resubmit: bool = True) -> PlanStatusResult:
    """Submit every scenario that is neither done nor queued nor running (new plan: all of them).
    opts None: the options of the first submission.  resubmit False: only report."""
    plan_path = plan_path.resolve()
    with _locked(plan_path):
        state = read_state(plan_path, plan)
        if state is None:
            if opts is None:
                raise InputError(f"{plan_path}: never submitted (give --submit slurm)", field="plan")
            state = {"state_version": STATE_VERSION, "plan": str(plan_path), "plan_digest": _digest(plan),
                     "store": str(store_path.resolve()), "options": asdict(opts), "scenarios": {}}
        if opts is not None:
            state["options"] = asdict(opts)         # later resubmissions use the latest options
        opts = SubmitOptions(**state["options"])
        store_path = Path(state["store"])
        status = plan_status(plan_path, plan, state, store)
        lost = [s for s in status.scenarios if s.status in ("not submitted", "failed", "cancelled", "lost")]
        for s in lost if resubmit else []:
            if len(s.jobs) >= MAX_SUBMISSIONS:
                progress.say(f"scenario {s.index} {s.id}: {s.status} after {len(s.jobs)} jobs, not submitted again "
                    f"(last log: {s.log})")
        todo = [s for s in lost if len(s.jobs) < MAX_SUBMISSIONS] if resubmit else []
        scheduler, submitted, machines = SCHEDULERS[opts.scheduler], [], {}
        specs = {}
        for s in todo:
            entry = plan["scenarios"][s.index]
            if entry["machine_path"] not in machines:
                machines[entry["machine_path"]] = load_machine(entry["machine_path"]).nodes
            specs[s.index] = job_spec(plan_path, s.index, entry, store_path, opts, machines[entry["machine_path"]])
        _refuse_oversized(specs, scheduler, plan_path)
        if todo:
            _warn_unshared(store, progress)
        for s in todo:
            spec = specs[s.index]
            script = jobs_dir(plan_path) / f"scenario-{s.index}.sh"
            write_text(script, scheduler.batch_script(spec), "plan", make_folders=True)
            job = scheduler.submit(str(script))
            state["scenarios"].setdefault(str(s.index), {"id": s.id, "jobs": []})["jobs"].append(
                {"job_id": job, "submitted": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "script": str(script)})
            _write_state(plan_path, state)           # after every job: an error later loses no job id
            was = f" (was {s.status}, job {s.job})" if s.job else ""
            progress.say(f"scenario {s.index} {s.id}: submitted as job {job}{was}")
            submitted.append(f"{s.index} -> {job}")
        if not state_path(plan_path).exists():
            _write_state(plan_path, state)
        result = plan_status(plan_path, plan, state, store) if submitted else status
        result.submitted = submitted
        return result


def tune_plan(req, store_path: Path | None, progress: Progress, jobs: int | None = None):
    """tune --plan (a request.plan.TunePlanRequest): the plan's jobs' status, its jobs submitted
    (or collected, and those lost submitted again), or the plan run here (the scenarios req
    names: what a batch job runs).  A submitted plan's store is its jobs' (store_path: None, or
    that one)."""
    from autotune.pipeline.plan import read_plan, run_plan
    from autotune.request.plan import indices
    from autotune.storage.paths import default_store_path
    from autotune.storage.store import Store
    plan = read_plan(req.plan)
    only = indices(req.scenario, len(plan["scenarios"]))
    opts = SubmitOptions(req.submit, req.partition, req.account, req.time, req.sbatch_args or "",
                         req.launcher, req.online, req.recheck or 0, tuple(req.setup or ()),
                         not req.shared_nodes) if req.submit else None
    state = None if only is not None else read_state(req.plan, plan)
    if req.status and state is None:
        raise InputError(f"{req.plan}: has no batch jobs to report (submit it with --submit slurm)", field="plan")
    if state and store_path and Path(store_path).resolve() != Path(state["store"]):
        raise InputError(f"{store_path}: the jobs of {req.plan} write to {state['store']}; leave --store out "
                         f"or give that one", field="store")
    path = store_path or (Path(state["store"]) if state else default_store_path(progress.say))
    store = Store(path)
    try:
        if req.status:
            return plan_status(req.plan, plan, state, store)
        if req.submit or state is not None:      # a submitted plan: collect, submit again what was lost
            res = submit_plan(req.plan, plan, store, path, opts, progress)
            if req.submit:
                return res
            batch = {s.index: (s.status, s.job) for s in res.scenarios}
            return run_plan(plan, store, progress, jobs, batch=batch)
        return run_plan(plan, store, progress, jobs, req.launcher, only, online=req.online, recheck=req.recheck or 0)
    finally:
        store.close()

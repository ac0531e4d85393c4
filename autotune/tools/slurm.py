"""Slurm at the edge: batch scripts and the argv of sbatch, squeue, sacct and scancel are built
here as plain text (pure, tested as strings); `submit` and `job_states` run them.

Job states are read from squeue (which keeps finished jobs for MinJobAge seconds) and, for jobs
it no longer knows, from sacct where accounting is enabled; a job neither knows is "unknown".
"""
from __future__ import annotations

import math
import re
import shlex
import subprocess
from dataclasses import dataclass, replace

from autotune.errors import InputError, ToolError

# Slurm's job states, by what they mean for a plan's scenario
STATE_OF = {
    **dict.fromkeys(("PENDING", "CONFIGURING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "SUSPENDED",
                     "RESV_DEL_HOLD", "STOPPED"), "queued"),
    **dict.fromkeys(("RUNNING", "COMPLETING", "STAGE_OUT", "SIGNALING", "RESIZING"), "running"),
    "COMPLETED": "finished",
    "CANCELLED": "cancelled",
    **dict.fromkeys(("FAILED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE", "PREEMPTED",
                     "REVOKED", "SPECIAL_EXIT"), "failed"),
}
ACTIVE = {"queued", "running"}


@dataclass(frozen=True)
class Component:
    """One component of a heterogeneous job: its partition (None: the default), its nodes (one
    task each) and the threads of each task."""
    partition: str | None
    nodes: int
    cpus_per_task: int


@dataclass(frozen=True)
class JobSpec:
    """What one batch job asks for and runs."""
    name: str
    nodes: int
    tasks: int
    cpus_per_task: int
    time_s: float
    output: str                    # may contain %j
    command: list[str]
    partition: str | None = None
    account: str | None = None
    extra: tuple[str, ...] = ()    # further sbatch options, as given
    comment: str = ""
    setup: tuple[str, ...] = ()    # shell lines before the command (module load ...)
    exclusive: bool = False        # whole nodes: no other job beside it (a job that times must have them)
    components: tuple[Component, ...] = ()   # a heterogeneous job's (nodes, tasks, cpus and partition then theirs)


def time_limit(seconds: float) -> str:
    """sbatch --time in [D-]HH:MM:SS, rounded up to the minute."""
    minutes = max(1, math.ceil(seconds / 60))
    days, rest = divmod(minutes, 24 * 60)
    hh, mm = divmod(rest, 60)
    return (f"{days}-" if days else "") + f"{hh:02d}:{mm:02d}:00"


def parse_time_limit(text: str) -> float:
    """Seconds of a --time value in sbatch's forms: MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS."""
    m = re.fullmatch(r"(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?", text.strip())
    if not m:
        raise InputError(f"{text!r}: expected a time limit such as 30, 00:30:00 or 1-00:00:00", field="time")
    days, a, b, c = m.groups()
    if days is not None:
        h, mi, sec = int(a), int(b or 0), int(c or 0)
    elif c is not None:
        h, mi, sec = int(a), int(b), int(c)
    else:
        h, mi, sec = 0, int(a), int(b or 0)
    total = ((int(days or 0) * 24 + h) * 60 + mi) * 60 + sec
    if total <= 0:
        raise InputError(f"{text!r}: expected a time limit above zero", field="time")
    return float(total)


def batch_script(job: JobSpec) -> str:
    if job.components:
        return _het_script(job)
    lines = ["#!/bin/bash", f"#SBATCH --job-name={job.name}", f"#SBATCH --nodes={job.nodes}",
             f"#SBATCH --ntasks={job.tasks}", f"#SBATCH --ntasks-per-node={max(1, job.tasks // job.nodes)}",
             f"#SBATCH --cpus-per-task={job.cpus_per_task}", f"#SBATCH --time={time_limit(job.time_s)}",
             f"#SBATCH --output={job.output}"]
    lines += [f"#SBATCH --partition={job.partition}"] * bool(job.partition)
    lines += _common(job)
    lines += ["set -eu",
              "# srun does not take --cpus-per-task from the allocation (Slurm >= 22.05)",
              "export SRUN_CPUS_PER_TASK=$SLURM_CPUS_PER_TASK OMP_NUM_THREADS=$SLURM_CPUS_PER_TASK",
              "exec " + shlex.join(job.command)]
    return "\n".join(lines) + "\n"


def _common(job: JobSpec) -> list[str]:
    """The account, the further options, whole nodes and the comment, and the set-up lines."""
    lines = [f"#SBATCH --account={job.account}"] * bool(job.account)
    lines += [f"#SBATCH {opt}" for opt in job.extra]
    if job.exclusive and not any(opt.startswith("--exclusive") for opt in job.extra):
        lines.append("#SBATCH --exclusive")
    lines += [f"# {c}" for c in job.comment.splitlines()]
    if job.setup:       # before -u: module systems read unset variables; a failing line stops the job
        lines += ["set -e", "# set-up (--setup)", *job.setup]
    return lines


def _het_script(job: JobSpec) -> str:
    """A heterogeneous job (Slurm's `hetjob`): the job's name, time and output, then each
    component's options (its nodes, one task a node, its threads, its partition, and the job's
    account, further options and whole nodes), a `#SBATCH hetjob` line between two; its command
    launches the components' tasks itself (srun ... : ..., each group with its threads)."""
    lines = ["#!/bin/bash", f"#SBATCH --job-name={job.name}", f"#SBATCH --time={time_limit(job.time_s)}",
             f"#SBATCH --output={job.output}"]
    for i, c in enumerate(job.components):
        if i:
            lines.append("#SBATCH hetjob")
        lines += [f"#SBATCH --nodes={c.nodes}", f"#SBATCH --ntasks={c.nodes}", "#SBATCH --ntasks-per-node=1",
                  f"#SBATCH --cpus-per-task={c.cpus_per_task}"]
        lines += [f"#SBATCH --partition={c.partition}"] * bool(c.partition)
        lines += [ln for ln in _common(replace(job, comment="", setup=())) if ln.startswith("#SBATCH")]
    lines += [f"# {c}" for c in job.comment.splitlines()]
    if job.setup:
        lines += ["set -e", "# set-up (--setup)", *job.setup]
    lines += ["set -eu", "exec " + shlex.join(job.command)]
    return "\n".join(lines) + "\n"


def parse_sbatch(out: str) -> str:
    """The job id `sbatch --parsable` prints (id or id;cluster)."""
    text = out.strip().splitlines()[-1] if out.strip() else ""
    job_id = text.split(";")[0].strip()
    if not job_id.isdigit():
        raise ToolError(f"sbatch printed no job id: {out.strip()[:200]!r}")
    return job_id


def parse_states(out: str) -> dict[str, str]:
    """Job id -> Slurm state from `squeue -o %i|%T` or `sacct -P -o JobID,State` lines
    ("CANCELLED by 0" -> CANCELLED; job steps such as 12.batch are skipped).  A heterogeneous
    job's components (12+0, 12+1) are the job 12, in its first component's state."""
    states = {}
    for line in out.splitlines():
        job_id, _, state = line.strip().partition("|")
        base, plus, offset = job_id.partition("+")
        if base.isdigit() and state and (not plus or offset.isdigit()):
            if not plus or offset == "0" or base not in states:
                states[base] = state.split()[0].rstrip("+")
    return states


def _run(argv: list[str], what: str) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=120)
    except FileNotFoundError:
        raise ToolError(f"{what}: '{argv[0]}' not found: run this where Slurm's commands are installed") from None
    except subprocess.TimeoutExpired:
        raise ToolError(f"{what}: '{' '.join(argv)}' gave no answer in 120 s") from None


def submit(script_path: str) -> str:
    proc = _run(["sbatch", "--parsable", script_path], "submit")
    if proc.returncode != 0:
        raise ToolError(f"sbatch {script_path} failed: {proc.stderr.strip()[-500:]}")
    return parse_sbatch(proc.stdout)


def job_states(job_ids: list[str]) -> dict[str, str]:
    """Slurm's state of each job it still knows (squeue first, then sacct)."""
    if not job_ids:
        return {}
    proc = _run(["squeue", "-h", "-t", "all", "-o", "%i|%T", "-j", ",".join(job_ids)], "status")
    states = parse_states(proc.stdout) if proc.returncode == 0 else {}
    if proc.returncode != 0 and "Invalid job id" not in proc.stderr:
        raise ToolError(f"squeue failed: {proc.stderr.strip()[-300:]}")
    if proc.returncode != 0:           # one id it forgot fails the whole query: ask one by one
        for job_id in job_ids:
            one = _run(["squeue", "-h", "-t", "all", "-o", "%i|%T", "-j", job_id], "status")
            states.update(parse_states(one.stdout) if one.returncode == 0 else {})
    rest = [j for j in job_ids if j not in states]
    if rest:
        acct = _run(["sacct", "-n", "-P", "-X", "-o", "JobID,State", "-j", ",".join(rest)], "status")
        if acct.returncode == 0:        # accounting disabled: sacct fails, the states stay unknown
            states.update(parse_states(acct.stdout))
    return states


# what srun prints where it could not reach the controller (restarted, failed over, overloaded):
# the step never started, and the same srun a little later will start it
CONTROLLER_UNREACHABLE = ("unable to contact slurm controller", "socket timed out on send/recv")
# ... unless the controller answered that the job is no longer running (requeued after a node
# failure: this job's srun must not start anything; the requeued job runs the scenario again)
JOB_GONE = ("job is pending execution", "job has been cancelled", "already completing or completed")


def controller_unreachable(text: str) -> bool:
    """Whether a failed srun said only that the controller could not be reached: worth trying
    again in a moment, where any other failure is the run's own."""
    low = text.lower()
    return any(s in low for s in CONTROLLER_UNREACHABLE) and not any(s in low for s in JOB_GONE)


def parse_partition_nodes(out: str) -> tuple[dict[str, int], str | None]:
    """(partition -> nodes, the default partition) from `sinfo -h -o %P|%D` lines (a partition
    listed on several lines adds up; the default one is marked with a trailing *)."""
    nodes: dict[str, int] = {}
    default = None
    for line in out.splitlines():
        name, _, count = line.strip().partition("|")
        if name and count.strip().isdigit():
            key = name.rstrip("*")
            default = key if name.endswith("*") else default
            nodes[key] = nodes.get(key, 0) + int(count)
    return nodes, default


def partitions() -> tuple[dict[str, int], str | None] | None:
    """(partition -> nodes, the default partition) of every partition, hidden ones too (a job
    may go to one); None where sinfo cannot tell (the submission then decides)."""
    proc = _run(["sinfo", "-a", "-h", "-o", "%P|%D"], "partition size")
    return parse_partition_nodes(proc.stdout) if proc.returncode == 0 else None


def partition_problem(table: tuple[dict[str, int], str | None], nodes: int, partition: str | None) -> str | None:
    """Why a job of `nodes` nodes cannot start in `partition` (a name, a comma-separated list
    Slurm picks from, or None: the default one), by the table of `partitions()`; None: it can,
    or the table cannot tell."""
    sizes, default = table
    if not sizes:
        return None
    names = partition.split(",") if partition else [default] if default else []
    unknown = [p for p in names if p not in sizes]
    if unknown:
        return f"asks for partition {unknown[0]}, which Slurm does not have (it has: {', '.join(sorted(sizes))})"
    if names and all(nodes > sizes[p] for p in names):
        biggest = max(names, key=sizes.__getitem__)
        return f"asks for {nodes} nodes and partition {biggest} has {sizes[biggest]}"
    return None

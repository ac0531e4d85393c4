"""Run kerncraft analyses in parallel in long-lived worker processes.

Each worker imports kerncraft and sets up OSACA once (init_worker), then takes
one kernel part at a time, with every regime it is to be analysed in (its in-core
analysis is the same in each: made once).  Results are handed to `on_result` as they arrive,
so an interrupted run keeps everything finished so far.

The workers are a local process pool (jobs: a count, default the available
cores) or, with jobs='mpi', the other MPI ranks: autotune started as
`mpiexec -n P python -m mpi4py.futures -m autotune ...` runs on rank 0 and
hands the analyses to the P - 1 ranks of mpi4py.futures' shared pool.  Both
go through one loop (_run_pool), so results, progress and failures are alike.

A worker that cannot set kerncraft up (a module missing, kerncraft failing to
import) keeps the cause instead of dying, and answers every analysis with a
fatal result that names it; the loop then cancels what is left and raises a
ToolError with that cause.  A pool whose worker process died (killed, or
crashed in a C extension) stops the same way.  An analysis that fails on its
own is a result like any other (the kernel part is reported as failed).
"""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
from typing import TYPE_CHECKING, Callable

from autotune.errors import InputError, ToolError
from autotune.progress import SILENT, Progress
from autotune.tools import kerncraft_backend

if TYPE_CHECKING:
    from concurrent.futures import Executor

MPI_JOBS = "mpi"
MPI_START = "mpiexec -n 3 python -m mpi4py.futures -m autotune ... --jobs mpi"

_initialised = False
_init_error: str | None = None    # why kerncraft could not be set up in this process


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def local_workers(jobs: int | str | None, tasks: int) -> int:
    """Processes (or threads) of a local pool for `tasks` tasks: `jobs` where it is a count, else
    (None, or 'mpi': the MPI ranks analyse, the rest of the work stays here) the cores available;
    never more than the tasks, never none."""
    return max(1, min(default_jobs() if jobs in (None, MPI_JOBS) else int(jobs), tasks))


def mpi_workers() -> int:
    """Workers of mpi4py.futures' shared pool: the ranks but rank 0 when this process was
    started as `python -m mpi4py.futures` under mpiexec or srun; 0 otherwise."""
    core = sys.modules.get("mpi4py.futures._core")  # imported by `-m mpi4py.futures`, not before
    if core is None or getattr(core, "SharedPool", None) is None:
        return 0
    from mpi4py import MPI
    return MPI.COMM_WORLD.Get_size() - 1


def check_jobs(jobs: int | str | None) -> None:
    """Raise InputError unless `jobs` is None, a positive count, or 'mpi' with MPI workers to use:
    called before any long work, so a misstarted run fails at once."""
    if jobs is None:
        return
    if jobs == MPI_JOBS:
        if mpi_workers() < 1:
            raise InputError(f"{MPI_JOBS}: no MPI workers; start autotune as `{MPI_START}` (or srun -n 3 "
                             "... in place of mpiexec): rank 0 runs autotune, the other ranks analyse",
                             field="jobs")
        return
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise InputError(f"{jobs!r}: expected a positive number of processes or 'mpi'", field="jobs")


def init_worker_once() -> None:
    """kerncraft_backend.init_worker, once per process: mpi4py.futures' shared pool runs an
    executor's initializer on its (long-lived) workers each time an executor starts, and
    init_worker patches kerncraft, which must not happen twice.  A failure is kept, not raised:
    an initializer that raises breaks a process pool without its cause ("terminated abruptly")
    and lets an MPI pool fail every task alike; analyse() reports it instead."""
    global _initialised, _init_error
    if _initialised:
        return
    _initialised = True
    try:
        kerncraft_backend.init_worker()
    except Exception as e:   # any failure to set up: analyse() reports it with its cause
        _init_error = cause_of(e)


def cause_of(e: BaseException) -> str:
    """An exception as one line: its message (with its type where the message alone is vague)."""
    text = " ".join(str(e).split())
    if isinstance(e, ImportError) and text:
        return text                              # "No module named 'distutils'"
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


def analyse(task: dict) -> list[dict]:
    """kerncraft_backend.analyse_part in the task's scratch directory, made where missing (an MPI
    worker on another node than rank 0 has no such directory): a result per regime of the task.
    Where kerncraft could not be set up in this worker, a fatal result naming why."""
    if _init_error is not None:
        return [{"ok": False, "fatal": True, "error": f"kerncraft cannot start in the analysis workers: "
                 f"{_init_error}", "log": ""}] * len(task["regimes"])
    os.makedirs(task["scratch"], exist_ok=True)
    where = node_name()
    return [dict(r, ran_on=where) for r in kerncraft_backend.analyse_part(task)]


def node_name() -> str:
    """The node this process runs on: Slurm's name for it, else the host name."""
    import socket
    return os.environ.get("SLURMD_NODENAME") or socket.gethostname()


def _local_pool(jobs: int | None, tasks: int) -> Callable[[], Executor]:
    from concurrent.futures import ProcessPoolExecutor
    workers = local_workers(jobs, tasks)
    return lambda: ProcessPoolExecutor(max_workers=workers, initializer=init_worker_once)


def _mpi_pool() -> Executor:
    from mpi4py.futures import MPIPoolExecutor
    # main=False: the workers need not run __main__ (autotune's would run the command again)
    return MPIPoolExecutor(initializer=init_worker_once, main=False)


def run_analyses(tasks: list[dict], on_result: Callable[[dict, dict, dict], None], progress: Progress = SILENT,
                 jobs: int | str | None = None) -> int:
    """Analyse every task (a kernel part and its regimes, as kerncraft_backend.analyse_part takes
    them), calling on_result(task, regime, result) for each regime; return how many analyses
    (regimes) ran.  jobs: the local pool's size (default: available cores), or 'mpi' for the MPI
    ranks."""
    if not tasks:
        return 0
    check_jobs(jobs)
    pool = _mpi_pool if jobs == MPI_JOBS else _local_pool(jobs, len(tasks))
    return _run_pool(pool, longest_first(tasks), on_result, progress)


def longest_first(tasks: list[dict]) -> list[dict]:
    """The tasks with the most cache simulations first (each takes seconds; an analysis by layer
    conditions a fraction of one), otherwise in the order given: the pool then ends on short
    tasks, and no worker idles while the last simulation runs."""
    return sorted(tasks, key=lambda t: -sum(r.get("cache_predictor") == "SIM" for r in t["regimes"]))


def _run_pool(make_pool: Callable[[], Executor], tasks: list[dict], on_result: Callable[[dict, dict, dict], None],
              progress: Progress) -> int:
    from concurrent.futures import BrokenExecutor, as_completed
    scratch = tempfile.mkdtemp(prefix="autotune-ecm-")
    failures, here = 0, node_name()
    total = sum(len(t["regimes"]) for t in tasks)
    try:
        with make_pool() as pool:
            futures = {pool.submit(analyse, dict(t, scratch=scratch)): t for t in tasks}
            done = 0
            progress.step(0, total, "")
            for fut in as_completed(futures):
                task = futures[fut]
                try:
                    results = fut.result()
                except BrokenExecutor as e:   # a worker process died: every task left fails alike
                    results = [{"ok": False, "fatal": True, "error": f"an analysis worker died ({cause_of(e)})"}]
                except Exception as e:  # a task that could not reach a worker: report it like a failed analysis
                    results = [{"ok": False, "error": f"worker failed: {cause_of(e)}", "log": "",
                                "transient": True}] * len(task["regimes"])
                if results[0].get("fatal"):
                    # wait: a pool left running at exit races Python's own shutdown of it (a write
                    # to a closed pipe); the tasks still running fail at once as this one did
                    pool.shutdown(wait=True, cancel_futures=True)
                    kept = f"{done} of {total} kernel analyses finished and stored" if done else \
                        f"none of {total} kernel analyses ran"
                    raise ToolError(f"{results[0]['error']}; {kept}")
                ran_on = None
                for regime, result in zip(task["regimes"], results):
                    failures += not result.get("ok")
                    done += 1
                    ran_on = result.pop("ran_on", None)     # where it ran is no property of the kernel
                    on_result(task, regime, result)
                elsewhere = f" on {ran_on}" if ran_on and ran_on != here else ""
                labels = ",".join(r["label"] for r in task["regimes"])
                progress.step(done, total, f"{task['name']}@{labels}{elsewhere}")
    finally:
        if not failures:
            shutil.rmtree(scratch, ignore_errors=True)
    return total

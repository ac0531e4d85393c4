"""Run kerncraft analyses in parallel in long-lived worker processes.

Each worker imports kerncraft and sets up OSACA once (init_worker), then takes
one kernel part at a time.  Results are handed to `on_result` as they arrive,
so an interrupted run keeps everything finished so far.

The workers are a local process pool (jobs: a count, default the available
cores) or, with jobs='mpi', the other MPI ranks: autotune started as
`mpiexec -n P python -m mpi4py.futures -m autotune ...` runs on rank 0 and
hands the analyses to the P - 1 ranks of mpi4py.futures' shared pool.  Both
go through one loop (_run_pool), so results, progress and failures are alike.
"""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from typing import Callable

from autotune.errors import InputError
from autotune.tools import kerncraft_backend

MPI_JOBS = "mpi"
MPI_START = "mpiexec -n 3 python -m mpi4py.futures -m autotune ... --jobs mpi"

_initialised = False


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


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
    init_worker patches kerncraft, which must not happen twice."""
    global _initialised
    if not _initialised:
        kerncraft_backend.init_worker()
        _initialised = True


def analyse(task: dict) -> dict:
    """kerncraft_backend.analyse in the task's scratch directory, made where missing (an MPI
    worker on another node than rank 0 has no such directory)."""
    os.makedirs(task["scratch"], exist_ok=True)
    return kerncraft_backend.analyse(task)


def _local_pool(jobs: int | None, tasks: int) -> Callable[[], Executor]:
    workers = max(1, min(jobs or default_jobs(), tasks))
    return lambda: ProcessPoolExecutor(max_workers=workers, initializer=init_worker_once)


def _mpi_pool() -> Executor:
    from mpi4py.futures import MPIPoolExecutor
    # main=False: the workers need not run __main__ (autotune's would run the command again)
    return MPIPoolExecutor(initializer=init_worker_once, main=False)


def run_analyses(tasks: list[dict], on_result: Callable[[dict, dict], None],
                 progress: Callable[[int, int, str], None] | None = None,
                 jobs: int | str | None = None) -> int:
    """Analyse every task (dicts as kerncraft_backend.analyse takes them); return how many ran.
    jobs: the local pool's size (default: available cores), or 'mpi' for the MPI ranks."""
    if not tasks:
        return 0
    check_jobs(jobs)
    pool = _mpi_pool if jobs == MPI_JOBS else _local_pool(jobs, len(tasks))
    return _run_pool(pool, tasks, on_result, progress)


def _run_pool(make_pool: Callable[[], Executor], tasks: list[dict], on_result: Callable[[dict, dict], None],
              progress: Callable[[int, int, str], None] | None) -> int:
    scratch = tempfile.mkdtemp(prefix="autotune-ecm-")
    failures = 0
    try:
        with make_pool() as pool:
            futures = {pool.submit(analyse, dict(t, scratch=scratch)): t for t in tasks}
            done = 0
            if progress:
                progress(0, len(tasks), "")
            for fut in as_completed(futures):
                task = futures[fut]
                try:
                    result = fut.result()
                except Exception as e:  # a crashed worker: report it like a failed analysis
                    result = {"ok": False, "error": f"worker failed: {e}", "log": "", "transient": True}
                failures += not result.get("ok")
                done += 1
                on_result(task, result)
                if progress:
                    progress(done, len(tasks), task["name"])
    finally:
        if not failures:
            shutil.rmtree(scratch, ignore_errors=True)
    return len(tasks)

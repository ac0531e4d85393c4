"""Run kerncraft analyses in parallel in long-lived worker processes.

Each worker imports kerncraft and sets up OSACA once (init_worker), then takes
one kernel part at a time.  Results are handed to `on_result` as they arrive,
so an interrupted run keeps everything finished so far.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Callable

from autotune.tools import kerncraft_backend


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def run_analyses(tasks: list[dict], on_result: Callable[[dict, dict], None],
                 progress: Callable[[int, int, str], None] | None = None,
                 jobs: int | None = None) -> int:
    """Analyse every task (dicts as kerncraft_backend.analyse takes them); return how many ran."""
    if not tasks:
        return 0
    scratch = tempfile.mkdtemp(prefix="autotune-ecm-")
    failures = 0
    jobs = max(1, min(jobs or default_jobs(), len(tasks)))
    try:
        with ProcessPoolExecutor(max_workers=jobs, initializer=kerncraft_backend.init_worker) as pool:
            futures = {pool.submit(kerncraft_backend.analyse, dict(t, scratch=scratch)): t for t in tasks}
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

"""The fused sweeps of a variant timed as its solver runs them: the edge that builds and runs it.

The solver is the variant's own (codegen.solver, the code `tune` runs), built with `tune`'s
default flags, and run on one rank at a system size where its data stays in a cache level, or
streams from memory, on the node's cores (pipeline.sweeps chooses the sizes).  The solver's own sweep timers
(`phases_s`' "sweep.pred", "sweep.corr1", ..., "sweep.final": seconds per step of each) are the
measurement: the RHS of each tile into its buffer of F, the linear combination that reads it
back, the streamed copy of store=nt, the tile's restart and the fence, all as they run; a
pipelined step's levels by the phase timer that holds them.  The
solvers run round-robin, so a slow spell of a shared host touches every one alike; what the
seconds mean for the model is model.sweeps' (pure).
"""
from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Callable

from autotune.errors import InputError, ToolError

HARNESS_VERSION = 3     # 2: every phase timer kept (the pipelined step is timed by its phase); 3: MEMORY_N
STEPS = 40          # steps of one run (after WARMUP untimed ones)
LARGE_N = 200_000   # from this size on, LARGE_STEPS (a step lasts milliseconds)
LARGE_STEPS = 4
WARMUP = 2
# a run whose data streams from memory, from this size on (a step lasts tens of milliseconds, and
# the corrector's sweeps are timed m - 1 times a step): MEMORY_STEPS after one untimed step
MEMORY_N = 1_000_000
MEMORY_STEPS = 2


class Building:
    """Solver sources being built (tools.build, cached by source and flags; a build is a compiler
    process, and tools.build lets builds of one source meet), at most `at_once` at a time until
    `widen` lets as many in as there are CPUs: the builds may start while this host times
    something on one core (pipeline.predict: the in-core harnesses), and take the other.  A
    context manager: leaving it cancels what has not started."""

    def __init__(self, sources: dict[str, str], flags: tuple[str, ...], at_once: int | None = None) -> None:
        import threading
        from concurrent.futures import ThreadPoolExecutor

        from autotune.tools import build as buildmod
        from autotune.tools.ecm_runner import local_workers
        self.sources = dict(sources)
        self._workers = local_workers(None, len(sources) or 1)
        self._gate = threading.Semaphore(min(at_once or self._workers, self._workers))
        self._open = at_once is None or at_once >= self._workers
        self._pool = ThreadPoolExecutor(max_workers=self._workers) if sources else None
        cc = buildmod.find_mpicc() if sources else ""
        self._futures = {self._pool.submit(self._one, buildmod.build, source, flags, cc): key
                         for key, source in sources.items()} if self._pool else {}

    def _one(self, build, source: str, flags: tuple[str, ...], cc: str) -> Path:
        with self._gate:
            return build(source, flags, cc)

    def widen(self) -> None:
        """Let as many builds run at once as there are CPUs (once)."""
        if not self._open:
            self._open = True
            for _ in range(self._workers - 1):
                self._gate.release()

    def results(self, on_built: Callable[[str], None] | None = None) -> tuple[dict[str, Path], dict[str, str]]:
        """key -> executable, and why each one that failed failed, waiting for those still
        building (at full width); on_built("k of n built") after each."""
        from concurrent.futures import as_completed
        self.widen()
        built, failed = {}, {}
        for fut in as_completed(self._futures):
            key = self._futures[fut]
            try:
                built[key] = fut.result()
            except (ToolError, OSError) as e:
                failed[key] = f"the build failed: {' '.join(str(e).split())[:300]}"
            if on_built:
                on_built(f"{len(built) + len(failed)} of {len(self.sources)} built")
        return {k: built[k] for k in self.sources if k in built}, failed

    def __enter__(self) -> "Building":
        return self

    def __exit__(self, *exc) -> None:
        self.widen()
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)


def build_all(sources: dict[str, str], flags: tuple[str, ...],
              on_built: Callable[[str], None] | None = None) -> tuple[dict[str, Path], dict[str, str]]:
    """Each solver source built, as many at once as there are CPUs (Building): key -> executable,
    and why each one that failed failed; on_built("k of n built") after each."""
    with Building(sources, flags) as building:
        return building.results(on_built)


def run_once(exe: Path, n: int, size: int, h: float, threads: int = 1, memory: bool = False) -> dict[str, float]:
    """Seconds per step of each sweep and phase timer of one run on one rank, its threads bound one
    a core; memory: its data streams from memory (MEMORY_STEPS where n is large enough)."""
    from autotune.tools import build as buildmod
    from autotune.tools.launcher import parse_launcher
    steps = LARGE_STEPS if n >= LARGE_N else STEPS
    warmup = WARMUP
    if memory and n >= MEMORY_N:
        steps, warmup = MEMORY_STEPS, 1
    result = buildmod.run(exe, parse_launcher(None), 1, threads, n, size, steps + warmup, h, warmup, timeout=300.0,
                          pin=True)
    return {k: float(v) for k, v in (result.get("phases_s") or {}).items()}


def time_all(runs: dict[str, tuple[Path, int, int, float, int, bool]], rounds: int,
             on_round: Callable[[int], None] | None = None) -> tuple[dict[str, list[dict]], dict[str, str]]:
    """`rounds` runs of each solver (key -> (exe, n, size, h, threads, in memory)), round-robin; the runs of each, and
    why each one that failed a run failed (it runs no more; the others go on); on_round(round)
    after each round."""
    out: dict[str, list[dict]] = {k: [] for k in runs}
    failed: dict[str, str] = {}
    for done in range(1, rounds + 1):
        for key, (exe, n, size, h, threads, memory) in runs.items():
            if key in failed:
                continue
            try:
                out[key].append(run_once(exe, n, size, h, threads, memory))
            except (ToolError, InputError, subprocess.SubprocessError, OSError, ValueError) as e:
                failed[key] = f"the solver failed: {' '.join(str(e).split())[:300]}"
        if on_round:
            on_round(done)
    return out, failed

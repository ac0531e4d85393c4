"""Running a solver generated for uneven blocks over nodes of several kinds (edge: the launcher):
one MPI world of one group of ranks per kind, each rank's block from AUTOTUNE_COUNTS."""
from __future__ import annotations

import json
import os
from pathlib import Path

from autotune.errors import ToolError
from autotune.tools.build import launch
from autotune.tools.launcher import Launcher, mpmd_argv
from autotune.tools.mpiinfo import placement, srun_pmi, world_size_error
from autotune.tools.toolchain import resolve_argv


def run_split(exe: Path, launcher: Launcher, groups: list[tuple[int, int]], split: tuple[int, ...], n: int,
              size: int, steps: int, h: float, warmup: int, timeout: float = 600.0,
              prefixes: list[list[str]] | None = None) -> dict:
    """One run at `split` (a block per rank, the groups' ranks in order); its JSON result line,
    with `rank_busy_s` (each rank's seconds per timed step outside the exchange).  prefixes: per
    group, a wrapper of its command (tools.launcher.mpmd_argv)."""
    command = [str(exe), str(n), str(size), str(steps), repr(h), str(warmup)]
    argv = resolve_argv(mpmd_argv(launcher, groups, command, srun_pmi() if "srun" in launcher.template else "pmi2",
                                 prefixes))
    env = dict(os.environ, AUTOTUNE_COUNTS=",".join(map(str, split)))
    env.pop("OMP_NUM_THREADS", None)          # each group's own
    proc = launch(argv, env, timeout)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    ranks = sum(r for r, _ in groups)
    if len(lines) != 1:
        raise ToolError(f"solver printed {len(lines)} results, not one: {' '.join(argv)}")
    out = json.loads(lines[0])
    out["log"] = [ln for ln in proc.stdout.splitlines() if ln.startswith("online: ")]   # an online run's trial
    if out.get("ranks") != ranks:
        raise ToolError(world_size_error("solver", 1, out.get("ranks", "?"), ranks, argv))
    out["placement"] = placement(out.get("placement"))
    return out

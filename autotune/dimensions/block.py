"""block: the cache level whose share of a core the fused sweep's tile fills."""
from __future__ import annotations

from autotune.specs.dimension import Dimension, values
from autotune.specs.tiles import tile_components


def _tile(value: str, machine, stages: int) -> int:
    return tile_components(machine, value, stages)


def _render(value: str, r) -> dict:
    return {"block": value, "tile": _tile(value, r.machine, r.method.stages)}


DIMENSION = Dimension(
    "block", 80,
    values(["none"], "solver.c.j2:tile (0: no tile)", fuse="none")
    + values(["l1", "l2"], "solver.c.j2:tile,block ({})", fuse="rhs-lc"), "none",
    "cache blocking of the fused sweep: the component tile whose s stage derivatives stay in "
    "this cache level between RHS and LC (its size from the machine file and the threads)",
    render=_render, tile=_tile)

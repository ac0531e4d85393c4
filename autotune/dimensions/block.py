"""block: the cache level whose share of a core the fused sweep's tile fills."""
from __future__ import annotations

from autotune.errors import InputError
from autotune.specs.dimension import Dimension, values
from autotune.specs.machine import Machine
from autotune.specs.parts import DOUBLE

# Cache sizes per core where no machine is given (generate without --machine)
DEFAULT_CACHE_BYTES = {"l1": 32 * 1024, "l2": 512 * 1024}
LAST_LEVEL_BYTES = 2 * 1024 * 1024      # and of the last level


def tile_components(machine: Machine | None, block: str, stages: int) -> int:
    """Components per tile of a fused sweep (block = l1, l2, ...): the tile's s stage derivatives
    take half of that cache level's share of one core (the streamed argument vectors and y pass
    through the other half), in whole cache lines of 8 doubles; 0 for block=none.  store=nt's
    stage of new argument vectors shares the other half: halving the tile for it measured 6 %
    slower (heat2d, n = 4e6, 1 x 2), as shorter rows stream less well.  Where the tile's data
    really lives (its rows pass through beside it) is model.loops' question (model.tiles' in a
    pipelined step)."""
    if block == "none":
        return 0
    return max(8, core_share(machine, block) // (2 * DOUBLE * stages) // 8 * 8)


def core_share(machine: Machine | None, block: str) -> int:
    """Bytes of the cache level `block` names that one core has to itself (DEFAULT_CACHE_BYTES
    without a machine)."""
    if machine is None:
        return DEFAULT_CACHE_BYTES[block]
    got = machine.core_share(block)
    if got is None:
        raise InputError(f"{machine.path}: no cache level {block.upper()} for block={block}")
    return got


def last_share(machine: Machine | None) -> int:
    """Bytes of the last cache level that one core has to itself (2 MiB without a machine)."""
    if machine is None:
        return LAST_LEVEL_BYTES
    return machine.core_share(machine.caches[-1].name)


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

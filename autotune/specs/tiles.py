"""The tile of a fused sweep (block=l1, l2): components per tile from the cache sizes.  Pure."""
from __future__ import annotations

from autotune.errors import InputError
from autotune.specs.machine import Machine
from autotune.specs.parts import DOUBLE

# Cache sizes per core where no machine is given (generate without --machine)
DEFAULT_CACHE_BYTES = {"l1": 32 * 1024, "l2": 512 * 1024}


def tile_components(machine: Machine | None, block: str, stages: int) -> int:
    """Components per tile of a fused sweep (block = l1, l2, ...): the tile's s stage derivatives
    take half of that cache level's share of one core (the streamed argument vectors and y pass
    through the other half), in whole cache lines of 8 doubles; 0 for block=none.  store=nt's
    stage of new argument vectors shares the other half: halving the tile for it measured 6 %
    slower (heat2d, n = 4e6, 1 x 2), as shorter rows stream less well.  Where the tile's data
    really lives (its rows pass through beside it) is model.tiles' question."""
    if block == "none":
        return 0
    per_core = DEFAULT_CACHE_BYTES[block]
    if machine is not None:
        level = next((c for c in machine.caches if c.name.lower() == block), None)
        if level is None:
            raise InputError(f"{machine.path}: no cache level {block.upper()} for block={block}")
        per_core = level.bytes_per_group // level.cores_per_group
    return max(8, per_core // (2 * DOUBLE * stages) // 8 * 8)

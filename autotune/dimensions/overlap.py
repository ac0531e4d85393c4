"""overlap: whether the RHS's interior computes while the halo exchange is in flight."""
from __future__ import annotations

from autotune.specs.dimension import Dimension, values
from autotune.specs.schemes import SCHEMES


def _overlaps(value: str) -> bool:
    return value != "none"


def _render(value: str, _) -> dict:
    return {"overlap": _overlaps(value)}


DIMENSION = Dimension(
    "overlap", 90,
    values(["none"], "step.j2:communicate_all")
    + values(["halo"], "step.j2:sweep", comm="|".join(n for n, s in SCHEMES.items() if s.halo_only)), "none",
    "communication-computation overlap: wait for the exchange, then the RHS (none), or post "
    "the halo exchange, evaluate the components that need no halo, wait, finish the boundary "
    "(halo; schemes that exchange halos only)",
    render=_render, overlaps=_overlaps)

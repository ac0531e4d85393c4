"""rhs: the corrector's RHS, one sweep per argument vector (the paper's) or all in one sweep."""
from __future__ import annotations

from autotune.specs.dimension import Dimension, values
from autotune.specs.step import Event, Group, Kind, Sweep


def _stages(d, _: str) -> None:
    d.corrector_rhs = lambda d: Event(Kind.KERNEL, Group.RHS, d.s, "rhs_all", tuple(
        Sweep(Group.RHS, None, (d.arg(l),), (f"F{l}",)) for l in range(1, d.s + 1)))


def _onepass(d, _: str) -> None:
    every = range(1, d.s + 1)
    d.corrector_rhs = lambda d: Event(Kind.KERNEL, Group.RHSALL, 1, "rhs_onepass", (
        Sweep(Group.RHSALL, None, tuple(d.arg(l) for l in every), tuple(f"F{l}" for l in every)),))


def _render(value: str, r) -> dict:
    """onepass: each RHS part's body over all s argument vectors (the stage loop inside)."""
    if value == "stages":
        return {"rhs_onepass": False, "rhs_bodies_all": None}
    return {"rhs_onepass": True, "rhs_bodies_all": [p.body for p in r.parts.rhs_parts(r.ivp, r.method.stages)]}


DIMENSION = Dimension(
    "rhs", 60, values(["stages"], "step.j2:rhs_all") + values(["onepass"], "step.j2:rhs_onepass"), "stages",
    "RHS of the corrector's s argument vectors: one sweep per argument vector (stages), or "
    "all of them in one sweep of the components, the stage loop inside (onepass)",
    step={"stages": _stages, "onepass": _onepass}, writes=("corrector_rhs",),
    reads=("pack",), render=_render)

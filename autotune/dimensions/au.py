"""au: APPROX and UPDATE in two sweeps (the paper's) or in one."""
from __future__ import annotations

from autotune.specs import methodparts as mp
from autotune.specs.dimension import Dimension, values
from autotune.specs.step import Group


def _split(d, _: str) -> None:
    parts = mp.approx_update_specs(d.s)
    d.finish = ((Group.APPROX, "approx_update", tuple(p for p in parts if p.group == Group.APPROX)),
                (Group.UPDATE, "", tuple(p for p in parts if p.group == Group.UPDATE)))


def _fused(d, _: str) -> None:
    d.finish = ((Group.APPROX, "approx_update", mp.approx_update_specs(d.s, fused=True)),)


def _render(value: str, r) -> dict:
    return {"approx_parts": r.parts.approx_update_parts(r.method, value == "fused")}


DIMENSION = Dimension(
    "au", 30,
    values(["split"], "kernels.j2:approx_first,approx_acc,update") + values(["fused"], "kernels.j2:approx_update_fused"),
    "split", "APPROX and UPDATE: dy = h sum b_i F_i then y += dy (split), or y += h sum b_i F_i in one pass",
    step={"split": _split, "fused": _fused}, writes=("finish",), render=_render)

"""pred: the predictor's copy F_l = F_1 (the paper's), or the first argument vectors from F_1."""
from __future__ import annotations

from autotune.specs import methodparts as mp
from autotune.specs.dimension import Dimension, values


def _copy(d, _: str) -> None:
    d.predictor_tail = (mp.copy_spec(),) if d.s > 1 else ()


def _direct(d, _: str) -> None:
    d.first_lc = (mp.lc_direct_spec(d.s),)


def _render(value: str, r) -> dict:
    return {"lc_direct_parts": [r.parts.lc_direct_part(r.method)] if value == "direct" else []}


DIMENSION = Dimension(
    "pred", 40, values(["copy"], "step.j2:copy_first") + values(["direct"], "kernels.j2:lc_direct"), "copy",
    "predictor: F_l = F_1 copied for the first corrector iteration (copy), or its argument "
    "vectors y + h c_l F_1 computed from F_1 directly (direct)",
    step={"copy": _copy, "direct": _direct}, writes=("predictor_tail", "first_lc"), render=_render)

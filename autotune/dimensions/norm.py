"""norm: where a controlled step's error norm is computed (docs/method.md, "Step-size control"):
in a sweep of its own after the step, or fused into the sweep that writes the new y."""
from __future__ import annotations

from autotune.specs.dimension import Dimension, values


def _render(value: str, _) -> dict:
    return {"norm_fused": value == "fused"}


def _priced(value: str) -> dict:
    return {"fused": value == "fused"}


DIMENSION = Dimension(
    "norm", 140,
    values(["none"], "solver.c.j2:norm_fused (none: a fixed step, no norm)")
    + values(["sweep"], "solver.c.j2:norm_fused (false: v_err's own sweep over y, the saved y and Y_s)",
             pipe="none")
    + values(["fused"], "solver.c.j2:norm_fused"), "none",
    "error norm of a controlled step: none (a fixed step), a sweep of its own over y, the saved y "
    "and Y_s after the step (sweep), or summed by the sweep that writes the new y as it writes it "
    "(fused: APPROX+UPDATE, the fused last RHS, the pipelined step's last level)",
    render=_render, control=_priced, paper=("none", "sweep"))

"""blocks: how an IVP of two coupled blocks stores them: one after the other, as its file writes
them (separate: part b reads the other block N away), or interleaved, u_0, v_0, u_1, v_1, ...
(interleaved: the coupled components are neighbours, so the pipelined step's window and the
ranks' exchanges need only the parts' reach).  An interleaved variant is priced, checked and
generated with the IVP's twin (specs.interleave, docs/method.md "Coupled blocks stored
interleaved"); its solver writes its result in the IVP's own order."""
from __future__ import annotations

from autotune.specs.dimension import Dimension, values
from autotune.specs.interleave import unfit
from autotune.specs.ivp import interleaved


def _ivp(value: str, ivp):
    """The IVP the value stores (the twin; a twin is its own), None where it has none."""
    return None if unfit(ivp) else interleaved(ivp)


# the driver's result (all n components, rank 0) put back in the blocked order: u_k at k, v_k at N + k
_OUTPUT = """double *blocked = malloc(sizeof(double) * n);
      for (long j = 0; j < n; ++j) blocked[(j % 2) * (n / 2) + j / 2] = all[j];
      free(all);
      all = blocked;"""


def _render(value: str, _) -> dict:
    return {"output_order": _OUTPUT if value == "interleaved" else None}


DIMENSION = Dimension(
    "blocks", 130,
    values(["separate"], "driver.c.j2:output_order (none: the IVP's own order)")
    + values(["interleaved"], "driver.c.j2:output_order (the twin's, put back in the IVP's order)",
             comm="allgather|neighbour"), "separate",
    "how an IVP of two coupled blocks stores them: one after the other, as its file writes them "
    "(separate), or interleaved point by point, the coupled components neighbours (interleaved: "
    "the IVP's twin, whose window and exchanges need only the parts' reach)",
    render=_render, ivp=_ivp)

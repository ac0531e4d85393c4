"""traversal: the order in which the pipelined step visits the components: row order (rows, the
flat vector's), or strips of the IVP's grid (strips), each swept plane by plane, so that the
levels' window is a few of a strip's planes whatever the grid's extent (specs.strips).  The
strips' width fills half of a core's share of the L2 (block=l2: the L1 holds no window of the
m s rings of a page each)."""
from __future__ import annotations

from autotune.dimensions.block import core_share
from autotune.errors import CannotRun
from autotune.specs.dimension import Dimension, PayFacts, values
from autotune.specs.grid import strides
from autotune.specs.strips import local_expr, strips_of, unfit

MAX_EDGE = 0.25     # the strips' edge work (the predictor's level's share) beyond which they cannot pay


def geometry(ivp, n: int, method, machine, block: str):
    """The strips a variant with this block runs over (specs.strips.strips_of)."""
    return strips_of(ivp, n, method.iterations, method.stages, core_share(machine, block))


def _render(value: str, r) -> dict:
    """strips: the geometry the solver's strips.c.j2 reads, and the levels' RHS of each argument
    vector i with its subscripts renamed to the strip's local offsets (strip_exprs)."""
    if value == "rows":
        return {"strips": None, "strip_exprs": None}
    why = unfit(r.ivp)
    s = geometry(r.ivp, r.n, r.method, r.machine, r.values["block"])
    if why or s is None:
        raise CannotRun(f"traversal=strips cannot run {r.ivp.name} at n = {r.n}: "
                         f"{why or 'no strip keeps its window in half the ' + r.values['block'].upper()}")
    part = r.ivp.rhs[0]
    expr = local_expr(part.expr, s, r.ivp.size_parameter, r.ivp.size_value(r.n))
    every = r.parts.all_stages(expr, part.arrays)
    return {"strips": {"dims": len(s.extents), "extents": s.extents, "gstrides": strides(s.extents),
                       "width": s.width, "lstrides": s.local_strides(), "reach": s.reach, "plane": s.plane,
                       "distance": s.distance, "ring": s.ring},
            "strip_exprs": [every.replace("[l][", f"[{i}][") for i in range(r.method.stages)]}


def _pays(value: str, f: PayFacts) -> str | None:
    why = unfit(f.ivp)
    if why:
        return why
    s = f.walk         # this variant's strips (_walk)
    if s is None:
        return f"no strip of the grid keeps its window in half a core's share of the {f.values['block'].upper()}"
    if s.width == s.extents[1:]:
        return "a strip as wide as the grid is row order"
    edge = s.edge_share(f.iterations)
    if edge > MAX_EDGE:
        return (f"strips of {' x '.join(map(str, s.width))} compute {edge:.0%} of the predictor's level "
                f"again at their edges")
    return None


def _walk(value: str, ivp, n: int, method, machine, values: dict):
    return geometry(ivp, n, method, machine, values["block"])


DIMENSION = Dimension(
    "traversal", 120,
    values(["rows"], "solver.c.j2:strips (none: the rows' wavefront)")
    + values(["strips"], "strips.c.j2:strips (its wavefront; solver.c.j2 reads strip_exprs)",
             pipe="wavefront", block="l2"), "rows",
    "order of the pipelined step's components: the flat vector's row order (rows), or strips of "
    "the IVP's grid swept plane by plane, the window a few of a strip's planes in L2 (strips)",
    render=_render, pays=_pays, walk=_walk)

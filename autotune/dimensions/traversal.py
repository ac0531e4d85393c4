"""traversal: the order in which the step's sweeps visit the components: row order (rows, the
flat vector's), or strips of the IVP's grid (strips), each swept plane by plane (specs.strips).
In the pipelined step the levels' window is then a few of a strip's planes whatever the grid's
extent, in the L2 (the L1 holds no window of the m s rings of a page each); in a fused or
separate sweep the RHS's layers are a few of a strip's planes, whole rows high, in the last
level.  Over strips the forms whose RHS sweeps differ only in the method's kernels are one each:
the one-pass LC, the direct predictor and the fused APPROX+UPDATE (which the fused and pipelined
forms take anyway)."""
from __future__ import annotations

from math import prod

from autotune.dimensions.block import core_share, last_share
from autotune.errors import CannotRun
from autotune.specs.dimension import Dimension, PayFacts, values
from autotune.specs.grid import strides
from autotune.specs.strips import local_expr, strips_of, unfit

MAX_EDGE = 0.25     # the strips' edge work (the predictor's level's share) beyond which they cannot pay


def geometry(ivp, n: int, method, machine, levels: int):
    """The strips a step with `levels` lagging levels (0: a sweep) runs over (specs.strips.strips_of):
    a pipelined step's window in the L2, a sweep's layers in the last level."""
    return strips_of(ivp, n, levels, method.stages, core_share(machine, "l2") if levels else last_share(machine))


def _render(value: str, r) -> dict:
    """strips: the geometry the pipelined step's strips.c.j2 reads, and its levels' RHS of each
    argument vector i with its subscripts renamed to the strip's local offsets (strip_exprs);
    or the runs a sweep visits its components in (runs: the solver's strip_runs)."""
    if value == "rows":
        return {"strips": None, "strip_exprs": None, "runs": None}
    why = unfit(r.ivp)
    pipelined = r.values["pipe"] != "none"
    s = geometry(r.ivp, r.n, r.method, r.machine, r.method.iterations if pipelined else 0)
    if why or s is None:
        raise CannotRun(f"traversal=strips cannot run {r.ivp.name} at n = {r.n}: "
                         f"{why or 'no strip keeps its ' + ('window in half the L2' if pipelined else 'layers in half the last level')}")
    grid = {"dims": len(s.extents), "extents": s.extents, "gstrides": strides(s.extents), "width": s.width}
    if not pipelined:
        counts = [-(-e // w) for e, w in zip(s.extents[1:], s.width)]
        return {"strips": None, "strip_exprs": None,
                "runs": dict(grid, counts=counts, strips=prod(counts), rows=prod(s.width[:-1]))}
    part = r.ivp.rhs[0]
    expr = local_expr(part.expr, s, r.ivp.size_parameter, r.ivp.size_value(r.n))
    every = r.parts.all_stages(expr, part.arrays)
    return {"strips": dict(grid, lstrides=s.local_strides(), reach=s.reach, plane=s.plane, distance=s.distance,
                           ring=s.ring),
            "strip_exprs": [every.replace("[l][", f"[{i}][") for i in range(r.method.stages)], "runs": None}


def _pays(value: str, f: PayFacts) -> str | None:
    why = unfit(f.ivp)
    if why:
        return why
    s = f.walk         # this variant's strips (_walk)
    if s is None:
        return ("no strip of the grid keeps a sweep's layers in half a core's share of the last level"
                if f.values["pipe"] == "none" else
                "no strip of the grid keeps the pipelined step's window in half a core's share of the L2")
    if s.width == s.extents[1:]:
        return ("a strip as wide as the grid is row order" + (
            " (a sweep's strips are whole rows: only a grid of 3 or more dimensions has them)"
            if s.iterations == 0 else ""))
    edge = s.edge_share(s.iterations)     # a pipelined step's levels reach m beyond; a sweep's none
    if edge > MAX_EDGE:
        return (f"strips of {' x '.join(map(str, s.width))} compute {edge:.0%} of the predictor's level "
                f"again at their edges")
    return None


def _walk(value: str, ivp, n: int, method, machine, levels: int):
    return geometry(ivp, n, method, machine, levels)


DIMENSION = Dimension(
    "traversal", 120,
    values(["rows"], "solver.c.j2:strips,runs (none: the rows' wavefront, the sweeps' j loops)")
    + values(["strips"], "strips.c.j2:strips (its wavefront; solver.c.j2 reads strip_exprs), solver.c.j2:runs "
             "(a sweep's strip_runs)", lc="jl-onepass", pred="direct", au="fused", block="none|l2"), "rows",
    "order of the sweeps' components: the flat vector's row order (rows), or strips of the IVP's "
    "grid swept plane by plane (strips): a pipelined step's window a few of a strip's planes in "
    "L2, a sweep's layers in the last level",
    render=_render, pays=_pays, walk=_walk)

"""fuse: separate sweeps (the paper's), or each RHS sweep followed tile by tile by the linear
combination that consumes it.  Its contributions lay out the step's blocks (the skeleton)."""
from __future__ import annotations

from autotune.specs import methodparts as mp
from autotune.specs.dimension import Dimension, values
from autotune.specs.step import OTHER, Block, Event, Group, Kind, Sweep, barrier, kernel


def _iteration(d, lc: Event) -> tuple[Event, ...]:
    every = tuple(f"Y{l}" for l in range(1, d.s + 1))
    return (lc, barrier("after LC")) + d.communicate(every, "communicate_all") + (
        d.corrector_rhs(d), barrier("after RHS"))


def _separate_blocks(d) -> tuple[Block, ...]:
    s, m = d.s, d.method.iterations
    predictor = d.communicate(("y",), "communicate_y") + (
        Event(Kind.KERNEL, Group.RHS, 1, "rhs_first", (Sweep(Group.RHS, None, (d.ybuf,), ("F1",)),)),
        barrier("after RHS"))
    if d.predictor_tail:
        copy = d.predictor_tail[0]
        predictor += (Event(Kind.KERNEL, Group.COPY, s - 1, "copy_first", tuple(
            Sweep(copy.group, copy.name, ("F1",), (f"F{l}",)) for l in range(2, s + 1))), barrier("after COPY"))
    lc = kernel(Group.LC, "lc", d.lc)
    if d.first_lc is not None:
        blocks = [Block("predictor", predictor),
                  Block("first iteration, from F_1", _iteration(d, kernel(Group.LCD, "lc_direct", d.first_lc))),
                  Block("iteration", _iteration(d, lc), m - 1)]
    else:
        blocks = [Block("predictor", predictor), Block("iteration", _iteration(d, lc), m)]
    finish = tuple(kernel(group, action, parts) for group, action, parts in d.finish)
    blocks.append(Block("finish", finish + (barrier("after UPDATE"),)))
    return tuple(b for b in blocks if b.repeat > 0)


def _separate_parts(d) -> tuple[mp.PartSpec, ...]:
    finish = tuple(p for _, _, parts in d.finish for p in parts)
    return d.lc + finish + ((d.pack,) if d.pack else ()) + (d.first_lc or d.predictor_tail)


def _fused_blocks(d) -> tuple[Block, ...]:
    """Every RHS sweep carries the kernel that consumes its F (the predictor's the first LC, from
    F_1 alone; the corrector's the next iteration's LC; the last one APPROX and UPDATE): 1 + m s
    RHS evaluations and communication phases as before, m + 1 sweeps.  A fused corrector sweep
    reads one set of argument vectors and writes the other (Y_l').  Where the RHS reads the
    argument vectors in place (no packed copy), a sweep cannot overwrite them while its
    neighbours' tiles still read them: the step alternates two sets (decided here, once every
    value has contributed where the RHS reads)."""
    d.sets = 1 if d.pack else 2
    every = range(1, d.s + 1)
    args = tuple(d.arg(l) for l in every)
    comm_all = d.communicate(tuple(f"Y{l}" for l in every), "communicate_all")
    first, nxt = tuple(f"Y{l}" for l in every), tuple(f"Y{l}{OTHER}" for l in every)
    blocks = [Block("predictor, fused with the first LC", d.communicate(("y",), "communicate_y") + (
                  Event(Kind.KERNEL, Group.RHSLCD, 1, "rhs_lcd", (Sweep(
                      Group.RHSLCD, None, tuple(dict.fromkeys((d.ybuf, "y"))), first,
                      first if d.streaming else ()),)),
                  barrier("after RHS+LC"))),
              Block("iteration, RHS fused with the next LC", comm_all + (
                  Event(Kind.KERNEL, Group.RHSLC, 1, "rhs_lc", (Sweep(
                      Group.RHSLC, None, args + ("y",), nxt, nxt if d.streaming else ()),), swaps=True),
                  barrier("after RHS+LC")), d.method.iterations - 1),
              Block("last iteration, RHS fused with APPROX+UPDATE", comm_all + (
                  Event(Kind.KERNEL, Group.RHSAU, 1, "rhs_au", (Sweep(Group.RHSAU, None, args + ("y",), ("y",)),)),
                  barrier("after RHS+UPDATE")))]
    return tuple(b for b in blocks if b.repeat > 0)


def _separate(d, _: str) -> None:
    d.skeleton, d.own_parts = _separate_blocks, _separate_parts


def _fused(d, _: str) -> None:
    d.skeleton, d.own_parts = _fused_blocks, lambda d: (d.pack,) if d.pack else ()


def _render(value: str, _) -> dict:
    return {"fuse": value != "none"}


DIMENSION = Dimension(
    "fuse", 70,
    values(["none"], "step.j2:lc")
    + values(["rhs-lc"], "step.j2:rhs_lc", lc="jl-onepass", rhs="onepass", pred="direct", au="fused"), "none",
    "RHS-LC fusion: separate sweeps (none), or each RHS sweep followed tile by tile by the "
    "linear combination that consumes it (rhs-lc: the predictor's with the first LC, the "
    "last with APPROX+UPDATE); F lives in a tile buffer, never in memory",
    step={"none": _separate, "rhs-lc": _fused}, writes=("skeleton", "own_parts", "sets"),
    reads=("lc", "first_lc", "predictor_tail", "finish", "pack", "corrector_rhs", "streaming"), render=_render)

"""What each value of a step-shaping dimension contributes to the step, and the step form of a
variant built from them (specs.step).  Pure.

A new value of lc, au, pred, buf, rhs or fuse is one entry here (plus its macro in variants/);
a new dimension that changes only the code around the step needs none.
"""
from __future__ import annotations

from functools import lru_cache

from autotune.specs import methodparts as mp
from autotune.specs.method import Method
from autotune.specs.step import (CONTRIBUTIONS, OTHER, Block, Draft, Event, Group, Kind, StepForm, Sweep, _barrier, _kernel,
                                 contributes, step_keys)
from autotune.specs.variants import Variant, lc_values


@contributes("lc", *lc_values())
def _lc(d: Draft, order: str) -> None:
    d.lc = mp.lc_specs(d.s, order)


@contributes("au", "split")
def _au_split(d: Draft, _: str) -> None:
    parts = mp.approx_update_specs(d.s, "split")
    d.finish = ((Group.APPROX, "approx_update", tuple(p for p in parts if p.group == Group.APPROX)),
                (Group.UPDATE, "", tuple(p for p in parts if p.group == Group.UPDATE)))


@contributes("au", "fused")
def _au_fused(d: Draft, _: str) -> None:
    d.finish = ((Group.APPROX, "approx_update", mp.approx_update_specs(d.s, "fused")),)


@contributes("pred", "copy")
def _pred_copy(d: Draft, _: str) -> None:
    d.predictor_tail = (mp.copy_spec(),) if d.s > 1 else ()


@contributes("pred", "direct")
def _pred_direct(d: Draft, _: str) -> None:
    d.first_lc = (mp.lc_direct_spec(d.s),)


@contributes("buf", "pack")
def _buf_pack(d: Draft, _: str) -> None:
    d.pack = mp.pack_spec()


@contributes("buf", "ghost")
def _buf_ghost(d: Draft, _: str) -> None:
    d.pack = None


@contributes("rhs", "stages")
def _rhs_stages(d: Draft, _: str) -> None:
    d.corrector_rhs = lambda d: Event(Kind.KERNEL, Group.RHS, d.s, "rhs_all", tuple(
        Sweep(Group.RHS, None, (d.arg(l),), (f"F{l}",)) for l in range(1, d.s + 1)))


@contributes("rhs", "onepass")
def _rhs_onepass(d: Draft, _: str) -> None:
    every = range(1, d.s + 1)
    d.corrector_rhs = lambda d: Event(Kind.KERNEL, Group.RHSALL, 1, "rhs_onepass", (
        Sweep(Group.RHSALL, None, tuple(d.arg(l) for l in every), tuple(f"F{l}" for l in every)),))


@contributes("fuse", "none")
def _separate(d: Draft, _: str) -> None:
    d.skeleton, d.own_parts = _separate_blocks, _separate_parts


@contributes("fuse", "rhs-lc")
def _fused(d: Draft, _: str) -> None:
    d.skeleton, d.own_parts = _fused_blocks, lambda d: (d.pack,) if d.pack else ()
    d.sets = 2 if d.values["buf"] == "ghost" else 1


@contributes("store", "none")
def _store_cached(d: Draft, _: str) -> None:
    d.streaming = False


@contributes("store", "nt")
def _store_streaming(d: Draft, _: str) -> None:
    d.streaming = True


def _iteration(d: Draft, lc: Event) -> tuple[Event, ...]:
    every = tuple(f"Y{l}" for l in range(1, d.s + 1))
    return (lc, _barrier("after LC")) + d.communicate(every, "communicate_all") + (
        d.corrector_rhs(d), _barrier("after RHS"))


def _separate_blocks(d: Draft) -> tuple[Block, ...]:
    s, m = d.s, d.method.iterations
    predictor = d.communicate(("y",), "communicate_y") + (
        Event(Kind.KERNEL, Group.RHS, 1, "rhs_first", (Sweep(Group.RHS, None, (d.ybuf,), ("F1",)),)),
        _barrier("after RHS"))
    if d.predictor_tail:
        copy = d.predictor_tail[0]
        predictor += (Event(Kind.KERNEL, Group.COPY, s - 1, "copy_first", tuple(
            Sweep(copy.group, copy.name, ("F1",), (f"F{l}",)) for l in range(2, s + 1))), _barrier("after COPY"))
    lc = _kernel(Group.LC, "lc", d.lc)
    if d.first_lc is not None:
        blocks = [Block("predictor", predictor),
                  Block("first iteration, from F_1", _iteration(d, _kernel(Group.LCD, "lc_direct", d.first_lc))),
                  Block("iteration", _iteration(d, lc), m - 1)]
    else:
        blocks = [Block("predictor", predictor), Block("iteration", _iteration(d, lc), m)]
    finish = tuple(_kernel(group, action, parts) for group, action, parts in d.finish)
    blocks.append(Block("finish", finish + (_barrier("after UPDATE"),)))
    return tuple(b for b in blocks if b.repeat > 0)


def _separate_parts(d: Draft) -> tuple[mp.PartSpec, ...]:
    finish = tuple(p for _, _, parts in d.finish for p in parts)
    return d.lc + finish + ((d.pack,) if d.pack else ()) + (d.first_lc or d.predictor_tail)


def _fused_blocks(d: Draft) -> tuple[Block, ...]:
    """fuse=rhs-lc: every RHS sweep carries the kernel that consumes its F (the predictor's the
    first LC, from F_1 alone; the corrector's the next iteration's LC; the last one APPROX and
    UPDATE): 1 + m s RHS evaluations and communication phases as before, m + 1 sweeps.  A
    fused corrector sweep reads one set of argument vectors and writes the other (Y_l')."""
    every = range(1, d.s + 1)
    args = tuple(d.arg(l) for l in every)
    comm_all = d.communicate(tuple(f"Y{l}" for l in every), "communicate_all")
    first, nxt = tuple(f"Y{l}" for l in every), tuple(f"Y{l}{OTHER}" for l in every)
    blocks = [Block("predictor, fused with the first LC", d.communicate(("y",), "communicate_y") + (
                  Event(Kind.KERNEL, Group.RHSLCD, 1, "rhs_lcd", (Sweep(
                      Group.RHSLCD, None, tuple(dict.fromkeys((d.ybuf, "y"))), first,
                      first if d.streaming else ()),)),
                  _barrier("after RHS+LC"))),
              Block("iteration, RHS fused with the next LC", comm_all + (
                  Event(Kind.KERNEL, Group.RHSLC, 1, "rhs_lc", (Sweep(
                      Group.RHSLC, None, args + ("y",), nxt, nxt if d.streaming else ()),), swaps=True),
                  _barrier("after RHS+LC")), d.method.iterations - 1),
              Block("last iteration, RHS fused with APPROX+UPDATE", comm_all + (
                  Event(Kind.KERNEL, Group.RHSAU, 1, "rhs_au", (Sweep(Group.RHSAU, None, args + ("y",), ("y",)),)),
                  _barrier("after RHS+UPDATE")))]
    return tuple(b for b in blocks if b.repeat > 0)


def step_form(method: Method, variant: Variant) -> StepForm:
    """The step of `variant` under `method` (built once per method and step-shaping values)."""
    return form_of(method, tuple(getattr(variant, k) for k in step_keys()))


@lru_cache(maxsize=512)
def form_of(method: Method, values: tuple[str, ...]) -> StepForm:
    """The step form of the step-shaping values (in step_keys() order)."""
    fields = dict(zip(step_keys(), values))
    d = Draft(method, fields)
    for key, value in fields.items():
        contribution = CONTRIBUTIONS[key].get(value)
        if contribution is None:
            raise ValueError(f"no step contribution for {key}={value}")
        contribution(d, value)
    return StepForm(method.stages, tuple(fields.items()), d.skeleton(d), d.own_parts(d), d.sets)

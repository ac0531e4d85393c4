"""What pricing a pool of variants needs that no scenario changes: the kernel parts of every form,
their executions and reuse distances, and each variant's form, scheme, barriers and overlap.

A Layout is built once per (IVP, method, variant pool) of a prediction run (Session) and then
priced for every scenario of that pool (pipeline.price).  It renders kernel parts (codegen), so
it lives with the orchestration, not the pure model.
"""
from __future__ import annotations

from typing import NamedTuple

from autotune.codegen import parts as kmod
from autotune.model import comm as commmod
from autotune.model import reuse
from autotune.model.schedule import StepCounts, step_counts
from autotune.specs.ivp import IVP
from autotune.specs.method import Method
from autotune.specs.parts import KernelPart
from autotune.specs.variants import Variant

RHS_SWEEPS = ("RHS", "RHSALL") + kmod.FUSED_GROUPS   # the sweeps that read communicated vectors


class Session:
    """What one prediction run (a rank, a sweep, one API call) computes once and drops when it
    ends: rendered kernel parts per IVP and method, step counts, network cost models, layouts.
    Keyed by the identity of specs the session holds for its whole life (hashing a Method's
    nested tuples thousands of times would cost more than the lookups save)."""

    def __init__(self) -> None:
        self._memo: dict[tuple, tuple] = {}

    def _get(self, kind: str, obj, make, *extra):
        key = (kind, id(obj), *extra)
        hit = self._memo.get(key)
        if hit is None or hit[0] is not obj:
            hit = self._memo[key] = (obj, make(obj, *extra))
        return hit[1]

    def rhs_parts(self, ivp: IVP, stages: int | None = None) -> tuple:
        """RHS parts with their spec index (of one argument vector; with stages, of all in one sweep)."""
        return self._get("rhs", ivp, lambda i, st: tuple(zip(kmod.rhs_parts(i, st), range(len(i.rhs)))), stages)

    def fused_parts(self, ivp: IVP, method: Method, group: str) -> tuple:
        """The parts of one fused sweep (fuse=rhs-lc) with their spec index."""
        return self._get("fused", ivp, lambda i, g, _: tuple(zip(kmod.fused_parts(i, method, g), range(len(i.rhs)))),
                         group, id(method))

    def method_parts(self, method: Method, lc: str, au: str, pred: str, buf: str, fuse: str) -> tuple:
        """The method's parts of one form (LC, predictor, APPROX/UPDATE, pack)."""
        return self._get("method", method, lambda m, *f: tuple(kmod.method_parts(m, *f)), lc, au, pred, buf, fuse)

    def distances(self, method: Method, form: tuple) -> dict:
        """Reuse distances of every part of one form over the step (model.reuse)."""
        def make(m, lc, au, pred, buf, rhs, fuse):
            return reuse.part_distances(reuse.step_sweeps(m, self.method_parts(m, lc, au, pred, buf, fuse), pred,
                                                          au, buf, rhs, fuse))
        return self._get("distances", method, make, *form)

    def counts(self, method: Method, pred: str = "copy", au: str = "split", rhs: str = "stages",
               fuse: str = "none") -> StepCounts:
        return self._get("counts", method, step_counts, pred, au, rhs, fuse)

    def network(self, network: dict):
        return self._get("network", network, commmod.network_model)

    def layout(self, ivp: IVP, method: Method, variants: list[Variant]) -> "Layout":
        key = ("layout", id(ivp), id(method), tuple(map(id, variants)))
        hit = self._memo.get(key)
        if hit is None:   # the value holds the keyed objects: their ids stay theirs
            hit = self._memo[key] = ((ivp, method, variants), build_layout(ivp, method, variants, self))
        return hit[1]


def form(v: Variant) -> tuple[str, str, str, str, str, str]:
    """What decides a variant's kernel parts (not its communication scheme, its overlap or its
    tile): the method's parts follow lc, au, pred, buf and fuse, the RHS parts rhs and fuse."""
    return v.lc, v.au, v.pred, v.buf, v.rhs, v.fuse


class Unit(NamedTuple):
    """A kernel part at one set of reuse distances: where its data comes from (its mix of
    regimes) is the same wherever the pool uses it."""
    part: KernelPart
    distances: tuple
    spec: int | None        # the IVP's RHS part it evaluates (its size and halo); None: a method part


class Slot(NamedTuple):
    unit: int               # index into Layout.units
    executions: int         # per step


class Form(NamedTuple):
    slots: tuple[int, ...]        # its parts' uses, in the order of the step's kernels
    rhs_slots: tuple[int, ...]    # those in RHS_SWEEPS (the overlap's interior), in order
    counts: StepCounts


class Layout(NamedTuple):
    units: tuple[Unit, ...]
    slots: tuple[Slot, ...]
    forms: tuple[Form, ...]
    variants: tuple[Variant, ...]
    form_of: tuple[int, ...]          # per variant: its form
    comm_keys: tuple[tuple[str, int], ...]   # (scheme, communication phases), in first use
    comm_of: tuple[int, ...]          # per variant: index into comm_keys
    barriers: tuple[int, ...]         # per variant: thread barriers per step (the overlap's included)
    overlap: tuple[bool, ...]
    by_name: tuple[int, ...]          # the variants in the order of their names
    distinct: tuple[int, ...]         # slots in the order failures are reported: the method parts'
    methods_end: int                  # (distinct[:methods_end], first use), then each RHS group's
    bound_slots: tuple[int, ...]      # one RHS slot per RHS part: what the floor's in-core time reads


def build_layout(ivp: IVP, method: Method, variants: list[Variant], session: Session) -> Layout:
    units: dict[tuple, int] = {}
    unit_list: list[Unit] = []
    slots: dict[tuple, int] = {}
    slot_list: list[Slot] = []

    def slot(part: KernelPart, dist: tuple, spec: int | None, executions: int) -> int:
        u = units.get((part.name, dist))
        if u is None:
            u = units[(part.name, dist)] = len(unit_list)
            unit_list.append(Unit(part, dist, spec))
        s = slots.get((u, executions))
        if s is None:
            s = slots[(u, executions)] = len(slot_list)
            slot_list.append(Slot(u, executions))
        return s

    rhs_groups: dict[tuple, tuple[int, ...]] = {}

    def rhs_slots(form_rhs: str, fuse: str, dist: dict, execs: dict[str, int]) -> tuple[int, ...]:
        """The RHS parts of one form: one argument vector's (the predictor's, and the corrector's s
        sweeps in the stage form), all s in one sweep; or the fused sweeps' parts."""
        key = (form_rhs, fuse) + tuple(dist.get(g) for g in ("RHS", "RHSALL") + kmod.FUSED_GROUPS)
        got = rhs_groups.get(key)
        if got is None:
            if fuse != "none":
                groups = [session.fused_parts(ivp, method, g) for g in kmod.FUSED_GROUPS]
            else:
                kinds = [None] + ([method.stages] if form_rhs == "onepass" else [])
                groups = [session.rhs_parts(ivp, stages) for stages in kinds]
            got = rhs_groups[key] = tuple(slot(part, dist[part.kernel], spec, execs[part.kernel])
                                          for group in groups for part, spec in group)
        return got

    forms: dict[tuple, int] = {}
    form_list: list[Form] = []
    method_slots: list[int] = []
    comm_keys: dict[tuple, int] = {}
    form_of, comm_of, barriers, overlap = [], [], [], []
    for v in variants:
        f = form(v)
        fi = forms.get(f)
        if fi is None:
            counts = session.counts(method, v.pred, v.au, v.rhs, v.fuse)
            dist = session.distances(method, f)
            # every communication phase first copies the node's block into the buffer the RHS reads
            execs = dict(counts.executions, PACK=counts.comm_phases)
            own = [slot(part, dist[part.name], None, execs[part.kernel])
                   for part in session.method_parts(method, *f[:4], v.fuse)]
            method_slots += own
            used = tuple(own) + rhs_slots(v.rhs, v.fuse, dist, execs)
            fi = forms[f] = len(form_list)
            form_list.append(Form(used, tuple(s for s in used if unit_list[slot_list[s].unit].part.kernel
                                              in RHS_SWEEPS), counts))
        counts = form_list[fi].counts
        laps = v.overlap != "none"
        form_of.append(fi)
        comm_of.append(comm_keys.setdefault((v.comm, counts.comm_phases), len(comm_keys)))
        # overlap=halo: the sweeps after each exchange run their interior while it is in flight,
        # in a parallel region of its own (one barrier more per exchange)
        barriers.append(counts.barriers + (counts.exchanges if laps else 0))
        overlap.append(laps)
    names = [v.name for v in variants]
    own = list(dict.fromkeys(method_slots))
    distinct = own + [s for group in rhs_groups.values() for s in group]
    last = {}
    for s in distinct:      # the floor reads the last use of each RHS part (of one vector, or one pass)
        part = unit_list[slot_list[s].unit].part
        if part.kernel in ("RHS", "RHSALL"):
            last[part.name] = s
    return Layout(tuple(unit_list), tuple(slot_list), tuple(form_list), tuple(variants), tuple(form_of),
                  tuple(comm_keys), tuple(comm_of), tuple(barriers), tuple(overlap),
                  tuple(sorted(range(len(names)), key=names.__getitem__)),
                  tuple(distinct), len(own), tuple(last.values()))

"""What pricing a pool of variants needs that no scenario changes: the kernel parts of every form,
their executions and reuse distances, and each variant's form, scheme, barriers and overlap.

A Layout is built once per (IVP, method, variant pool) of a prediction run (Session) and then
priced for every scenario of that pool (pipeline.pricebatch).  It renders kernel parts (codegen), so
it lives with the orchestration, not the pure model.
"""
from __future__ import annotations

import hashlib
from typing import NamedTuple

from autotune.model import comm as commmod
from autotune.model import reuse
from autotune.specs.ivp import IVP
from autotune.specs.method import Method
from autotune.specs.parts import KernelPart
from autotune.specs.step import FUSED_GROUPS, RHS_GROUPS, RHS_SWEEPS, Group, StepCounts, StepForm
from autotune.specs.stepvalues import step_form, step_keys
from autotune.specs.variants import DIMENSIONS, Variant
from autotune.specs.window import in_registers


LAYOUT_VERSION = 3      # bump where a layout's meaning changes without a change of code or specs


class Session:
    """What one prediction run (a rank, a sweep, one API call) computes once and drops when it
    ends: rendered kernel parts per IVP and method, reuse distances per step form, network cost
    models, layouts.  Keyed by the specs themselves (IVP and Method hash once, specs.ivp and
    specs.method).  With a store, layouts are also kept there between runs (storage.pickled),
    keyed by the specs, the pool's names and this installation's code."""

    def __init__(self, store=None) -> None:
        self._store = store
        self._parts: dict[tuple, tuple] = {}
        self._loops: dict[tuple, tuple] = {}
        self._distances: dict[tuple, dict] = {}
        self._networks: list[tuple[dict, object]] = []
        self._layouts: dict[tuple, Layout] = {}

    def sweep_parts(self, ivp: IVP, method: Method, group: Group) -> tuple:
        """The IVP's parts of one RHS sweep group with their spec index (codegen.parts.sweep_parts)."""
        key = (ivp, method, group)
        got = self._parts.get(key)
        if got is None:
            from autotune.codegen import parts as kmod       # Jinja: only where parts are rendered
            got = self._parts[key] = tuple(zip(kmod.sweep_parts(ivp, method, group), range(len(ivp.rhs))))
        return got

    def tile_loops(self, ivp: IVP, method: Method, group: str, streaming: bool) -> tuple:
        """Per part of a fused sweep, the loops the solver runs over each tile
        (codegen.parts.tile_loops)."""
        key = (ivp, method, group, streaming)
        got = self._loops.get(key)
        if got is None:
            from autotune.codegen import parts as kmod
            got = self._loops[key] = kmod.tile_loops(ivp, method, group, streaming)
        return got

    def distances(self, method: Method, step: StepForm) -> dict:
        """Reuse distances of every part of one step form over the step (model.reuse)."""
        key = (method, step.values)
        got = self._distances.get(key)
        if got is None:
            got = self._distances[key] = reuse.part_distances(step.sweeps())
        return got

    def network(self, network: dict):
        """The network cost model of a machine's network section (compared by value: a dict)."""
        for known, model in self._networks:
            if known is network or known == network:
                return model
        model = commmod.network_model(network)
        self._networks.append((network, model))
        return model

    def layout(self, ivp: IVP, method: Method, variants: list[Variant]) -> "Layout":
        key = (ivp, method, tuple(variants))
        got = self._layouts.get(key)
        if got is None:
            got = self._layouts[key] = self._kept_layout(ivp, method, variants)
        return got

    def _kept_layout(self, ivp: IVP, method: Method, variants: list[Variant]) -> "Layout":
        if self._store is None:
            return build_layout(ivp, method, variants, self)
        from autotune.storage import pickled
        text = repr((LAYOUT_VERSION, pickled.code_digest(), ivp, method, [v.name for v in variants]))
        key = hashlib.sha256(text.encode()).hexdigest()
        data = self._store.get_derived("layout", key)
        got = pickled.loads(data) if data is not None else None
        if isinstance(got, Layout) and got.variants == tuple(variants):
            return got
        got = build_layout(ivp, method, variants, self)
        self._store.put_derived("layout", key, pickled.dumps(got))
        return got


class Unit(NamedTuple):
    """A kernel part at one set of reuse distances: where its data comes from (its mix of
    regimes) is the same wherever the pool uses it."""
    part: KernelPart
    distances: tuple
    spec: int | None        # the IVP's RHS part it evaluates (its size and halo); None: a method part
    streams: tuple[str, ...] = ()   # its arrays written with non-temporal stores
    tiling: tuple = ()              # (key, value) of the dimensions that tile it (tile_of)
    extends: float = 0.0            # access distances it computes beyond a thread's region (Sweep)
    stores_f: bool = True           # its tile of F is stored and read back (False: F in registers)
    walking: tuple = ()             # (key, value) of the dimensions that reorder its window (walk_of)
    loops: tuple = ()               # a fused sweep's part outside a window: the loops it runs per tile
                                    # (specs.parts.TileLoop), each priced (model.loops)

    @property
    def windowed(self) -> bool:
        """Whether it touches a pipelined step's window (model.reuse: negative distances)."""
        return reuse.windowed(self.distances)

    def result_key(self, code: int) -> tuple:
        """Key of its priced ECM result in one regime: the analysis of its code, and how its
        writes (the same analysis without the write-allocate reads where it streams) and its tile
        are priced."""
        extra = (self.streams,) if self.streams else ()
        extra += (self.tiling,) if self.tiling and self.stores_f else ()
        return (self.part.code, code) + extra


def tiling(v: Variant) -> tuple[tuple[str, str], ...]:
    """The values of `v` that tile its fused sweeps: (key, value) of each dimension with a tile
    hook (specs.dimension) whose value is not its default (which tiles nothing)."""
    return tuple((k, getattr(v, k)) for k, d in DIMENSIONS.items() if d.tile and getattr(v, k) != d.default)


def tile_of(pairs: tuple[tuple[str, str], ...], machine, stages: int) -> int:
    """Components per tile of a unit tiled by `pairs` on `machine` (0: untiled)."""
    return max((DIMENSIONS[k].tile(value, machine, stages) for k, value in pairs), default=0)


def walking(v: Variant) -> tuple[tuple[str, str], ...]:
    """The values of `v` that reorder its sweeps (a dimension with a walk hook, not at its
    default, row order)."""
    return tuple((k, getattr(v, k)) for k, d in DIMENSIONS.items() if d.walk and getattr(v, k) != d.default)


def walk_for(pairs: tuple[tuple[str, str], ...], ivp: IVP, n: int, method: Method, machine, levels: int):
    """The geometry of the order the walking values `pairs` give (specs.dimension: walk) to a
    sweep with `levels` lagging levels (the method's m in a pipelined step's window, 0 in a
    sweep), at system size n; None: row order (specs.window), or an order that cannot run."""
    for k, value in pairs:
        got = DIMENSIONS[k].walk(value, ivp, n, method, machine, levels)
        if got is not None:
            return got
    return None


def walk_of(unit: Unit, ivp: IVP, n: int, method: Method, machine):
    """walk_for of a unit: its walking values, in its window or its sweep."""
    return walk_for(unit.walking, ivp, n, method, machine, method.iterations if unit.windowed else 0)


def overlaps(v: Variant) -> bool:
    """Whether the sweeps after an exchange of `v` compute while it is in flight."""
    return any(d.overlaps(getattr(v, k)) for k, d in DIMENSIONS.items() if d.overlaps)


def control_shape(v: Variant) -> tuple[tuple[str, object], ...]:
    """What `v`'s values change in the price of step-size control (specs.dimension: control), as
    the keyword arguments of model.control.control_cost they set; () for a fixed step."""
    got: dict = {}
    for k, d in DIMENSIONS.items():
        if d.control and getattr(v, k) != d.default:
            got.update(d.control(getattr(v, k)))
    return tuple(sorted(got.items()))


class Slot(NamedTuple):
    unit: int               # index into Layout.units
    executions: int         # per step


class Form(NamedTuple):
    slots: tuple[int, ...]        # its parts' uses, in the order of the step's kernels
    rhs_slots: tuple[int, ...]    # those in RHS_SWEEPS (the overlap's interior), in order
    counts: StepCounts
    windowed: bool = False        # its step is pipelined (its levels lag within one sweep)


class Layout(NamedTuple):
    units: tuple[Unit, ...]
    slots: tuple[Slot, ...]
    forms: tuple[Form, ...]
    variants: tuple[Variant, ...]
    form_of: tuple[int, ...]          # per variant: its form
    comm_keys: tuple[tuple[str, int, int], ...]   # (scheme, phases, halo in access distances), in first use
    comm_of: tuple[int, ...]          # per variant: index into comm_keys
    barriers: tuple[int, ...]         # per variant: thread barriers per step (the overlap's included)
    overlap: tuple[bool, ...]
    by_name: tuple[int, ...]          # the variants in the order of their names
    distinct: tuple[int, ...]         # slots in the order failures are reported: the method parts'
    methods_end: int                  # (distinct[:methods_end], first use), then each RHS group's
    bound_slots: tuple[int, ...]      # one RHS slot per RHS part: what the floor's in-core time reads
    control: tuple[tuple, ...] = ()   # per variant: its control_shape


def build_layout(ivp: IVP, method: Method, variants: list[Variant], session: Session) -> Layout:
    from autotune.codegen import parts as kmod       # Jinja: only where parts are rendered
    units: dict[tuple, int] = {}
    unit_list: list[Unit] = []
    slots: dict[tuple, int] = {}
    slot_list: list[Slot] = []

    def slot(part: KernelPart, dist: tuple, spec: int | None, executions: int, streams: tuple = (),
             tiles: tuple = (), extends: float = 0.0, walks: tuple = ()) -> int:
        # a pipelined level keeps F in registers where the IVP is one part over every component
        stores_f = not (reuse.windowed(dist) and in_registers(ivp))
        # the order changes the RHS's reads (its layers) and a window's parts, not the method's
        walks = walks if spec is not None or reuse.windowed(dist) else ()
        key = (part.name, dist, streams, tiles, extends, stores_f, walks)
        u = units.get(key)
        if u is None:
            u = units[key] = len(unit_list)
            loops = ()
            if part.kernel in FUSED_GROUPS and stores_f and not reuse.windowed(dist):
                loops = session.tile_loops(ivp, method, part.kernel, bool(streams))[spec]
            unit_list.append(Unit(part, dist, spec, streams, tiles, extends, stores_f, walks, loops))
        s = slots.get((u, executions))
        if s is None:
            s = slots[(u, executions)] = len(slot_list)
            slot_list.append(Slot(u, executions))
        return s

    rhs_groups: dict[tuple, tuple[int, ...]] = {}

    def rhs_slots(step: StepForm, dist: dict, execs: dict[str, int], tiles: tuple, walks: tuple) -> tuple[int, ...]:
        """The RHS parts of one form: one argument vector's (the predictor's, and the corrector's s
        sweeps in the stage form), all s in one sweep; or the fused sweeps' parts (and their tile)."""
        sweeps = step.rhs_groups
        streamed = step.streamed_groups
        extends = step.extends
        key = sweeps + tuple(dist.get(g) for g in RHS_SWEEPS) + streamed + (tiles, walks) + tuple(extends.items())
        got = rhs_groups.get(key)
        if got is None:
            groups = [session.sweep_parts(ivp, method, g) for g in sweeps]
            got = rhs_groups[key] = tuple(slot(part, dist[part.kernel], spec, execs[part.kernel],
                                               part.stores if part.kernel in streamed else (), tiles,
                                               extends.get(part.kernel, 0.0), walks)
                                          for group in groups for part, spec in group)
        return got

    forms: dict[tuple, int] = {}
    form_list: list[Form] = []
    method_slots: list[int] = []
    comm_keys: dict[tuple, int] = {}
    form_of, comm_of, barriers, overlap = [], [], [], []
    keys = step_keys()
    for v in variants:
        tiles, walks = tiling(v), walking(v)
        f = tuple(getattr(v, k) for k in keys) + (tiles, walks)   # the tile and the order price the fused parts
        fi = forms.get(f)
        if fi is None:
            step = step_form(method, v)
            counts = step.counts
            dist = session.distances(method, step)
            # every communication phase first copies the node's block into the buffer the RHS reads
            execs = dict(counts.executions, PACK=counts.comm_phases)
            own = [slot(part, dist[part.name], None, execs[part.kernel]) for part in kmod.method_parts(step)]
            method_slots += own
            used = tuple(own) + rhs_slots(step, dist, execs, tiles, walks)
            fi = forms[f] = len(form_list)
            form_list.append(Form(used, tuple(s for s in used if unit_list[slot_list[s].unit].part.kernel
                                              in RHS_SWEEPS), counts, any(sw.window for sw in step.sweeps())))
        counts = form_list[fi].counts
        laps = overlaps(v)
        form_of.append(fi)
        comm_of.append(comm_keys.setdefault((v.comm, counts.comm_phases, counts.ghost), len(comm_keys)))
        # overlapping: the sweeps after each exchange run their interior while it is in flight,
        # in a parallel region of its own (one barrier more per exchange)
        barriers.append(counts.barriers + (counts.exchanges if laps else 0))
        overlap.append(laps)
    names = [v.name for v in variants]
    own = list(dict.fromkeys(method_slots))
    distinct = own + [s for group in rhs_groups.values() for s in group]
    last = {}
    for s in distinct:      # the floor reads the last use of each RHS part (of one vector, or one pass)
        part = unit_list[slot_list[s].unit].part
        if part.kernel in RHS_GROUPS:
            last[part.name] = s
    return Layout(tuple(unit_list), tuple(slot_list), tuple(form_list), tuple(variants), tuple(form_of),
                  tuple(comm_keys), tuple(comm_of), tuple(barriers), tuple(overlap),
                  tuple(sorted(range(len(names)), key=names.__getitem__)),
                  tuple(distinct), len(own), tuple(last.values()), tuple(control_shape(v) for v in variants))

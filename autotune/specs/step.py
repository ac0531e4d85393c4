"""The step as a first-class object: one form of a PIRK time step, built once from the method and
a variant's values, that the schedule counts, the reuse model, the pricing layout, codegen and
variants/step.j2 all read.  Pure.

A StepForm holds the step's blocks of events in order; a kernel event names its kernel group,
the macro of variants/step.j2 that renders it, and its sweeps: each sweep names the method part
it runs (or, None, the IVP's RHS parts of its group) and the step's vectors it reads and writes.
The vectors are the node's blocks of y, dy, the argument vectors Y_l (Z_l: the second set that
fuse=rhs-lc with buf=ghost alternates with), the stage derivatives F_l and the communication
buffers B_l (By for y).

    predictor:  communicate y; F_1 = f(y); F_l = F_1 for l = 2..s (pred=copy)
    m times:    LC (the first from F_1 alone: pred=direct); communicate the s argument vectors;
                s RHS sweeps (or one over all s: rhs=onepass)
    finish:     APPROX; UPDATE (or both in one sweep: au=fused)

Each value of a dimension that shapes the step contributes its part to a Draft (the LC's parts,
the predictor's tail, the corrector's RHS, the finish, where the RHS reads its arguments, the
skeleton: autotune.dimensions, one module each); specs.stepvalues builds the form from them, in
the order the dimensions' declarations of what they write and read give (specs.dimension).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property, lru_cache
from typing import Callable

from autotune.specs.method import Method
from autotune.specs.methodparts import PartSpec


class Group(StrEnum):
    """Kernel groups: what a kernel event runs (the prices, phases and learned classes key on them)."""
    RHS = "RHS"          # the RHS of one argument vector
    RHSALL = "RHSALL"    # the RHS of all s argument vectors in one sweep
    RHSLCD = "RHSLCD"    # fused: the predictor's RHS with the first LC from F_1
    RHSLC = "RHSLC"      # fused: a corrector RHS with the next LC
    RHSAU = "RHSAU"      # fused: the last RHS with APPROX+UPDATE
    LC = "LC"
    LCD = "LCD"          # the first LC from F_1 alone (pred=direct)
    COPY = "COPY"        # F_l = F_1 (pred=copy)
    APPROX = "APPROX"
    UPDATE = "UPDATE"
    PACK = "PACK"        # a node's block copied into the communication buffer (buf=pack)


FUSED_GROUPS = (Group.RHSLCD, Group.RHSLC, Group.RHSAU)
RHS_GROUPS = (Group.RHS, Group.RHSALL)
RHS_SWEEPS = RHS_GROUPS + FUSED_GROUPS     # the sweeps that read communicated vectors


class Kind(StrEnum):
    KERNEL = "kernel"
    COMM = "comm"
    BARRIER = "barrier"


# the solver phase that times each group (a fused sweep is timed as the RHS it carries; the pack
# copy is part of communicating), and its in-core class for the learned factors (what a fused
# sweep computes is dominated by its RHS)
PHASE = {Group.RHS: "RHS", Group.RHSALL: "RHS", Group.RHSLCD: "RHS", Group.RHSLC: "RHS", Group.RHSAU: "RHS",
         Group.LC: "LC", Group.LCD: "LC", Group.COPY: "COPY", Group.PACK: "COMM",
         Group.APPROX: "APPROX+UPDATE", Group.UPDATE: "APPROX+UPDATE"}
CORE_CLASS = {Group.RHS: "RHS", Group.RHSALL: "RHS", Group.RHSLCD: "RHS", Group.RHSLC: "RHS", Group.RHSAU: "RHS",
              Group.LC: "LC", Group.LCD: "LC", Group.COPY: "COPY", Group.PACK: "COPY",
              Group.APPROX: "APPROX+UPDATE", Group.UPDATE: "APPROX+UPDATE"}


# the fused sweeps are timed one by one (the solver's sweep timers, reported as "sweep.<name>"):
# the predictor's sweep, corrector sweep i (1 ..), the final sweep
SWEEP_TIMER = {Group.RHSLCD: "pred", Group.RHSLC: "corr", Group.RHSAU: "final"}
SWEEP_PREFIX = "sweep."


OTHER = "'"   # suffix of a vector of the other argument set: Y1' is Z1 while Y1 is the current set


@dataclass(frozen=True)
class Sweep:
    """One sweep over the node's components: the method part it runs (None: the IVP's RHS parts
    of its group) and the step's vectors it reads and writes."""
    group: str
    part: str | None
    reads: tuple[str, ...]
    writes: tuple[str, ...] = ()
    streams: tuple[str, ...] = ()   # of its writes, those written with non-temporal stores (store=nt)
    window: tuple[str, ...] = ()    # of its vectors, those only a pipelined step's window of
                                    # components holds at a time (pipe=wavefront: model.reuse)
    extends: float = 0.0            # components it computes beyond each side of a thread's region,
                                    # in access distances (pipe=wavefront: the neighbours' share)
    vectors: tuple[str, ...] = field(init=False, compare=False, repr=False)   # read or written, once each

    def __post_init__(self):
        object.__setattr__(self, "vectors", tuple(dict.fromkeys(self.reads + self.writes)))


@dataclass(frozen=True)
class Event:
    kind: Kind
    what: str        # the kernel group; "vector" for communication; why, for a barrier
    count: int = 1   # executions (argument vectors) per occurrence
    action: str = "" # its macro of variants/step.j2 ("" where another event's macro covers it)
    sweeps: tuple[Sweep, ...] = ()
    swaps: bool = False   # after it, the argument sets swap (fuse=rhs-lc with buf=ghost)
    timed: bool = True    # a fused sweep with a timer of its own (not one inside a pipelined step)
    ghost: int = 1        # an exchange's halo in access distances (pipe=wavefront: m + 1, once per step)


@dataclass(frozen=True)
class Block:
    """A run of events, repeated (the corrector iteration runs m times)."""
    name: str
    events: tuple[Event, ...]
    repeat: int = 1


@dataclass(frozen=True)
class StepCounts:
    executions: dict[str, int]   # kernel group -> executions per step
    comm_phases: int             # argument vectors communicated per step
    barriers: int
    exchanges: int = 0           # communication events (each followed by the sweep that reads them)
    ghost: int = 1               # the widest exchange's halo, in access distances


@dataclass(frozen=True)
class StepForm:
    stages: int
    values: tuple[tuple[str, str], ...]     # the step-shaping dimension values it was built from
    blocks: tuple[Block, ...]
    method_parts: tuple[PartSpec, ...]      # in the model's order: LC, APPROX/UPDATE, pack, predictor
    sets: int = 1                           # argument vector sets (2: fused sweeps alternate Y and Z)

    def events(self) -> list[Event]:
        """Every event of one step in order (the repeated blocks written out)."""
        return [e for block in self.blocks for _ in range(block.repeat) for e in block.events]

    def sweeps(self) -> list[Sweep]:
        """Every sweep of one step in order, with the argument set of each occurrence resolved."""
        return list(self._sweeps)

    @cached_property
    def _sweeps(self) -> tuple[Sweep, ...]:
        names = ("Y", "Z")[:self.sets]
        out, cur = [], 0
        for e in self.events():
            def real(v: str) -> str:
                if v[0] != "Y":
                    return v
                k = (cur + v.endswith(OTHER)) % len(names)
                return names[k] + v[1:].rstrip(OTHER)
            touched = any(v[-1] == OTHER for sw in e.sweeps for v in sw.writes + sw.reads)
            out += [Sweep(sw.group, sw.part, tuple(map(real, sw.reads)), tuple(map(real, sw.writes)),
                          tuple(map(real, sw.streams)), tuple(map(real, sw.window)), sw.extends)
                    if touched or cur else sw for sw in e.sweeps]
            cur = (cur + e.swaps) % len(names)
        return tuple(out)

    @cached_property
    def streamed_groups(self) -> tuple[Group, ...]:
        """The groups whose sweeps write with non-temporal stores (store=nt), in RHS_SWEEPS order."""
        run = {sw.group for sw in self._sweeps if sw.streams}
        return tuple(g for g in RHS_SWEEPS if g in run)

    @cached_property
    def timers(self) -> tuple[tuple[str, Group], ...]:
        """The sweep timers of one step in order: (name, group) per timed sweep, e.g.
        ("sweep.pred", RHSLCD), ("sweep.corr1", RHSLC), ..., ("sweep.final", RHSAU); () where the
        step has no fused sweep."""
        out, corr = [], 0
        for e in self.events():
            what = SWEEP_TIMER.get(e.what) if e.kind is Kind.KERNEL and e.timed else None
            if what == "corr":
                corr += 1
                what += str(corr)
            if what:
                out.append((SWEEP_PREFIX + what, Group(e.what)))
        return tuple(out)

    @cached_property
    def extends(self) -> dict[str, float]:
        """Per kernel group whose sweeps compute beyond a thread's region (pipe=wavefront), the
        mean of how far, in access distances (Sweep.extends)."""
        out: dict[str, list[float]] = {}
        for sw in self._sweeps:
            if sw.extends:
                out.setdefault(str(sw.group), []).append(sw.extends)
        return {g: sum(v) / len(v) for g, v in out.items()}

    @cached_property
    def rhs_groups(self) -> tuple[Group, ...]:
        """The groups of the sweeps that evaluate the IVP's RHS parts, in RHS_SWEEPS order."""
        run = {e.what for b in self.blocks for e in b.events if e.kind is Kind.KERNEL}
        return tuple(g for g in RHS_SWEEPS if g in run)

    @cached_property
    def counts(self) -> StepCounts:
        execs: Counter = Counter()
        comm = barriers = exchanges = 0
        ghost = 1
        for e in self.events():
            if e.kind is Kind.KERNEL:
                execs[str(e.what)] += e.count
            elif e.kind is Kind.COMM:
                comm += e.count
                exchanges += 1
                ghost = max(ghost, e.ghost)
            else:
                barriers += e.count
        return StepCounts(dict(execs), comm, barriers, exchanges, ghost)

    def describe(self) -> str:
        """The step as text: blocks, events with their macro, sweeps with what they read and write."""
        lines = [f"step of {', '.join(f'{k}={v}' for k, v in self.values)} (s = {self.stages})"]
        for b in self.blocks:
            lines.append(f"  {b.name}" + (f"  x{b.repeat}" if b.repeat > 1 else ""))
            for e in b.events:
                if e.kind is Kind.BARRIER:
                    lines.append(f"    barrier ({e.what})")
                    continue
                head = f"{e.kind} {e.what}" + (f" x{e.count}" if e.count > 1 else "")
                lines.append(f"    {head:<18} macro {e.action or '-'}" + ("  (sets swap)" if e.swaps else ""))
                for sw in e.sweeps:
                    lines.append(f"      {sw.part or sw.group + ' parts of the IVP':<28} reads "
                                 f"{','.join(sw.reads) or '-'}  writes {','.join(sw.writes) or '-'}"
                                 + ("  (non-temporal)" if sw.streams else "")
                                 + (f"  (window: {','.join(sw.window)})" if sw.window else ""))
        return "\n".join(lines)


# ---- building a form: each step-shaping value's contribution ----

def _vector(array: str, row: int) -> str:
    return array if array in ("y", "dy") else f"{array}{row + 1}"


@lru_cache(maxsize=1024)
def part_sweep(spec: PartSpec) -> Sweep:
    """A method part's sweep: its arrays as the step's vectors (Y row l -> Y_l+1, F row i -> F_i+1)."""
    rows = spec.rows()
    reads, writes = [], []
    for a in dict.fromkeys((a.array, a.mode) for a in spec.accesses):
        vectors = [_vector(a[0], r) for r in rows[a[0]]]
        if "r" in a[1]:
            reads += vectors
        if "w" in a[1]:
            writes += vectors
    return Sweep(spec.group, spec.name, tuple(dict.fromkeys(reads)), tuple(dict.fromkeys(writes)))


def kernel(group: Group, action: str, parts: tuple[PartSpec, ...], count: int = 1) -> Event:
    return Event(Kind.KERNEL, group, count, action, tuple(part_sweep(p) for p in parts))


def barrier(why: str) -> Event:
    return Event(Kind.BARRIER, why)


@dataclass
class Draft:
    """What the contributions fill in before the skeleton lays out the blocks."""
    method: Method
    values: dict[str, str]
    lc: tuple[PartSpec, ...] = ()
    first_lc: tuple[PartSpec, ...] | None = None      # None: the first iteration's LC is the LC
    predictor_tail: tuple[PartSpec, ...] = ()
    finish: tuple[tuple[Group, str, tuple[PartSpec, ...]], ...] = ()
    pack: PartSpec | None = None                      # where the RHS reads copies of its arguments
    corrector_rhs: Callable[["Draft"], Event] | None = None
    skeleton: Callable[["Draft"], tuple[Block, ...]] | None = None
    own_parts: Callable[["Draft"], tuple[PartSpec, ...]] | None = None
    sets: int = 1
    streaming: bool = False      # a fused sweep writes its argument vectors with non-temporal stores

    @property
    def s(self) -> int:
        return self.method.stages

    def arg(self, l: int) -> str:
        """The vector the RHS reads for argument vector l."""
        return f"B{l}" if self.pack else f"Y{l}"

    @property
    def ybuf(self) -> str:
        return "By" if self.pack else "y"

    def communicate(self, sources: tuple[str, ...], action: str, ghost: int = 1) -> tuple[Event, ...]:
        pack = self.pack
        packs = tuple(Sweep(pack.group, pack.name, (v,), (self.ybuf if v == "y" else f"B{v[1:]}",))
                      for v in sources) if pack else ()
        # with buf=pack the exchange opens a parallel region, the pack of its vectors: a barrier
        # event; without it the exchange runs between two kernels' regions and adds none
        return (Event(Kind.COMM, "vector", len(sources), action, packs, ghost=ghost),) + (
            (barrier("after the pack"),) if pack else ())

"""What a variant dimension is: its values with their rules, and the hooks the pipeline asks of it.
Pure.

A dimension is one module of autotune.dimensions (or of a package that declares the entry point
group "autotune.dimensions") that defines DIMENSION.  Every hook is optional; the pipeline loops
over the dimensions and asks each for what it has, so no module outside a dimension's own names
one of its values (docs/design.md#variant-dimensions):

- step:    per value, its contribution to the step form (specs.step.Draft); a dimension without
           one leaves the step as it is.  One with it declares the Draft fields it writes (its
           hook, and the skeleton or own_parts it installs, change no other: specs.stepvalues
           checks), those others write that it reads, and the dimensions whose write of a field
           it replaces (overrides).  The hooks run in the order these give (step_order: writers
           before readers, the overridden before the overrider, otherwise by position); a
           conflict is an error at discovery
- render:  its part of the solver template's context (variants/solver.c.j2); two keys are the
           solver's to place: "preamble" (lines before its code, which every dimension may add
           to) and "rhs_bodies_all" (per RHS part of the IVP, its body over all s argument
           vectors, for the parts' entries)
- tile:    the components per tile of the fused sweep a value asks for (0: none; asked only of
           values other than the default), which the pricing turns into where the tile lives
           (model.loops, model.tiles)
- overlaps: whether the sweeps after an exchange compute while it is in flight
- walk:    the order the step's sweeps visit the components in, where a value changes it: the
           geometry (distance, and for a pipelined step's window ring, window_bytes(),
           edge_share(reach)) for the IVP, size, method, machine and the levels that lag within
           one sweep (the method's m in a pipelined step, 0 in a sweep that visits each
           component once); None where it cannot run (its pays hook says why); asked only of
           values other than the default (row order)
- pays:    why a value does not pay in a scenario (None: it may), from facts the pipeline offers;
           asked only of values other than the default
- ivp:     the IVP as a value stores it, where the value changes how the components are
           stored (blocks=interleaved: the IVP's twin, specs.interleave): the IVP the pipeline
           prices, checks and generates that variant with (specs.variants.ivp_for), or None
           where the value cannot store this IVP (the pool then has none of its variants); asked
           only of values other than the default, and a value that returns the IVP unchanged
           is not a storage of its own (the IVP already is stored that way)
- control: a dimension of step-size control (docs/method.md, "Step-size control"): its default is
           the fixed step's (no control) and its other values exist only where a scenario
           controls its step (specs.variants: a Space's controlled); per value, what it changes in
           the control's price (model.control: the keyword arguments of control_cost it sets)
- paper:   the values of the paper's form (the baseline of the fast forms)
"""
from __future__ import annotations

from dataclasses import MISSING, dataclass, field, fields
from functools import cached_property
from typing import Any, Callable, Iterable, Mapping, Protocol

from autotune.specs.step import Draft


@dataclass(frozen=True)
class Value:
    """One value of a dimension: what it renders (a macro of variants/kernels.j2 or step.j2, a
    template file under variants/, or a variable the solver template reads, "file:name[,name]"
    then a note) and where it applies (every other dimension's allowed values; a variant that
    breaks a rule is not in the pool)."""
    name: str
    renders: str
    requires: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def applies(self, fields: dict[str, str]) -> bool:
        return all(fields[key] in allowed for key, allowed in self.requires)


def values(names, renders: str, **requires: str) -> tuple[Value, ...]:
    """Values that render the same way ("{}" in renders is each name) under the same rules
    (key="a|b": the other dimension's allowed values)."""
    rules = tuple((k, tuple(v.split("|"))) for k, v in requires.items())
    return tuple(Value(n, renders.format(n), rules) for n in names)


class RenderInput(Protocol):
    """What a render hook may read: the specs of the solver it is part of, and the renderer of the
    method's kernel parts (codegen.parts, handed in: dimensions sit below codegen)."""
    ivp: Any
    method: Any
    machine: Any
    n: int                     # the system size the solver is generated for
    values: dict               # the variant's value of every dimension (by key)
    parts: Any


class PayFacts(Protocol):
    """What a pays hook may read about one variant in one scenario (pipeline.applicable)."""
    n: int
    nodes: int
    vector_bytes: float        # one of the node's vectors of n_p components
    llc_bytes: float           # what the last-level cache holds of the node's data
    stages: int                # the method's s
    iterations: int            # the method's m
    distance: int              # the IVP's access distance at n
    threads: int               # the node's busy cores
    region: float              # components of one thread's share of its rank's block
    tile: int                  # components per tile of the variant's fused sweeps (0: untiled)
    walk: Any                  # the geometry of its sweeps' order (walk hooks; None: row order)
    ivp: Any                   # the scenario's IVP (specs.ivp)
    machine: Any               # the scenario's machine (specs.machine)
    values: Mapping[str, str]  # the variant's value of every dimension (by key)

    def next_reads(self) -> tuple[float, ...]:
        """The reuse distance (in vectors) at which the step next reads each vector its sweeps
        write with non-temporal stores."""


Contribution = Callable[[Any, str], None]


@dataclass(frozen=True)
class Dimension:
    key: str
    position: int                  # where its key stands in names and fields (lower: earlier)
    choices: tuple[Value, ...]
    default: str | None            # the paper's form (left out of names); None: always named
    description: str               # one line: list variants and the docs' table
    step: Mapping[str, Contribution] = field(default_factory=dict)
    writes: tuple[str, ...] = ()       # the Draft fields its step hook writes
    reads: tuple[str, ...] = ()        # the fields others write that its hook (or what it installs) reads
    overrides: tuple[str, ...] = ()    # the dimensions that write a field it writes too: its write wins
    render: Callable[[str, RenderInput], dict] | None = None
    tile: Callable[[str, Any, int], int] | None = None
    overlaps: Callable[[str], bool] | None = None
    walk: Callable[..., Any] | None = None
    pays: Callable[[str, PayFacts], str | None] | None = None
    ivp: Callable[[str, Any], Any] | None = None
    control: Callable[[str], Mapping[str, Any]] | None = None
    paper: tuple[str, ...] | None = None   # None: the default (every value where it has none)

    def __post_init__(self):
        if self.default is not None and self.default not in self.values:
            raise ValueError(f"dimension {self.key!r}: default {self.default!r} is not one of its values")
        if len(set(self.values)) != len(self.values):
            raise ValueError(f"dimension {self.key!r}: a value is listed twice")
        if self.step and set(self.step) != set(self.values):
            raise ValueError(f"dimension {self.key!r}: step contributions for {sorted(self.step)}, "
                             f"values {list(self.values)}")
        if self.control is not None and (self.default is None or len(self.values) < 2):
            raise ValueError(f"dimension {self.key!r}: a step-control dimension needs a default (the fixed step's) "
                             f"and a value for a controlled step")
        if self.step and not self.writes:
            raise ValueError(f"dimension {self.key!r}: a step hook that declares no Draft field it writes")
        if not self.step and (self.writes or self.reads or self.overrides):
            raise ValueError(f"dimension {self.key!r}: declares what a step hook writes, reads or overrides, "
                             f"but has no step hook")

    @property
    def values(self) -> tuple[str, ...]:
        return tuple(v.name for v in self.choices)

    def values_for(self, controlled: bool) -> tuple[str, ...]:
        """Its values in a scenario with step-size control or without: every value, except for a
        step-control dimension (its default without control, its other values with it)."""
        if self.control is None:
            return self.values
        return tuple(v for v in self.values if (v == self.default) != controlled)

    def value(self, name: str) -> Value:
        return self._by_name[name]

    @cached_property
    def _by_name(self) -> dict[str, Value]:
        return {v.name: v for v in self.choices}

    @cached_property
    def paper_values(self) -> frozenset[str]:
        if self.paper is not None:
            return frozenset(self.paper)
        return frozenset(self.values if self.default is None else (self.default,))


def ordered(found: list[Dimension]) -> dict[str, Dimension]:
    """The dimensions by position, checked: one key and one position each, every rule names
    another dimension's values, and the step hooks' declarations give an order (step_order)."""
    out: dict[str, Dimension] = {}
    for dim in sorted(found, key=lambda d: d.position):
        if dim.key in out:
            raise ValueError(f"duplicate variant dimension {dim.key!r}")
        clash = next((d.key for d in out.values() if d.position == dim.position), None)
        if clash:
            raise ValueError(f"variant dimensions {clash!r} and {dim.key!r} share position {dim.position}")
        out[dim.key] = dim
    for dim in out.values():
        for v in dim.choices:
            for key, allowed in v.requires:
                if key == dim.key or key not in out or set(allowed) - set(out[key].values):
                    raise ValueError(f"dimension {dim.key!r}, value {v.name!r}: bad rule {key}={'|'.join(allowed)}")
    step_order(out.values())
    return out


# The Draft fields a step hook may write: those with a default (method and values are its inputs)
FILLED = frozenset(f.name for f in fields(Draft) if f.default is not MISSING or f.default_factory is not MISSING)


def step_order(dims: Iterable[Dimension]) -> tuple[str, ...]:
    """The keys of the dimensions with a step hook, in the order the hooks run: a field's writers
    before its readers, an overridden dimension before the one that overrides it, otherwise by
    position.  Checked: each writes fields the Draft lets hooks fill, reads fields a dimension
    writes or the Draft has a default for, and overrides a dimension that writes one of its
    fields; two writers of a field are ordered by an override; the declarations make no cycle."""
    hooked = sorted((d for d in dims if d.step), key=lambda d: d.position)
    by_key = {d.key: d for d in hooked}
    writers: dict[str, list[str]] = {}
    for d in hooked:
        for f in d.writes:
            if f not in FILLED:
                raise ValueError(f"dimension {d.key!r} writes {f!r}, not a field of the step's Draft "
                                 f"that hooks fill ({', '.join(sorted(FILLED))})")
            writers.setdefault(f, []).append(d.key)
    before: dict[str, dict[str, str]] = {d.key: {} for d in hooked}   # key -> {key run before it: why}
    for d in hooked:
        for o in d.overrides:
            if not set(d.writes) & set(by_key[o].writes if o in by_key else ()):
                raise ValueError(f"dimension {d.key!r} overrides {o!r}, which writes none of its fields "
                                 f"({', '.join(d.writes)})")
            before[d.key][o] = f"{d.key!r} overrides {o!r}"
        for f in d.reads:
            if f not in writers and f not in FILLED:
                raise ValueError(f"dimension {d.key!r} reads {f!r}, which no dimension writes "
                                 f"and the step's Draft has no default for")
            for w in writers.get(f, ()):
                if w != d.key:
                    before[d.key].setdefault(w, f"{d.key!r} reads {f!r} that {w!r} writes")
    for f, keys in writers.items():
        for i, a in enumerate(keys):
            for b in keys[i + 1:]:
                if b not in by_key[a].overrides and a not in by_key[b].overrides:
                    raise ValueError(f"dimensions {a!r} and {b!r} both write {f!r} and neither declares "
                                     f"that it overrides the other")
    order: list[str] = []
    while len(order) < len(hooked):
        ready = next((d.key for d in hooked if d.key not in order and set(before[d.key]) <= set(order)), None)
        if ready is None:
            raise ValueError("the step hooks' declarations make a cycle: "
                             + _cycle([d.key for d in hooked if d.key not in order], before))
        order.append(ready)
    return tuple(order)


def _cycle(left: list[str], before: dict[str, dict[str, str]]) -> str:
    """Why the hooks of `left` (each waiting for another of them) wait for each other: one cycle."""
    path = [left[0]]
    while True:
        nxt = next(k for k in before[path[-1]] if k in left)
        if nxt in path:
            loop = path[path.index(nxt):] + [nxt]
            return "; ".join(before[a][b] for a, b in zip(loop, loop[1:]))
        path.append(nxt)

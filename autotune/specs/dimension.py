"""What a variant dimension is: its values with their rules, and the hooks the pipeline asks of it.
Pure.

A dimension is one module of autotune.dimensions (or of a package that declares the entry point
group "autotune.dimensions") that defines DIMENSION.  Every hook is optional; the pipeline loops
over the dimensions and asks each for what it has, so no module outside a dimension's own names
one of its values (docs/design.md#variant-dimensions):

- step:    per value, its contribution to the step form (specs.step.Draft); a dimension without
           one leaves the step as it is
- render:  its part of the solver template's context (variants/solver.c.j2); two keys are the
           solver's to place: "preamble" (lines before its code, which every dimension may add
           to) and "rhs_bodies_all" (per RHS part of the IVP, its body over all s argument
           vectors, for the parts' entries)
- tile:    the components per tile of the fused sweep a value asks for (0: none; asked only of
           values other than the default), which the pricing turns into where the tile lives
           (model.tiles)
- overlaps: whether the sweeps after an exchange compute while it is in flight
- pays:    why a value does not pay in a scenario (None: it may), from facts the pipeline offers;
           asked only of values other than the default
- paper:   the values of the paper's form (the baseline of the fast forms)
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable, Mapping, Protocol


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
    render: Callable[[str, RenderInput], dict] | None = None
    tile: Callable[[str, Any, int], int] | None = None
    overlaps: Callable[[str], bool] | None = None
    pays: Callable[[str, PayFacts], str | None] | None = None
    paper: tuple[str, ...] | None = None   # None: the default (every value where it has none)

    def __post_init__(self):
        if self.default is not None and self.default not in self.values:
            raise ValueError(f"dimension {self.key!r}: default {self.default!r} is not one of its values")
        if len(set(self.values)) != len(self.values):
            raise ValueError(f"dimension {self.key!r}: a value is listed twice")
        if self.step and set(self.step) != set(self.values):
            raise ValueError(f"dimension {self.key!r}: step contributions for {sorted(self.step)}, "
                             f"values {list(self.values)}")

    @property
    def values(self) -> tuple[str, ...]:
        return tuple(v.name for v in self.choices)

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
    """The dimensions by position, checked: one key and one position each, and every rule names
    another dimension's values."""
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
    return out

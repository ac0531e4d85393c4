"""An IVP's components as a grid: its extent per dimension and its stencil's reach per
dimension (the IVP file's `grid`, docs/method.md "The IVP's structure").  Pure.

The components stay a flat vector in row order (the last dimension fastest), and every RHS
expression stays written in the flat index `j`: a grid only says how a flat offset splits into
one offset per dimension, `o = sum_i d_i g_i` with `g_i` the product of the extents inside
dimension `i`, and how far the stencil reaches in each (`|d_i| <= reach_i`).  A traversal that
visits the components in another order (column strips) renames the offsets from that split.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from math import prod

from autotune.specs.formula import FormulaError, evaluate

# an array reference and its subscript: y[j-N], w[j + 1]
SUBSCRIPT = re.compile(r"\b([A-Za-z_]\w*)\s*\[([^\[\]]*)\]")
_OFFSET = re.compile(r"^\s*j\s*(?:([+-])\s*(.+?))?\s*$")
SAMPLE_SIZES = (7, 16)      # where the declaration is checked against n and the subscripts


class GridError(ValueError):
    pass


@dataclass(frozen=True)
class Grid:
    extent: tuple[str, ...]      # formulas in the size parameter, the outermost dimension first
    reach: tuple[int, ...]       # the stencil's reach in each dimension

    def extents(self, size_parameter: str, size: int) -> tuple[int, ...]:
        return tuple(int(evaluate(e, {size_parameter: size})) for e in self.extent)

    @property
    def dims(self) -> int:
        return len(self.extent)


def strides(extents: tuple[int, ...]) -> tuple[int, ...]:
    """Row order: the flat distance between neighbours along each dimension."""
    return tuple(prod(extents[i + 1:]) for i in range(len(extents)))


def split(offset: int, extents: tuple[int, ...], reach: tuple[int, ...]) -> tuple[int, ...] | None:
    """The per-dimension offsets (d_0, ..., d_last) of a flat offset, each within its reach; None
    where there are none (the offset is no neighbour of the stencil)."""
    out, rest = [], offset
    for g in strides(extents):
        d = (2 * rest + g) // (2 * g)          # the nearest multiple of g (ties up)
        out.append(d)
        rest -= d * g
    if rest or any(abs(d) > r for d, r in zip(out, reach)):
        return None
    return tuple(out)


def subscript_offset(index: str, size_parameter: str, size: int) -> int | None:
    """The flat offset of one subscript `j`, `j + f` or `j - f` (f a formula in the size
    parameter) at one size; None where the subscript has another form."""
    m = _OFFSET.match(index)
    if not m:
        return None
    if not m.group(1):
        return 0
    try:
        value = evaluate(m.group(2), {size_parameter: size})
    except FormulaError:
        return None
    if value != int(value):
        return None
    return int(value) if m.group(1) == "+" else -int(value)


def uses_position(expr: str) -> bool:
    """Whether an expression reads the component's index j other than in its subscripts (a
    coefficient that depends on where the component is)."""
    return re.search(r"\bj\b", SUBSCRIPT.sub("", expr)) is not None


def check(grid: Grid, n_formula: str, size_parameter: str, exprs: list[str]) -> None:
    """GridError naming what is wrong: a reach per dimension, the extents' product n, and every
    subscript of every expression a neighbour within the reach."""
    if len(grid.reach) != grid.dims:
        raise GridError(f"'reach' has {len(grid.reach)} entries for {grid.dims} dimension(s) in 'extent'")
    for size in SAMPLE_SIZES:
        try:
            ext = grid.extents(size_parameter, size)
            n = int(evaluate(n_formula, {size_parameter: size}))
        except FormulaError as e:
            raise GridError(f"'extent': {e}") from None
        if prod(ext) != n:
            raise GridError(f"the extents {' x '.join(map(str, ext))} at {size_parameter} = {size} make "
                            f"{prod(ext)} components, not n = {n}")
        for expr in exprs:
            for array, index in SUBSCRIPT.findall(expr):
                o = subscript_offset(index, size_parameter, size)
                if o is None:
                    raise GridError(f"subscript {array}[{index}]: expected j, j + offset or j - offset "
                                    f"(an offset a formula in {size_parameter})")
                if split(o, ext, grid.reach) is None:
                    raise GridError(f"subscript {array}[{index}] (offset {o} at {size_parameter} = {size}) is "
                                    f"no neighbour within the reach {list(grid.reach)} of the extents "
                                    f"{' x '.join(map(str, ext))}")

"""The data view of a kernel part: its loop nest as kerncraft's layer-condition predictor (LC) can
read it, for the cache half of an analysis (the in-core half analyses the part's own code).

kerncraft's LC predictor wants every array index to follow the loop order (the innermost loop
indexes the last dimension) and fails to order offsets that are symbols (y[j-N] against y[j-1]:
N might be 1).  The view therefore
- writes out the short literal loops inside the component loop j (the stage and summand loops,
  of s or fewer trips), in their order, as one block per j: the same accesses in the same order,
  with literal rows (Y[l][j] -> Y[0][j], Y[1][j], ...), so one iteration of the view is `unroll`
  iterations of the part, and its cache traffic per cache line of work is `unroll` times the
  part's (the analysis divides it out);
- puts the value of the size parameter (the growing access distance of a stencil) in place of its
  name, so every offset is a number;
- reads the method's coefficients (a[l][i], b[i]: a few doubles, always in L1) as scalars: indexed
  by an outer loop (lc.acc.ijl's summand loop i), they would break the index order for nothing;
- gives a row array indexed by a loop that is not the next one out from j (F[i][j] inside
  `for i: for l: for j`, lc.acc.ilj; Y[l][j] in lc.acc.lij) a dimension of extent PAD (a
  constant of value 1, VIEW_CONSTANTS) per loop between: F[4][PAD][M] read as F[i][0][j] names
  the same addresses, and the index order is then the loop order.  Without it kerncraft refuses
  the layer conditions, and the part's cache half is simulated (20-30 s an analysis where the
  layer conditions take a tenth of one).  The analysis uses such a view only where the sweep's
  rows outgrow every faster level (model.regime.sweep_outgrows_faster_levels): there the two
  count the same lines (docs/usage.md).
Pure text work on the part's rendered code.
"""
from __future__ import annotations

import re
from itertools import product

from autotune.specs.parts import KernelPart

PAD = "PAD_"
VIEW_CONSTANTS = {PAD: 1}     # the kerncraft constants a view may name beyond the part's own
_FOR = re.compile(r"^\s*for \(int (\w+) = ([^;]+); \1 < ([^;]+); \1(\+\+| \+= \d+)\)\s*$")


def data_view(part: KernelPart, constants: dict[str, int]) -> str | None:
    """The view of the part's code at these kerncraft constants; None where it has none (a body
    that is a block inside a short loop: written out it would nest blocks; an array whose row
    indices would need different paddings)."""
    lines = part.code.rstrip("\n").split("\n")
    heads = [i for i, line in enumerate(lines) if _FOR.match(line)]
    if not heads or [lp.var for lp in part.loops] != [_FOR.match(lines[i]).group(1) for i in heads]:
        return None
    decls, loop_lines = lines[:heads[0]], [lines[i] for i in heads]
    body = " ".join(line.strip() for line in lines[heads[-1] + 1:])
    names = [lp.var for lp in part.loops]
    inner = part.loops[names.index("j") + 1:]
    if inner:
        if body.startswith("{"):
            return None
        stmts = []
        for values in product(*(range(int(lp.start), int(lp.stop), lp.step) for lp in inner)):
            stmt = body
            for lp, v in zip(inner, values):
                stmt = re.sub(rf"\b{lp.var}\b", str(v), stmt)
            stmts.append(stmt)
        body = "{ " + " ".join(stmts) + " }"
        loop_lines = loop_lines[:len(part.loops) - len(inner)]
    for name in part.constants:
        body = re.sub(rf"\b{name}(\[[^\]]*\])+", name, body)
        decls = [re.sub(rf"^double {name}(\[[^\]]*\])+;$", f"double {name};", d) for d in decls]
    padded = _padded(decls, body, [_FOR.match(line).group(1) for line in loop_lines])
    if padded is None:
        return None
    decls, body = padded
    depth = len(loop_lines)
    text = "\n".join(decls + loop_lines + ["  " * depth + body]) + "\n"
    if part.size_parameter:
        text = re.sub(rf"\b{part.size_parameter}\b", str(constants[part.size_parameter]), text)
    return text


def view_constants(view: str) -> dict[str, int]:
    """The constants of VIEW_CONSTANTS the view names (kerncraft -D them beside the part's)."""
    return {k: v for k, v in VIEW_CONSTANTS.items() if re.search(rf"\b{k}\b", view)}


_ROW = re.compile(r"^double (\w+)\[(\d+)\]\[M\];$")
_INDEX = re.compile(r"\s*(\w+)\s*(?:[+-]\s*\d+\s*)?")      # a loop index, maybe with an offset: i, i - 1


def _padded(decls: list[str], body: str, loops: list[str]) -> tuple[list[str], str] | None:
    """decls and body with every row array X[R][M] whose row index is the loop k places out from
    j (k > 1) declared X[R][PAD]...[M] (k - 1 PADs) and read X[r][0]...[j]; as they are where every
    row index is the next loop out (or a literal); None where one array's row indices would need
    different paddings."""
    rows = {m.group(1): m for d in decls if (m := _ROW.match(d))}
    need: dict[str, int] = {}
    for name in rows:
        for index in re.findall(rf"\b{re.escape(name)}\[([^\]]+)\]\[", body):
            var = _INDEX.fullmatch(index)
            if var is None or var.group(1) not in loops:
                continue            # a literal row (Y[0][j]): the same address under any padding
            k = len(loops) - 1 - loops.index(var.group(1))
            if need.setdefault(name, k) != k:
                return None
    for name, k in need.items():
        if k > 1:
            decls = [f"double {name}[{rows[name].group(2)}]{f'[{PAD}]' * (k - 1)}[M];" if d == rows[name].group(0)
                     else d for d in decls]
            body = re.sub(rf"\b({re.escape(name)}\[[^\]]+\])", lambda m, k=k: m.group(1) + "[0]" * (k - 1), body)
    return decls, body

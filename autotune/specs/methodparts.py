"""The method's kernel parts as data: each part's loops, the macro of variants/kernels.j2 that
writes its body, its arrays, coefficients and accesses.  Pure.

One declaration per part serves every reader: codegen renders the body from the macro, the step
form (specs.step) reads the accesses to know which of the step's vectors a sweep reads and writes,
and the model reads them for the part's layer condition.  Nothing parses the rendered C to
learn what a part touches; a test checks that the declared accesses are those of the body.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from autotune.specs.parts import Access, Loop

@dataclass(frozen=True)
class PartSpec:
    name: str                                # e.g. "lc.acc.jli"
    group: str                               # its kernel group (specs.step.Group)
    loops: tuple[Loop, ...]
    macro: str                               # the macro of variants/kernels.j2 for its body
    macro_args: tuple                        # its arguments (the stage count where it writes sums out)
    arrays: tuple[tuple[str, int], ...]      # (name, rows)
    coefficients: tuple[str, ...]            # method coefficients it reads (a, b, c, h)
    accesses: tuple[Access, ...]

    def rows(self) -> dict[str, tuple[int, ...]]:
        """The rows of each array the body touches: a literal index is that row, a loop index its
        range; a one-row array its row 0."""
        ranges = {lp.var: range(int(lp.start), int(lp.stop), lp.step) for lp in self.loops
                  if lp.start.isdigit() and lp.stop.isdigit()}
        out: dict[str, set] = {}
        for a in self.accesses:
            got = out.setdefault(a.array, set())
            if a.index is None:
                got.add(0)
            else:
                got.update([int(a.index)] if a.index.isdigit() else ranges.get(a.index, range(0)))
        return {name: tuple(sorted(r)) for name, r in out.items()}


def _range(var: str, s: int) -> Loop:
    return {"i": Loop("i", "1", str(s)), "l": Loop("l", "0", str(s)), "j": Loop("j", "0", "M")}[var]


def _loops(order: str, s: int) -> tuple[Loop, ...]:
    return tuple(_range(v, s) for v in order)


def _acc(*items: str) -> tuple[Access, ...]:
    """Accesses from "Y[l]:w", "y:r" shorthand."""
    out = []
    for item in items:
        ref, mode = item.split(":")
        array, _, index = ref.partition("[")
        out.append(Access(array, index.rstrip("]") or None, mode))
    return tuple(out)


def _all_rows(array: str, s: int, mode: str) -> tuple[str, ...]:
    return tuple(f"{array}[{i}]:{mode}" for i in range(s))


@lru_cache(maxsize=None)
def lc_specs(s: int, order: str, one_pass: bool = False) -> tuple[PartSpec, ...]:
    """LC in the loop order `order` (outermost first): first summand, the others, finish; or, one
    pass, one perfect nest of the loops `order` (argument vector and component) with the stage
    sum written out."""
    YF = (("Y", s), ("F", s))
    if one_pass:
        outer = order
        return (PartSpec(f"lc.onepass.{outer}", "LC", _loops(outer, s), "lc_onepass", (s,), YF + (("y", 1),),
                         ("a", "h"), _acc("Y[l]:w", "y:r", *_all_rows("F", s, "r"))),)
    outer = "".join(v for v in order if v != "i")
    parts = [PartSpec(f"lc.first.{outer}", "LC", _loops(outer, s), "lc_first", (), YF, ("a",),
                      _acc("Y[l]:w", "F[0]:r"))]
    if s > 1:   # one stage has no further summands
        parts.append(PartSpec(f"lc.acc.{order}", "LC", _loops(order, s), "lc_acc", (), YF, ("a",),
                              _acc("Y[l]:rw", "F[i]:r")))
    parts.append(PartSpec(f"lc.fin.{outer}", "LC", _loops(outer, s), "lc_fin", (), (("Y", s), ("y", 1)), ("h",),
                          _acc("Y[l]:rw", "y:r")))
    return tuple(parts)


@lru_cache(maxsize=None)
def approx_update_specs(s: int, fused: bool = False) -> tuple[PartSpec, ...]:
    """APPROX and UPDATE: dy = h sum_i b_i F_i, then y += dy (the paper's form), or, fused,
    y += h sum_i b_i F_i in one pass with the sum written out."""
    j, ji = _loops("j", s), _loops("ji", s)
    if fused:
        return (PartSpec("approx_update.fused", "APPROX", j, "approx_update_fused", (s,), (("y", 1), ("F", s)),
                         ("b", "h"), _acc("y:rw", *_all_rows("F", s, "r"))),)
    parts = [PartSpec("approx.first", "APPROX", j, "approx_first", (), (("dy", 1), ("F", s)), ("b", "h"),
                      _acc("dy:w", "F[0]:r"))]
    if s > 1:
        parts.append(PartSpec("approx.acc.ji", "APPROX", ji, "approx_acc", (), (("dy", 1), ("F", s)), ("b", "h"),
                              _acc("dy:rw", "F[i]:r")))
    parts.append(PartSpec("update", "UPDATE", j, "update", (), (("y", 1), ("dy", 1)), (), _acc("y:rw", "dy:r")))
    return tuple(parts)


@lru_cache(maxsize=None)
def lc_direct_spec(s: int) -> PartSpec:
    """The first corrector iteration's argument vectors straight from the predictor's F_1:
    Y_l = y + h c_l F_1 (the row sums of A are c), instead of copying F_1 into every stage."""
    return PartSpec("lc.direct.jl", "LCD", _loops("jl", s), "lc_direct", (), (("Y", s), ("F", s), ("y", 1)),
                    ("c", "h"), _acc("Y[l]:w", "y:r", "F[0]:r"))


def _copy(name: str, group: str) -> PartSpec:
    return PartSpec(name, group, (Loop("j", "0", "M"),), "pack", (), (("b", 1), ("v", 1)), (), _acc("b:w", "v:r"))


@lru_cache(maxsize=None)
def pack_spec() -> PartSpec:
    """Copy of a node's block into the buffer the RHS reads (once per communication phase): b = v."""
    return _copy("comm.pack", "PACK")


@lru_cache(maxsize=None)
def copy_spec() -> PartSpec:
    """The predictor's copy F_l = F_1 (s - 1 times per step).  The same loop as comm.pack, so the
    same code and the same ECM analysis."""
    return _copy("predictor.copy", "COPY")

"""Kernel parts of a PIRK time step, rendered from the Jinja templates in variants/.

Every basic kernel (LC, RHS, APPROX, UPDATE) is split into perfectly nested
parts, each analysed by kerncraft on its own.  A part's code depends on the
method's stage count (a literal) and the loop order, never on the system size:
sizes enter as the kerncraft constants M (components per node in the loop) and,
for stencils whose access distance grows with the problem, the IVP's size
parameter.  That keeps one ECM result valid for every size in a cache regime.
"""
from __future__ import annotations

import math
import re
from functools import lru_cache

import jinja2

from autotune.errors import InputError
from autotune.specs.formula import FormulaError, evaluate
from autotune.specs.shipped import shipped_dir
from autotune.specs.ivp import IVP, RhsPart
from autotune.specs.parts import KernelPart, Loop
from autotune.specs.variants import ONE_PASS_SUFFIX
from autotune.specs.method import Method


@lru_cache(maxsize=1)
def env() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(shipped_dir("variants"))),
                              undefined=jinja2.StrictUndefined, keep_trailing_newline=True)


def macros():
    return env().get_template("kernels.j2").module


def _render(decls, loops, body) -> str:
    return env().get_template("kernel.c.j2").render(decls=decls, loops=loops, body=body)


def _unroll(loops: tuple[Loop, ...]) -> int:
    """Product of the literal trip counts of the loops nested inside the j loop."""
    names = [lp.var for lp in loops]
    return math.prod(lp.trips for lp in loops[names.index("j") + 1:])


def _method_part(name, kernel, loops, body, arrays, coefficients, s) -> KernelPart:
    """A part of LC/APPROX/UPDATE: vectors of M components, method coefficients a (s x s), b (s), h."""
    shapes = {"a": f"[{s}][{s}]", "b": f"[{s}]", "c": f"[{s}]", "h": ""}
    decls = [f"double {arr}[{rows}][M]" if rows > 1 else f"double {arr}[M]" for arr, rows in arrays]
    decls += [f"double {c}{shapes[c]}" for c in coefficients]
    loops = tuple(loops)
    iters = float(math.prod(lp.trips for lp in loops if lp.var != "j"))
    return KernelPart(name, kernel, _render(decls, loops, body), loops, tuple(arrays),
                      iterations_per_m=iters, unroll=_unroll(loops), constants=tuple(coefficients), body=body)


def _range(var: str, s: int) -> Loop:
    return {"i": Loop("i", "1", str(s)), "l": Loop("l", "0", str(s)), "j": Loop("j", "0", "M")}[var]


def lc_parts(method: Method, order: str) -> list[KernelPart]:
    """LC in the loop order `order` (outermost first): first summand, the others, finish; or, for a
    one-pass form ("jl-onepass"), one perfect nest with the stage sum rendered."""
    s, m = method.stages, macros()
    if order.endswith(ONE_PASS_SUFFIX):
        outer = order[:-len(ONE_PASS_SUFFIX)]
        return [_method_part(f"lc.onepass.{outer}", "LC", [_range(v, s) for v in outer], str(m.lc_onepass(s)),
                             (("Y", s), ("F", s), ("y", 1)), ("a", "h"), s)]
    outer = [v for v in order if v != "i"]
    arrays_acc = (("Y", s), ("F", s))
    parts = [_method_part(f"lc.first.{''.join(outer)}", "LC", [_range(v, s) for v in outer],
                          str(m.lc_first()), arrays_acc, ("a",), s)]
    if s > 1:  # one stage has no further summands
        parts.append(_method_part(f"lc.acc.{order}", "LC", [_range(v, s) for v in order],
                                  str(m.lc_acc()), arrays_acc, ("a",), s))
    parts.append(_method_part(f"lc.fin.{''.join(outer)}", "LC", [_range(v, s) for v in outer],
                              str(m.lc_fin()), (("Y", s), ("y", 1)), ("h",), s))
    return parts


def approx_update_parts(method: Method, au: str = "split") -> list[KernelPart]:
    """APPROX and UPDATE: dy = h sum_i b_i F_i, then y += dy (split, the paper's form), or
    y += h sum_i b_i F_i in one pass with the sum written out (fused)."""
    s, m = method.stages, macros()
    j, i = Loop("j", "0", "M"), Loop("i", "1", str(s))
    if au == "fused":
        return [_method_part("approx_update.fused", "APPROX", [j], str(m.approx_update_fused(s)),
                             (("y", 1), ("F", s)), ("b", "h"), s)]
    parts = [_method_part("approx.first", "APPROX", [j], str(m.approx_first()),
                          (("dy", 1), ("F", s)), ("b", "h"), s)]
    if s > 1:
        parts.append(_method_part("approx.acc.ji", "APPROX", [j, i], str(m.approx_acc()),
                                  (("dy", 1), ("F", s)), ("b", "h"), s))
    parts.append(_method_part("update", "UPDATE", [j], str(m.update()), (("y", 1), ("dy", 1)), (), s))
    return parts


def lc_direct_part(method: Method) -> KernelPart:
    """The first corrector iteration's argument vectors straight from the predictor's F_1:
    Y_l = y + h c_l F_1 (the row sums of A are c), instead of copying F_1 into every stage."""
    s = method.stages
    return _method_part("lc.direct.jl", "LCD", [_range("j", s), _range("l", s)], str(macros().lc_direct()),
                        (("Y", s), ("F", s), ("y", 1)), ("c", "h"), s)


def method_parts(method: Method, lc: str, au: str, pred: str, buf: str = "pack",
                 fuse: str = "none") -> list[KernelPart]:
    """The method's kernel parts of one variant (LC, the predictor's, APPROX/UPDATE, and the pack
    where the argument vectors are copied into the communication buffers).  With fuse=rhs-lc the
    fused sweeps (fused_parts) do the method's work: only the pack is left."""
    if fuse != "none":
        return [pack_part(method)] if buf == "pack" else []
    parts = lc_parts(method, lc) + approx_update_parts(method, au)
    if buf == "pack":
        parts.append(pack_part(method))
    if pred == "direct":
        parts.append(lc_direct_part(method))
    elif method.stages > 1:
        parts.append(copy_part(method))
    return parts


def _copy(name: str, kernel: str, method: Method) -> KernelPart:
    return _method_part(name, kernel, [Loop("j", "0", "M")], str(macros().pack()), (("b", 1), ("v", 1)), (),
                        method.stages)


def pack_part(method: Method) -> KernelPart:
    """Copy of a node's block into the buffer the RHS reads (once per communication phase)."""
    return _copy("comm.pack", "PACK", method)


def copy_part(method: Method) -> KernelPart:
    """The predictor's copy F_l = F_1 (s - 1 times per step).  The same loop as comm.pack, so
    the same code and the same ECM analysis."""
    return _copy("predictor.copy", "COPY", method)


_IDENT = re.compile(r"\b([A-Za-z_]\w*)\b")
ANALYSIS_FUNCTIONS = ("fmax", "fmin")   # allowed in RHS expressions; see for_analysis


def for_analysis(expr: str) -> str:
    """kerncraft accepts only arithmetic on arrays and scalars: fmax(a, b) and fmin(a, b) become
    (a + b) in the analysed code, one floating-point operation for one (vmaxpd vs vaddpd)."""
    out, i = [], 0
    pattern = re.compile(r"\b(%s)\s*\(" % "|".join(ANALYSIS_FUNCTIONS))
    while True:
        m = pattern.search(expr, i)
        if not m:
            out.append(expr[i:])
            return "".join(out)
        out.append(expr[i:m.start()])
        depth, j, comma = 1, m.end(), None
        while depth:
            ch = expr[j]
            depth += (ch == "(") - (ch == ")")
            if ch == "," and depth == 1:
                comma = j
            j += 1
        a, b = expr[m.end():comma], expr[comma + 1:j - 1]
        out.append(f"(({for_analysis(a.strip())}) + ({for_analysis(b.strip())}))")
        i = j


def rhs_parts(ivp: IVP, stages: int | None = None) -> list[KernelPart]:
    """The RHS of one argument vector per part of the IVP; with `stages`, of all s argument
    vectors in one sweep (rhs=onepass: the component loop outside, the stage loop inside)."""
    m = macros()
    return [_rhs_part(ivp, part, m, stages) for part in ivp.rhs]


def all_stages(expr: str, arrays) -> str:
    """An RHS expression of one argument vector made one of argument vector l: y[j-1] -> y[l][j-1]."""
    return re.sub(r"\b(%s)\[" % "|".join(map(re.escape, arrays)), r"\1[l][", expr)


def _rhs_part(ivp: IVP, part: RhsPart, m, stages: int | None = None) -> KernelPart:
    try:
        halo_value = evaluate(part.halo, {ivp.size_parameter: 1_000_003})
    except FormulaError as e:
        raise InputError(f"{ivp.path}: field 'rhs.{part.name}.halo': {e}") from None
    symbolic = halo_value > 1_000  # grows with the problem: keep it a kerncraft constant
    halo = ivp.size_parameter if symbolic and part.halo.strip() == ivp.size_parameter else part.halo
    if symbolic and halo != ivp.size_parameter:
        raise InputError(f"{ivp.path}: field 'rhs.{part.name}.halo': a growing halo must be the size "
                         f"parameter {ivp.size_parameter} itself, got {part.halo!r}")
    if not symbolic:
        halo = str(int(halo_value))
    names = set(_IDENT.findall(part.expr)) - set(ANALYSIS_FUNCTIONS)
    uses_size = ivp.size_parameter in names
    if uses_size and not symbolic:
        raise InputError(f"{ivp.path}: field 'rhs.{part.name}.expr': the size parameter "
                         f"{ivp.size_parameter} may appear only as a growing access distance")
    scalars = tuple(k for k, _ in ivp.constants if k in names)
    size = "M" if halo == "0" else f"M + 2*{halo}"
    rows, names = stages or 1, (*part.arrays, "F")
    decls = [f"double {a}[{stages}][{size}]" if stages else f"double {a}[{size}]" for a in names]
    decls += [f"double {c}" for c in scalars]
    start = halo if part.start == 0 else f"{halo} + {part.start}"
    loops = (Loop("j", start, f"M + {halo}" if halo != "0" else "M", part.step),)
    expr, rhs = part.expr, m.rhs
    if stages:
        loops += (Loop("l", "0", str(stages)),)
        expr, rhs = all_stages(part.expr, part.arrays), m.rhs_all
    code = _render(decls, loops, str(rhs(for_analysis(expr))))
    return KernelPart(f"rhs.{ivp.name}.{part.name}" + (".onepass" if stages else ""),
                      "RHSALL" if stages else "RHS", code, loops, tuple((a, rows) for a in names), halo=halo,
                      size_parameter=ivp.size_parameter if symbolic else None,
                      iterations_per_m=rows / part.step, unroll=rows, components=part.components,
                      step=part.step, constants=scalars, body=str(rhs(expr)))


# fuse=rhs-lc: the RHS of a sweep's argument vectors consumed at once, per component, by the
# linear combination that follows it.  Kernel group -> (rows of the argument vectors read,
# the statements that consume the stage derivatives f0..f{s-1}, at component k = j - halo).
FUSED_GROUPS = ("RHSLCD", "RHSLC", "RHSAU")


def _consume(group: str, s: int) -> tuple[int, list[str], tuple[str, ...]]:
    fsum = lambda coef: " + ".join(f"{coef}[{i}]*f{i}" for i in range(s))   # noqa: E731
    if group == "RHSLCD":   # the predictor's f(y), then the first iteration's Y_l = y + h c_l f
        return 1, [f"Yn[{l}][k] = u[k] + h * c[{l}] * f0;" for l in range(s)], ("c", "h")
    if group == "RHSLC":    # Y_l = y + h sum_i a_li f_i
        return s, [f"Yn[{l}][k] = u[k] + h * ({fsum(f'a[{l}]')});" for l in range(s)], ("a", "h")
    return s, [f"u[k] = u[k] + h * ({fsum('b')});"], ("b", "h")    # RHSAU: y += h sum_i b_i f_i


def fused_parts(ivp: IVP, method: Method, group: str) -> list[KernelPart]:
    """The kernel parts kerncraft analyses for one fused sweep (group in FUSED_GROUPS), one per RHS
    part: the stage derivatives as scalars f0..f{s-1}, written out (s is a literal), consumed in
    the same iteration.  The solver computes them tile by tile into a small buffer instead (the
    same memory traffic: F never leaves the cache)."""
    s = method.stages
    rows, consume, coefficients = _consume(group, s)
    out = []
    for rhs in rhs_parts(ivp):
        spec = next(p for p in ivp.rhs if f"rhs.{ivp.name}.{p.name}" == rhs.name)
        halo = rhs.halo
        k = "j" if halo == "0" else f"j - {halo}"
        size = "M" if halo == "0" else f"M + 2*{halo}"
        names = spec.arrays
        if rows > 1:
            exprs = [re.sub(r"\b(%s)\[" % "|".join(map(re.escape, names)), rf"\1[{i}][", for_analysis(spec.expr))
                     for i in range(rows)]
        else:
            exprs = [for_analysis(spec.expr)]
        stmts = [f"f{i} = {e};" for i, e in enumerate(exprs)] + [c.replace("[k]", f"[{k}]") for c in consume]
        body = "{ " + " ".join(stmts) + " }"
        shapes = {"a": f"[{s}][{s}]", "b": f"[{s}]", "c": f"[{s}]", "h": ""}
        decls = [f"double {a}[{rows}][{size}]" if rows > 1 else f"double {a}[{size}]" for a in names]
        decls += ([f"double Yn[{s}][M]"] if group != "RHSAU" else []) + ["double u[M]"]
        decls += [f"double {c}{shapes[c]}" for c in coefficients] + [f"double {c}" for c in rhs.constants]
        decls += [f"double f{i}" for i in range(rows)]
        arrays = tuple((a, rows) for a in names) + ((("Yn", s),) if group != "RHSAU" else ()) + (("u", 1),)
        out.append(KernelPart(f"{group.lower()}.{ivp.name}.{spec.name}", group, _render(decls, rhs.loops, body),
                              rhs.loops, arrays, halo=halo, size_parameter=rhs.size_parameter,
                              iterations_per_m=1.0 / rhs.step, unroll=1, components=rhs.components,
                              step=rhs.step, constants=rhs.constants, body=body))
    return out

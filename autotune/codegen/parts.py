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
from dataclasses import replace
from functools import lru_cache

import jinja2

from autotune.dimensions.lc import specs as lc_specs
from autotune.errors import InputError
from autotune.specs.formula import FormulaError, evaluate
from autotune.specs.shipped import shipped_dir
from autotune.specs.ivp import IVP, RhsPart
from autotune.specs import methodparts as mp
from autotune.specs.methodparts import PartSpec
from autotune.specs.parts import KernelPart, Loop, TileLoop
from autotune.specs.step import FUSED_GROUPS, Group, StepForm
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


def render_part(spec: PartSpec) -> KernelPart:
    """A method part (LC, APPROX, UPDATE, the copies) rendered from its declaration: vectors of M
    components, method coefficients a (s x s), b (s), c (s), h."""
    return _render_part(spec)


@lru_cache(maxsize=256)
def _render_part(spec: PartSpec) -> KernelPart:
    rows = max(r for _, r in spec.arrays)     # s: the stage vectors' rows
    shapes = {"a": f"[{rows}][{rows}]", "b": f"[{rows}]", "c": f"[{rows}]", "h": ""}
    decls = [f"double {arr}[{n}][M]" if n > 1 else f"double {arr}[M]" for arr, n in spec.arrays]
    decls += [f"double {c}{shapes[c]}" for c in spec.coefficients]
    body = str(getattr(macros(), spec.macro)(*spec.macro_args))
    iters = float(math.prod(lp.trips for lp in spec.loops if lp.var != "j"))
    return KernelPart(spec.name, spec.group, _render(decls, spec.loops, body), spec.loops, spec.arrays,
                      iterations_per_m=iters, unroll=_unroll(spec.loops), constants=spec.coefficients, body=body,
                      accesses=spec.accesses)


def lc_parts(method: Method, order: str) -> list[KernelPart]:
    """LC of a value of lc (dimensions.lc: a loop order, or a one-pass form), rendered."""
    return [render_part(p) for p in lc_specs(method.stages, order)]


def approx_update_parts(method: Method, fused: bool = False) -> list[KernelPart]:
    """APPROX and UPDATE (in two sweeps, or fused in one), rendered."""
    return [render_part(p) for p in mp.approx_update_specs(method.stages, fused)]


def lc_direct_part(method: Method) -> KernelPart:
    return render_part(mp.lc_direct_spec(method.stages))


def pack_part(method: Method) -> KernelPart:
    """Copy of a node's block into the buffer the RHS reads (once per communication phase)."""
    return render_part(mp.pack_spec())


def copy_part(method: Method) -> KernelPart:
    """The predictor's copy F_l = F_1 (s - 1 times per step): the same code as comm.pack."""
    return render_part(mp.copy_spec())


def method_parts(form: StepForm) -> list[KernelPart]:
    """The method's kernel parts of one step form (LC, APPROX/UPDATE, the pack where the argument
    vectors are copied into the communication buffers, the predictor's), rendered."""
    return [render_part(p) for p in form.method_parts]


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


def growing_power(halo: str, size_parameter: str) -> int | None:
    """k where a growing halo is the size parameter to the k-th power ("N", "N**2", "N*N"; a 3D
    grid's plane), else None."""
    text = halo.replace(" ", "")
    m = re.fullmatch(rf"{re.escape(size_parameter)}(?:\*\*(\d+))?", text)
    if m:
        return int(m.group(1) or 1)
    factors = text.split("*")
    return len(factors) if all(f == size_parameter for f in factors) else None


def _rhs_part(ivp: IVP, part: RhsPart, m, stages: int | None = None) -> KernelPart:
    try:
        halo_value = evaluate(part.halo, {ivp.size_parameter: 1_000_003})
    except FormulaError as e:
        raise InputError(f"{ivp.path}: field 'rhs.{part.name}.halo': {e}") from None
    symbolic = halo_value > 1_000  # grows with the problem: keep it a kerncraft constant
    power = 1
    if symbolic:
        power = growing_power(part.halo, ivp.size_parameter)
        if power is None:
            raise InputError(f"{ivp.path}: field 'rhs.{part.name}.halo': a growing halo must be a power of "
                             f"the size parameter ({ivp.size_parameter}, {ivp.size_parameter}**2, ...), "
                             f"got {part.halo!r}")
        halo = "*".join([ivp.size_parameter] * power)      # N, N*N: the C of kerncraft's kernel
    else:
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
                      Group.RHSALL if stages else Group.RHS, code, loops, tuple((a, rows) for a in names), halo=halo,
                      size_parameter=ivp.size_parameter if symbolic else None, halo_power=power,
                      iterations_per_m=rows / part.step, unroll=rows, components=part.components,
                      step=part.step, constants=scalars, body=str(rhs(expr)))


# fuse=rhs-lc: the RHS of a sweep's argument vectors consumed at once, per component, by the
# linear combination that follows it.  Kernel group -> (rows of the argument vectors read,
# the statements that consume the stage derivatives f0..f{s-1}, at component k = j - halo).
def _consume(group: str, s: int) -> tuple[int, list[str], tuple[str, ...]]:
    fsum = lambda coef: " + ".join(f"{coef}[{i}]*f{i}" for i in range(s))   # noqa: E731
    if group == Group.RHSLCD:   # the predictor's f(y), then the first iteration's Y_l = y + h c_l f
        return 1, [f"Yn[{l}][k] = u[k] + h * c[{l}] * f0;" for l in range(s)], ("c", "h")
    if group == Group.RHSLC:    # Y_l = y + h sum_i a_li f_i
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
        decls += ([f"double Yn[{s}][M]"] if group != Group.RHSAU else []) + ["double u[M]"]
        decls += [f"double {c}{shapes[c]}" for c in coefficients] + [f"double {c}" for c in rhs.constants]
        decls += [f"double f{i}" for i in range(rows)]
        arrays = tuple((a, rows) for a in names) + ((("Yn", s),) if group != Group.RHSAU else ()) + (("u", 1),)
        out.append(KernelPart(f"{group.lower()}.{ivp.name}.{spec.name}", group, _render(decls, rhs.loops, body),
                              rhs.loops, arrays, halo=halo, size_parameter=rhs.size_parameter,
                              halo_power=rhs.halo_power,
                              iterations_per_m=1.0 / rhs.step, unroll=1, components=rhs.components,
                              step=rhs.step, constants=rhs.constants, body=body,
                              stores=("Yn",) if group != Group.RHSAU else ()))
    return out


# What the solver's fused functions (solver.c.j2 fused_function) run per tile after the RHS: the
# consuming loop, the j loop outside with the stage loop inside where it writes s rows
_CONSUMERS = {Group.RHSLCD: lambda s: mp.lc_direct_spec(s),
              Group.RHSLC: lambda s: mp.lc_specs(s, "jl", one_pass=True)[0],
              Group.RHSAU: lambda s: mp.approx_update_specs(s, fused=True)[0]}
STREAM_ROW = "tile.stream_row"      # store=nt's copy of a tile's new rows (stream_row: the code of comm.pack)


def _work_per_m(part: KernelPart) -> float:
    """A part's lines of work per component of M (pricing's beta / delta, over M and 8)."""
    return part.iterations_per_m * part.loops[-1].step


def tile_loops(ivp: IVP, method: Method, group: str, streaming: bool) -> tuple[tuple[TileLoop, ...], ...]:
    """Per part of a fused sweep (fused_parts' order), the loops the solver runs over each tile,
    rendered from the macros it runs: the RHS part into the tile's F (of one argument vector, or
    of all s), the linear combination or APPROX+UPDATE reading F back, and with store=nt (streaming)
    the copy of the tile's s new rows with streaming stores.  Each loop's weight is its lines of
    work per line of work of the fused part; the consuming loops run over the part's components
    of the tile, contiguously."""
    s = method.stages
    rhs = rhs_parts(ivp, None if group == Group.RHSLCD else s)
    consume = render_part(_CONSUMERS[group](s))
    writes_y = group != Group.RHSAU
    copy = replace(render_part(mp.copy_spec()), name=STREAM_ROW, stores=("b",))
    out = []
    for f, r in zip(fused_parts(ivp, method, group), rhs):
        per = _work_per_m(f)
        # the predictor's linear combination reads y again right after the RHS read it: in the tile's cache
        kept = ("F", "y") if group == Group.RHSLCD else ("F",)
        loops = [TileLoop(r, _work_per_m(r) / per, ("F",)),
                 TileLoop(consume, _work_per_m(consume) / (f.step * per),
                          kept + ("Y",) if streaming and writes_y else kept)]
        if streaming and writes_y:
            loops.append(TileLoop(copy, s * _work_per_m(copy) / (f.step * per), ("v",), ("b",)))
        out.append(tuple(loops))
    return tuple(out)


def sweep_parts(ivp: IVP, method: Method, group: Group) -> list[KernelPart]:
    """The IVP's parts of one RHS sweep group (specs.step.RHS_SWEEPS): of one argument vector, of
    all s in one sweep, or of a fused sweep."""
    if group in FUSED_GROUPS:
        return fused_parts(ivp, method, group)
    return rhs_parts(ivp, method.stages if group == Group.RHSALL else None)


def step_rhs_parts(ivp: IVP, method: Method, step: StepForm) -> list[KernelPart]:
    """The RHS parts one step form runs, group by group."""
    return [p for g in step.rhs_groups for p in sweep_parts(ivp, method, g)]

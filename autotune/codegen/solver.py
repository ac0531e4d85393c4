"""Render the full PIRK solver of one variant from the same templates as the kernel parts.  Pure."""
from __future__ import annotations

from dataclasses import dataclass

from autotune.arith import ordered_sum
from autotune.codegen import parts as kmod
from autotune.errors import InputError
from autotune.specs import window
from autotune.specs.control import Control, render_context
from autotune.specs.formula import FormulaError, to_c
from autotune.specs.ivp import IVP
from autotune.specs.machine import Machine
from autotune.specs.method import Method
from autotune.specs.schemes import SCHEMES
from autotune.specs.shipped import shipped_dir
from autotune.specs.stepvalues import step_form
from autotune.specs.variants import DIMENSIONS, Variant, ivp_for



def generated_schemes() -> list[str]:
    """The communication schemes whose solver template exists (variants/comm/<name>.c.j2)."""
    folder = shipped_dir("variants")
    return [name for name, s in SCHEMES.items() if (folder / s.template).is_file()]


def solver_source(ivp: IVP, method: Method, variant: Variant, n: int, machine: Machine | None = None,
                  likwid: bool = False, control: Control | None = None, uneven: bool = False) -> str:
    """C source of the hybrid MPI+OpenMP solver.  The access distance H is a literal (it sizes
    the halo); the system size is a run-time argument.  machine: the target, whose cache sizes
    set the tile of a fused sweep (dimensions.block.DEFAULT_CACHE_BYTES without).  likwid: each
    sweep a LIKWID marker region (LIKWID_FLAGS build it; without, the source is as before).
    control: the step chosen by the error estimate within these tolerances (specs.control; without,
    a fixed step and the source as before).  uneven: each rank's block as AUTOTUNE_COUNTS gives
    it where set (docs/method.md, "Uneven blocks"; without, even blocks and the source as before)."""
    return variant_module(ivp, method, variant, n, machine, likwid=likwid, control=control, uneven=uneven)


# what a solver with LIKWID markers is built with, beyond its flags
LIKWID_FLAGS = ("-DLIKWID_PERFMON",)
LIKWID_LIBS = ("-llikwid",)


def variant_module(ivp: IVP, method: Method, variant: Variant, n: int, machine: Machine | None = None,
                   symbol: str = "", likwid: bool = False, control: Control | None = None,
                   uneven: bool = False) -> str:
    """The variant's module (variants/solver.c.j2): its step and its buffers, named `symbol` for
    a driver of its own part (codegen.online); without a symbol, the whole program with its own
    driver (variants/driver.c.j2)."""
    if variant.comm not in generated_schemes():
        raise InputError(f"variant {variant.name}: the solver for comm={variant.comm} is not generated yet "
                         f"(available: {', '.join(generated_schemes())})")
    odd = [f"{k}={getattr(variant, k)}" for k, d in DIMENSIONS.items()
           if getattr(variant, k) not in d.values_for(control is not None)]
    if odd:
        raise InputError(f"variant {variant.name}: {', '.join(odd)} is not a "
                         f"{'controlled' if control is not None else 'fixed'} step's (specs.variants: spaces)")
    ivp = ivp_for(ivp, variant)       # the IVP as the variant stores it (a stored one is its own)
    parts = kmod.rhs_parts(ivp)
    blocked = len(parts) > 1 and all(p.step == 1 for p in parts)
    if blocked and len(parts) != 2 and any("w" in p.arrays for p in ivp.rhs):
        raise InputError(f"{ivp.path}: field 'rhs': the coupled array w needs exactly two blocks")
    if not blocked and any("w" in p.arrays for p in ivp.rhs):
        raise InputError(f"{ivp.path}: field 'rhs': w (the coupled block) needs a blocked IVP")
    if not ivp.initial:
        raise InputError(f"{ivp.path}: field 'initial': required to generate the solver")
    try:
        constants = [{"name": k, "c_expr": to_c(v)} for k, v in ivp.constants]
    except FormulaError as e:
        raise InputError(f"{ivp.path}: field 'constants': {e}") from None
    names = {c for p in parts for c in p.constants}
    constants = [c for c in constants if c["name"] in names]
    context = dimension_context(ivp, method, variant, machine, n)
    rhs, offset = [], "0"
    bodies_all = context.pop(BODIES_ALL, None) or [None] * len(parts)
    for i, (p, part) in enumerate(zip(parts, ivp.rhs)):
        if blocked:
            other = ivp.rhs[1 - i] if len(parts) == 2 else None
            rhs.append({"name": part.name, "body": p.body, "body_all": bodies_all[i], "start": 0, "step": 1,
                        "offset": offset, "blocked": True,
                        "comps_c": to_c(part.components),
                        "w_offset": ("0" if i == 1 else f"(long)({to_c(ivp.rhs[0].components)})") if other else None,
                        "w_comps_c": to_c(other.components) if other else None})
            offset = f"({offset} + (long)({to_c(part.components)}))"
        else:
            rhs.append({"name": part.name, "body": p.body, "body_all": bodies_all[i], "start": part.start,
                        "step": part.step,
                        "blocked": False, "offset": "0", "comps_c": "n", "w_offset": None, "w_comps_c": None})
    fmt = lambda x: repr(float(x))  # noqa: E731 - exact decimal round trip of the coefficients
    form = step_form(method, variant)
    own = {"symbol": "variant_0", "name": variant.name}
    return kmod.env().get_template("solver.c.j2").render(
        symbol=symbol or own["symbol"], part=bool(symbol), candidates=[own], online=False, likwid=likwid,
        control=render_context(control, method), uneven=uneven,
        ivp_name=ivp.name, method_name=method.name, variant=variant.name, values=variant.fields(),
        S=method.stages, iterations=method.iterations, H=ivp.halo(n), D=window.reach(ivp, n),
        A=[[fmt(x) for x in row] for row in method.A], b=[fmt(x) for x in method.b],
        c=[fmt(ordered_sum(row)) for row in method.A],   # the row sums of A (= the nodes c, to rounding)
        rhs=rhs, schedule=form.blocks, timers=form.timers,
        block0_c=to_c(ivp.rhs[0].components) if blocked else "n", pack_body=kmod.pack_part(method).body,
        constants=constants, size_parameter=ivp.size_parameter, initial=ivp.initial, **context)


@dataclass(frozen=True)
class _Render:
    """What a dimension's render hook reads (specs.dimension.RenderInput)."""
    ivp: IVP
    method: Method
    machine: Machine | None
    n: int
    values: dict
    parts: object = kmod


# the template context the solver itself gives (a dimension's render hook may not give these)
SOLVER_KEYS = frozenset({"uneven", "ivp_name", "method_name", "variant", "values", "S", "iterations", "H", "D", "A", "b", "c",
                         "rhs", "schedule", "timers", "block0_c", "pack_body", "constants", "size_parameter",
                         "initial", "symbol", "part", "candidates", "online", "likwid", "control"})
PREAMBLE = "preamble"          # lines before the solver's code: every dimension may add to them
BODIES_ALL = "rhs_bodies_all"  # per RHS part of the IVP, its body over all s argument vectors
OUTPUT_ORDER = "output_order"  # C that puts the driver's result back in the IVP's own order (None: it is)


def dimension_context(ivp: IVP, method: Method, variant: Variant, machine: Machine | None, n: int) -> dict:
    """Every dimension's part of the solver template's context, for the variant's values
    (specs.dimension: render): a key two dimensions give, or one the solver gives itself
    (SOLVER_KEYS), is an error, but for PREAMBLE, which they add to in position order."""
    inputs = _Render(ivp, method, machine, n, variant.fields())
    out: dict = {PREAMBLE: []}
    for key, dim in DIMENSIONS.items():
        if dim.render is None:
            continue
        got = dict(dim.render(getattr(variant, key), inputs))
        out[PREAMBLE] += got.pop(PREAMBLE, [])
        clash = set(got) & (set(out) | SOLVER_KEYS)
        if clash:
            raise ValueError(f"dimension {key!r}: template context {sorted(clash)} is given twice")
        out.update(got)
    return out

"""Render the full PIRK solver of one variant from the same templates as the kernel parts.  Pure."""
from __future__ import annotations

from . import kernels as kmod
from .errors import InputError
from .formula import FormulaError, to_c
from .specs.ivp import IVP
from .specs.method import Method
from .variants import Variant

GENERATED_COMM = ("allgather", "neighbour")


def _halo(ivp: IVP, n: int) -> int:
    return ivp.access_distance(n)


def solver_source(ivp: IVP, method: Method, variant: Variant, n: int) -> str:
    """C source of the hybrid MPI+OpenMP solver.  The access distance H is a literal (it sizes
    the halo); the system size is a run-time argument."""
    if variant.comm not in GENERATED_COMM:
        raise InputError(f"variant {variant.name}: the solver for comm={variant.comm} is not generated yet "
                         f"(available: {', '.join(GENERATED_COMM)})")
    parts = kmod.rhs_parts(ivp)
    if len(parts) > 1 and any(p.step == 1 for p in parts):
        raise InputError(f"{ivp.name}: solvers for IVPs made of separate blocks are not generated yet")
    if any("w" in p.arrays for p in ivp.rhs):
        raise InputError(f"{ivp.name}: coupled-block arrays (w) are not generated yet")
    if not ivp.initial:
        raise InputError(f"{ivp.path}: field 'initial': required to generate the solver")
    try:
        constants = [{"name": k, "c_expr": to_c(v)} for k, v in ivp.constants]
    except FormulaError as e:
        raise InputError(f"{ivp.path}: field 'constants': {e}") from None
    names = {c for p in parts for c in p.constants}
    constants = [c for c in constants if c["name"] in names]
    rhs = [{"body": p.body, "start": part.start, "step": part.step} for p, part in zip(parts, ivp.rhs)]
    fmt = lambda x: repr(float(x))  # noqa: E731 - exact decimal round trip of the coefficients
    return kmod.env().get_template("solver.c.j2").render(
        ivp_name=ivp.name, method_name=method.name, variant=variant.name, lc=variant.lc,
        S=method.stages, iterations=method.iterations, H=max(_halo(ivp, n), 1),
        A=[[fmt(x) for x in row] for row in method.A], b=[fmt(x) for x in method.b],
        lc_parts=kmod.lc_parts(method, variant.lc), approx_parts=kmod.approx_update_parts(method),
        rhs=rhs, comm=variant.comm, pack_body=kmod.pack_part(method).body, constants=constants, size_parameter=ivp.size_parameter,
        initial=ivp.initial)

"""Communication cost: seconds of one phase of a scheme (autotune.specs.schemes), from the
data-sheet model or the fits of the micro-benchmarks.  Pure functions of plain numbers.

A cost model turns (operation, bytes, p) into seconds; the calibrated models plug in
through the same `op_seconds` signature.
"""
from __future__ import annotations

import math
from typing import Callable

from autotune.arith import ordered_sum
from autotune.model.commmodel import OpFit, Segment
from autotune.specs.schemes import DOUBLE, OPERATIONS, SCHEMES, PhaseContext


def datasheet_op_seconds(op: str, nbytes: float, p: int, latency: float, bandwidth: float) -> float:
    """Latency/bandwidth (Hockney) cost of one operation with one rank per node: the fitted
    model's form (the operation's rounds and volume) with one segment, a = latency and b = 1/bandwidth.

    allgather: ceil(log2 p) rounds, p-1 blocks through each link; neighbour: both
    neighbours at once, two messages share the link; pairwise: one exchange.
    """
    if op not in OPERATIONS:
        raise ValueError(f"unknown operation {op!r}")
    return _sheet_fit(op, latency, bandwidth).predict(nbytes, p)


def _sheet_fit(op: str, latency: float, bandwidth: float) -> OpFit:
    return OpFit(op, (Segment(math.inf, latency, 1.0 / bandwidth),), 0)


def network_model(network: dict) -> Callable[[str, float, int], float]:
    """op_seconds(op, bytes, p) of a machine's network section: fitted operations use their
    fits, the others the data-sheet latency and bandwidth."""
    fits = {op: OpFit.from_dict(op, d) for op, d in (network.get("fits") or {}).items()}
    sheet = {op: _sheet_fit(op, network["latency_s"], network["bandwidth_Bps"]) for op in OPERATIONS if op not in fits}
    models = {**sheet, **fits}

    def op_seconds(op: str, nbytes: float, p: int) -> float:
        if op not in models:
            raise ValueError(f"unknown operation {op!r}")
        return models[op].predict(nbytes, p)

    return op_seconds


def barrier_seconds(threads: int, per_doubling: float) -> float:
    return 0.0 if threads <= 1 else per_doubling * math.ceil(math.log2(threads))


def phase_seconds(scheme: str, ctx: PhaseContext, op_seconds: Callable[[str, float, int], float]) -> float:
    return ordered_sum(op_seconds(op, nbytes, ctx.p) for op, nbytes in SCHEMES[scheme].ops(ctx))


def comm_basis(network: dict, scheme: str, ctx: PhaseContext) -> str:
    """Where a scheme's predicted communication time at ctx.p comes from: 'none' (one node),
    'datasheet' (an operation without a fit), 'measured' (every fitted operation measured at
    this p), 'interpolated' (p between measured counts: the joint p-dependent fit) or
    'extrapolated' (p outside the measured counts)."""
    if ctx.p == 1:
        return "none"
    fits = network.get("fits") or {}
    basis = "measured"
    for op, _ in SCHEMES[scheme].ops(ctx):
        if op not in fits:
            return "datasheet"
        ps = sorted(int(q) for q in (fits[op].get("per_p") or {}))
        if ctx.p in ps:
            continue
        if not ps or ctx.p < ps[0] or ctx.p > ps[-1]:
            return "extrapolated"
        basis = "interpolated"
    return basis

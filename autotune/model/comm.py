"""Communication schemes (registry) and their per-phase message patterns, plus the
data-sheet cost model.  Pure functions of plain numbers.

A scheme says, for one communication phase (one argument vector), which MPI
operations run and with how many bytes; a cost model turns (operation, bytes,
p) into seconds.  A new scheme is a registry entry here (and its solver
template); the calibrated cost models of the micro-benchmarks plug in through
the same `op_seconds` signature.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from autotune.model.commmodel import STRUCTURE, OpFit, Segment

DOUBLE = 8


@dataclass(frozen=True)
class PhaseContext:
    n: int              # components of the system
    p: int              # nodes (one MPI rank per node)
    distance: int       # access distance d of the IVP
    sparse_halo: int    # neighbour halo of the sparse pattern


@dataclass(frozen=True)
class Scheme:
    name: str
    description: str
    ops: Callable[[PhaseContext], list[tuple[str, float]]]   # [(operation, bytes per message)]
    check: Callable[[PhaseContext], str | None]               # None, or why the scheme cannot run


SCHEMES: dict[str, Scheme] = {}


def register(scheme: Scheme) -> Scheme:
    if scheme.name in SCHEMES:
        raise ValueError(f"duplicate communication scheme {scheme.name!r}")
    SCHEMES[scheme.name] = scheme
    return scheme


def _block(ctx: PhaseContext) -> int:
    return math.ceil(ctx.n / ctx.p)


register(Scheme(
    "allgather", "multi-broadcast: MPI_Allgather of every node's block",
    lambda ctx: [("allgather", _block(ctx) * DOUBLE)],
    lambda ctx: None,
))
register(Scheme(
    "neighbour", "Isend/Irecv of d components with the nodes p-1 and p+1",
    lambda ctx: [("neighbour", ctx.distance * DOUBLE)],
    lambda ctx: (None if ctx.p == 1 or ctx.distance <= ctx.n // ctx.p else
                 f"access distance d = {ctx.distance} exceeds the block n/p = {ctx.n // ctx.p}"),
))
register(Scheme(
    "sparse", "neighbour halo plus the block held by the node with the coupled components",
    lambda ctx: [("neighbour", ctx.sparse_halo * DOUBLE), ("pairwise", _block(ctx) * DOUBLE)],
    lambda ctx: (None if ctx.p == 1 or ctx.sparse_halo <= ctx.n // ctx.p else
                 f"halo {ctx.sparse_halo} exceeds the block n/p = {ctx.n // ctx.p}"),
))


def datasheet_op_seconds(op: str, nbytes: float, p: int, latency: float, bandwidth: float) -> float:
    """Latency/bandwidth (Hockney) cost of one operation with one rank per node: the fitted
    model's form (commmodel.STRUCTURE) with one segment, a = latency and b = 1/bandwidth.

    allgather: ceil(log2 p) rounds, p-1 blocks through each link; neighbour: both
    neighbours at once, two messages share the link; pairwise: one exchange.
    """
    if op not in STRUCTURE:
        raise ValueError(f"unknown operation {op!r}")
    return _sheet_fit(op, latency, bandwidth).predict(nbytes, p)


def _sheet_fit(op: str, latency: float, bandwidth: float) -> OpFit:
    return OpFit(op, (Segment(math.inf, latency, 1.0 / bandwidth),), 0)


_MODELS: dict[int, tuple[dict, Callable]] = {}


def network_model(network: dict) -> Callable[[str, float, int], float]:
    """op_seconds(op, bytes, p) of a machine's network section: fitted operations use their
    fits, the others the data-sheet latency and bandwidth.  Built once per network section
    object (a sweep asks thousands of times)."""
    cached = _MODELS.get(id(network))
    if cached is not None and cached[0] is network:
        return cached[1]
    fits = {op: OpFit.from_dict(op, d) for op, d in (network.get("fits") or {}).items()}
    sheet = {op: _sheet_fit(op, network["latency_s"], network["bandwidth_Bps"]) for op in STRUCTURE if op not in fits}
    models = {**sheet, **fits}

    def op_seconds(op: str, nbytes: float, p: int) -> float:
        if op not in models:
            raise ValueError(f"unknown operation {op!r}")
        return models[op].predict(nbytes, p)

    _MODELS[id(network)] = (network, op_seconds)
    return op_seconds


def barrier_seconds(threads: int, per_doubling: float) -> float:
    return 0.0 if threads <= 1 else per_doubling * math.ceil(math.log2(threads))


def phase_seconds(scheme: str, ctx: PhaseContext, op_seconds: Callable[[str, float, int], float]) -> float:
    return sum(op_seconds(op, nbytes, ctx.p) for op, nbytes in SCHEMES[scheme].ops(ctx))


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

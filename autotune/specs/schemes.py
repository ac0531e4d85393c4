"""Communication schemes: the registry of the variant dimension `comm`.  Pure data.

A scheme says, for one communication phase (one argument vector), which MPI
operations run and with how many bytes, when it cannot run, and which solver
template implements it (variants/comm/<name>.c.j2).  An operation names the
micro-benchmark that measures it.  A new scheme is one registry entry here
plus its template; the cost models (autotune.model.comm) and the solver
generator find it through the registry.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

DOUBLE = 8


@dataclass(frozen=True)
class Operation:
    """One MPI operation, declared once: what it is, the micro-benchmark that measures it, and the
    form of its cost, t(m, p) = a * rounds(p) + b * volume(p) * m (a: seconds per latency round,
    b: seconds per byte through one link; model.commmodel fits and evaluates a and b)."""
    name: str
    description: str
    benchmark: str                      # module of benchmarks_mpi that measures it (python -m <module>)
    rounds: Callable[[int], float]      # latency rounds on p ranks
    volume: Callable[[int], float]      # messages of m bytes through the busiest link on p ranks


OPERATIONS: dict[str, Operation] = {}


def register_operation(op: Operation) -> Operation:
    if op.name in OPERATIONS:
        raise ValueError(f"duplicate communication operation {op.name!r}")
    OPERATIONS[op.name] = op
    return op


# allgather: ceil(log2 p) rounds, p-1 blocks through each link; neighbour: both neighbours at once,
# two messages share the link; pairwise: one exchange
register_operation(Operation("allgather", "MPI_Allgather of one block per rank", "benchmarks_mpi.allgather",
                             lambda p: math.ceil(math.log2(p)) if p > 1 else 0, lambda p: p - 1))
register_operation(Operation("neighbour", "Isend/Irecv with the ranks p-1 and p+1", "benchmarks_mpi.neighbour",
                             lambda p: 1 if p > 1 else 0, lambda p: 0 if p < 2 else (1 if p == 2 else 2)))
register_operation(Operation("pairwise", "one Isend/Irecv exchange between two ranks", "benchmarks_mpi.sparse",
                             lambda p: 1 if p > 1 else 0, lambda p: 1 if p > 1 else 0))
# allreduce (step-size control's norm: one double): recursive doubling, ceil(log2 p) rounds, one
# message through each link per round
register_operation(Operation("allreduce", "MPI_Allreduce (sum) of one vector over all ranks", "benchmarks_mpi.allreduce",
                             lambda p: math.ceil(math.log2(p)) if p > 1 else 0,
                             lambda p: math.ceil(math.log2(p)) if p > 1 else 0))


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
    halo_only: bool = False   # exchanges halos of the own block only: the interior needs nothing
                              # received, so the exchange can overlap it (dimension overlap)

    @property
    def template(self) -> str:
        """The solver template of the scheme (in variants/)."""
        return f"comm/{self.name}.c.j2"


SCHEMES: dict[str, Scheme] = {}


def register(scheme: Scheme) -> Scheme:
    if scheme.name in SCHEMES:
        raise ValueError(f"duplicate communication scheme {scheme.name!r}")
    unknown = {op for op, _ in scheme.ops(PhaseContext(64, 2, 1, 1))} - set(OPERATIONS)
    if unknown:
        raise ValueError(f"scheme {scheme.name!r} uses unknown operations {sorted(unknown)}")
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
    halo_only=True,
))
register(Scheme(
    "sparse", "neighbour halo plus the block held by the node with the coupled components",
    lambda ctx: [("neighbour", ctx.sparse_halo * DOUBLE), ("pairwise", _block(ctx) * DOUBLE)],
    lambda ctx: (None if ctx.p == 1 or ctx.sparse_halo <= ctx.n // ctx.p else
                 f"halo {ctx.sparse_halo} exceeds the block n/p = {ctx.n // ctx.p}"),
))

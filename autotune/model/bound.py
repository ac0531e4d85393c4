"""The floor of one time step on one node: what no implementation of the step can beat.  Pure.

Compulsory traffic (METHOD.md section 8), in vectors of the node's n_p components, for an
s-stage corrector iterated m times, when the step's live data does not stay cached:

    each of the m iterations reads the s argument vectors it evaluates f on    m s
    the argument vectors Y^(1) .. Y^(m) are written once each                 m s
    y is read by each of the m linear combinations (the predictor's f(y) reads
      the same y as the first one: fused, one read)                            m
    the update reads y once more and writes it                                 2
                                                                        ---------
                                                                        2 m s + m + 2

F never needs to reach memory: fused into the next linear combination (or the update) as
soon as it is computed.  With s = 4, m = 6 that is 56 vectors, against 2 x 25 vector
passes of RHS alone in the paper's forms.  Where the step's live data (y, the s old and the
s new argument vectors: 2 s + 1 vectors) fits a cache level of the node, the traffic crosses
that level's interface instead, at its bandwidth.

    B_mem  = 8 * vectors * n_p / b(tau)          b: the fastest measured kernel at tau cores
    B_core = in-core cycles of the 1 + m s RHS evaluations / (f * tau)
    bound  = max(B_mem, B_core) + t_comm         t_comm: the cheapest applicable scheme
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

DOUBLE = 8


def compulsory_vectors(stages: int, iterations: int) -> int:
    """Vectors of n_p components that one step must move across the memory interface."""
    return 2 * iterations * stages + iterations + 2


def live_vectors(stages: int) -> int:
    """Vectors the step keeps live between kernels at best: y, old and new argument vectors."""
    return 2 * stages + 1


def rhs_evaluations(stages: int, iterations: int) -> int:
    """f evaluations per step: one in the predictor, s per corrector iteration."""
    return 1 + stages * iterations


@dataclass(frozen=True)
class Bound:
    level: str            # where the compulsory traffic comes from (MEM, or the cache that holds it)
    bytes: float          # compulsory bytes per step on the node
    bandwidth_Bps: float  # b(tau) of that level
    mem_s: float          # B_mem
    core_s: float         # B_core (RHS in-core time)
    comm_s: float         # cheapest modelled communication per step
    total_s: float        # max(B_mem, B_core) + comm_s

    def to_dict(self) -> dict:
        return asdict(self)


def step_bound(components: int, stages: int, iterations: int, level: str, bandwidth_Bps: float,
               rhs_core_cycles: float, clock_hz: float, cores: int, comm_s: float) -> Bound:
    """components: the node's n_p (all its ranks'); rhs_core_cycles: in-core cycles of one RHS
    evaluation of the node's components on one core; cores: the node's busy cores."""
    nbytes = DOUBLE * compulsory_vectors(stages, iterations) * components
    mem_s = nbytes / bandwidth_Bps
    core_s = rhs_evaluations(stages, iterations) * rhs_core_cycles / (clock_hz * cores)
    return Bound(level, float(nbytes), bandwidth_Bps, mem_s, core_s, comm_s, max(mem_s, core_s) + comm_s)

"""The floor of one time step on one node: what no implementation of the step can beat.  Pure.

The step's own compulsory traffic (docs/method.md#the-floor), in vectors of the node's n_p
components: y read once and the new y written once, 2 vectors.  Everything between (the
argument vectors of every iteration, the stage derivatives) can stay in cache: a pipelined step
(pipe=wavefront) carries all iterations of a block of components while it is cached.

The per-sweep floor, kept beside it (bound_sweep_s), is that of a step whose iterations each
sweep the node's block, for an s-stage corrector iterated m times:

    each of the m iterations reads the s argument vectors it evaluates f on    m s
    the argument vectors Y^(1) .. Y^(m) are written once each                 m s
    y is read by each of the m linear combinations (the predictor's f(y) reads
      the same y as the first one: fused, one read)                            m
    the update reads y once more and writes it                                 2
                                                                        ---------
                                                                        2 m s + m + 2

F never needs to reach memory: fused into the next linear combination (or the update) as
soon as it is computed.  With s = 4, m = 6 that is 56 vectors, against 2 x 25 vector
passes of RHS alone in the paper's forms.  Caches keep part of each floor's live data (the
step's: y and the new y, 2 vectors; the sweeps': y, the s old and the s new argument vectors,
2 s + 1 vectors): with ideal replacement a level that holds R bytes of the node's data keeps
the share min(1, R / live bytes) of it, and that share of the compulsory traffic crosses only
that level's interface, at its bandwidth (the same view of the caches as model.reuse, at full
capacity: a floor assumes the best placement).

    B_mem  = sum over levels L of 8 * vectors * n_p * share_L / b_L(tau)
             b_L: the fastest kernel from level L at tau cores (Machine.bandwidth): the
                  largest of the kernels' figures (calibrate --node writes the upper
                  quartile of each kernel's runs); a single fast spell cannot set it
    B_core = in-core cycles of the step's compulsory arithmetic / (f * tau): the 1 + m s
             RHS evaluations at the in-core rate of the pool's cheapest RHS code (measured
             where the file measures in-core times), and the linear combinations' products,
             (m - 1) s^2 + 2 s per component (each corrector LC's s^2 but the first's, from
             F_1 alone, s; APPROX's s), one fused multiply-add each at the core's peak (the
             file's FLOPs per cycle, DP): max(B_core_rhs, B_core_lc), since a fused loop may
             issue the products beside the RHS's work on other ports
    bound  = max(B_mem, B_core) + t_comm         t_comm: the cheapest applicable scheme

bound_s is the step's floor that non-temporal (streaming) stores can reach.  Code that writes
through the caches reads every line it writes first (write-allocate): 1 vector more for the
step (bound_wa_s), m s + 1 more for the sweeps (bound_sweep_wa_s, about 1.45x the traffic for
s = 4, m = 6).  Each is priced the same way from the same levels.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

from autotune.arith import ordered_sum

DOUBLE = 8


def compulsory_vectors(stages: int, iterations: int) -> int:
    """Vectors of n_p components that one step of sweeps must move across the memory interface."""
    return 2 * iterations * stages + iterations + 2


def written_vectors(stages: int, iterations: int) -> int:
    """Vectors of the sweeps' compulsory traffic that are written: the argument vectors of every
    iteration and y (each read once more by a write-allocating cache)."""
    return iterations * stages + 1


STEP_VECTORS = 2          # the step's own: y in, the new y out
STEP_WRITTEN = 1          # of them written (the new y)


def live_vectors(stages: int) -> int:
    """Vectors a step of sweeps keeps live between kernels at best: y, old and new argument vectors."""
    return 2 * stages + 1


def lc_products(stages: int, iterations: int) -> int:
    """Products per component of one step's linear combinations: s^2 in each corrector iteration's
    LC but the first (s: from F_1 alone), s in APPROX."""
    return (iterations - 1) * stages * stages + 2 * stages


def rhs_evaluations(stages: int, iterations: int) -> int:
    """f evaluations per step: one in the predictor, s per corrector iteration."""
    return 1 + stages * iterations


def source_shares(live_bytes: float, reach: tuple[float, ...]) -> tuple[float, ...]:
    """Share of the compulsory traffic each cache level (and, last, memory) serves when the
    levels hold reach[i] bytes (cumulative) of live data that takes live_bytes."""
    held = [min(1.0, r / live_bytes) if live_bytes > 0 else 1.0 for r in reach]
    out, above = [], 0.0
    for h in held:
        h = max(h, above)
        out.append(h - above)
        above = h
    return tuple(out) + (1.0 - above,)


@dataclass(frozen=True)
class Floor:
    """One floor: its traffic, where it comes from, and the time."""
    level: str            # where the compulsory traffic comes from ("MEM", or "L3 40% + MEM 60%")
    bytes: float          # compulsory bytes per step on the node
    bandwidth_Bps: float  # effective bandwidth of that traffic (bytes / mem_s)
    mem_s: float          # B_mem
    total_s: float        # max(B_mem, B_core) + comm_s
    wa_bytes: float       # the same traffic with a write-allocate read of every written vector
    wa_mem_s: float       # its B_mem
    wa_total_s: float     # max(wa_mem_s, B_core) + comm_s


@dataclass(frozen=True)
class Bound:
    level: str            # the step's floor (bound_s): where its traffic comes from
    bytes: float          # its compulsory bytes per step on the node
    bandwidth_Bps: float
    mem_s: float          # B_mem
    core_s: float         # B_core: the step's compulsory arithmetic in-core (max(core_rhs_s, core_lc_s))
    comm_s: float         # cheapest modelled communication per step
    total_s: float        # max(B_mem, B_core) + comm_s
    wa_bytes: float = 0.0
    wa_mem_s: float = 0.0
    wa_total_s: float = 0.0   # bound_wa_s
    sweep: Floor | None = None   # the per-sweep floor (bound_sweep_s, bound_sweep_wa_s)
    core_rhs_s: float = 0.0      # of B_core: the 1 + m s RHS evaluations
    core_lc_s: float = 0.0       # of B_core: the linear combinations

    def to_dict(self) -> dict:
        return asdict(self)


def _floor(nbytes: float, wa_bytes: float, sources, core_s: float, comm_s: float) -> Floor:
    used = [(lvl, w, b) for lvl, w, b in sources if w > 0]
    mem_s = ordered_sum(nbytes * w / b for _, w, b in used)
    wa_mem_s = ordered_sum(wa_bytes * w / b for _, w, b in used)
    shown = [(lvl, w) for lvl, w, _ in used if w >= 0.005]
    level = shown[0][0] if len(shown) == 1 else " + ".join(f"{lvl} {w:.0%}" for lvl, w in shown)
    return Floor(level, float(nbytes), nbytes / mem_s if mem_s else float("inf"), mem_s,
                 max(mem_s, core_s) + comm_s, float(wa_bytes), wa_mem_s, max(wa_mem_s, core_s) + comm_s)


def step_bound(components: int, stages: int, iterations: int, sources, rhs_core_cycles: float,
               clock_hz: float, cores: int, comm_s: float, sweep_sources=None, dp_flops_per_cycle: float = 0.0) -> Bound:
    """components: the node's n_p (all its ranks'); sources: (level, share, bandwidth B/s) of the
    step's traffic, shares summing to 1 (sweep_sources: of the per-sweep floor's; None: the
    same); rhs_core_cycles: in-core cycles of one RHS evaluation of the node's components on one
    core; dp_flops_per_cycle: the core's peak, for the linear combinations (0: they are left
    out); cores: the node's busy cores."""
    core_rhs_s = rhs_evaluations(stages, iterations) * rhs_core_cycles / (clock_hz * cores)
    lc_cycles = 2.0 * lc_products(stages, iterations) * components / dp_flops_per_cycle if dp_flops_per_cycle else 0.0
    core_lc_s = lc_cycles / (clock_hz * cores)
    core_s = max(core_rhs_s, core_lc_s)     # the products may issue beside the RHS (other ports)
    step = _floor(DOUBLE * STEP_VECTORS * components, DOUBLE * (STEP_VECTORS + STEP_WRITTEN) * components,
                  sources, core_s, comm_s)
    nbytes = DOUBLE * compulsory_vectors(stages, iterations) * components
    sweep = _floor(nbytes, nbytes + DOUBLE * written_vectors(stages, iterations) * components,
                   sources if sweep_sources is None else sweep_sources, core_s, comm_s)
    return Bound(step.level, step.bytes, step.bandwidth_Bps, step.mem_s, core_s, comm_s, step.total_s,
                 step.wa_bytes, step.wa_mem_s, step.wa_total_s, sweep, core_rhs_s, core_lc_s)

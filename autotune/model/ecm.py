"""The prediction model of METHOD.md section 5 (eqs 8-11) as pure functions.

    zeta  = alpha * beta / delta                     cycles            (8)
    phi   = zeta / (f * min(tau, sigma))             seconds           (9)
    theta = sum of phi over executions + t_barrier(tau) * barriers    (10)
    psi   = max over nodes of theta + t_comm                          (11)

Where kerncraft's multi-core scaling prediction for tau cores is known
(alpha_tau: cycles per cache line of the whole node), eq 9 uses it instead,
phi = alpha_tau * beta / (delta * f).  The two agree while the single-core
ECM time exceeds the memory term; where a machine model overlaps all
transfers (the Zen files) the single-core time already equals the saturated
memory time and alpha / min(tau, sigma) would promise a speed-up that the
memory interface cannot give (measured: 3x too optimistic on 2 threads).
"""
from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class KernelTerm:
    name: str          # kernel part
    kernel: str        # LC, RHS, APPROX, UPDATE
    regime: str
    alpha: float       # cycles per cache line of work (ECM, one core)
    sigma: float       # saturation point in cores (inf: scales with every core)
    beta: float        # loop iterations per execution on the slowest node
    delta: float       # loop iterations per cache line of work
    executions: int    # executions per time step
    alpha_tau: float | None = None   # cycles per cache line with tau cores (kerncraft scaling), if known


@dataclass(slots=True)
class KernelCost:
    term: KernelTerm
    cores_used: float
    seconds_per_execution: float
    seconds: float = 0.0    # per step: seconds_per_execution * executions (kernel_cost fills it)


@dataclass(slots=True)
class Prediction:
    total_s: float
    node_s: float
    comm_s: float
    barrier_s: float
    kernels: tuple[KernelCost, ...]
    hidden_s: float = 0.0    # communication hidden behind the interior computation (overlap=halo)


def zeta(alpha: float, beta: float, delta: float) -> float:
    return alpha * beta / delta


def phi(zeta_cycles: float, clock_hz: float, threads: int, sigma: float) -> float:
    return zeta_cycles / (clock_hz * min(threads, sigma))


def execution_seconds(alpha: float, alpha_tau: float | None, sigma: float, beta: float, delta: float,
                      clock_hz: float, threads: int) -> tuple[float, float]:
    """(cores used, seconds per execution) of one kernel part: eqs 8-9, or kerncraft's scaling
    (the effective cores are then alpha / alpha_tau)."""
    if alpha_tau is not None:
        return alpha / alpha_tau, zeta(alpha_tau, beta, delta) / clock_hz
    return min(threads, sigma), phi(zeta(alpha, beta, delta), clock_hz, threads, sigma)


def kernel_cost(term: KernelTerm, clock_hz: float, threads: int) -> KernelCost:
    cores, seconds = execution_seconds(term.alpha, term.alpha_tau, term.sigma, term.beta, term.delta,
                                       clock_hz, threads)
    return KernelCost(term, cores, seconds, seconds * term.executions)


def predict(terms: list[KernelTerm], clock_hz: float, threads: int, barriers: int,
            barrier_s: float, comm_s: float) -> Prediction:
    """Seconds per time step of one variant; terms are for the slowest node."""
    costs = tuple(kernel_cost(t, clock_hz, threads) for t in terms)
    return combine_seconds([c.seconds for c in costs], barriers, barrier_s, comm_s, costs)


def combine_seconds(kernel_seconds: list[float], barriers: int, barrier_s: float, comm_s: float,
                    costs: tuple[KernelCost, ...] = (), interior_s: float | None = None) -> Prediction:
    """Eqs 10-11 from each kernel part's seconds per step (costs: their breakdown, if kept).
    interior_s: with the halo exchange overlapped, the seconds of the sweeps' interior that run
    while it is in flight: the step then takes max(comm, interior) + boundary + the rest, i.e.
    min(comm, interior) less than the sum."""
    theta = sum(kernel_seconds) + barrier_s * barriers
    hidden = min(comm_s, interior_s) if interior_s is not None else 0.0
    return Prediction(theta + comm_s - hidden, theta, comm_s, barrier_s * barriers, costs, hidden)


def interior_share(components: int, halo: int) -> float:
    """Share of a node's block whose RHS needs no halo component: all but halo at each end."""
    return max(0, components - 2 * halo) / components if components > 0 else 0.0


def as_sigma(value) -> float:
    """kerncraft's saturation point ('inf' or a core count) as a float."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        return math.inf
    return v if v > 0 else math.inf


def mixed_cost(costs: list[tuple[float, KernelCost]], regime: str) -> KernelCost:
    """One kernel part whose data comes from one or several levels at once (shares summing to 1): the
    share-weighted mean of its cost in each level's regime.  ECM's transfer terms are per cache
    line crossing each interface, so lines from different levels add their terms linearly."""
    base = costs[0][1].term
    alpha = sum(w * c.term.alpha for w, c in costs)
    taus = [c.term.alpha_tau for _, c in costs]
    term = KernelTerm(base.name, base.kernel, regime, alpha, min(c.term.sigma for _, c in costs), base.beta,
                      base.delta, base.executions,
                      None if None in taus else sum(w * t for (w, _), t in zip(costs, taus)))
    per = sum(w * c.seconds_per_execution for w, c in costs)
    return KernelCost(term, sum(w * c.cores_used for w, c in costs), per, per * base.executions)

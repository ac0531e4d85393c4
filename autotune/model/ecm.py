"""The prediction model of docs/method.md#ecm-composition (eqs 8-11): what a prediction is made of, and the
per-kernel breakdown of one.  Pure.

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

The arithmetic is model.steptime's, and only there: the ranking and the breakdowns built here
(regime_cost, mixed_cost) go through the same functions, so a kernel's seconds in a breakdown
are the bits the ranking added up.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from autotune.model.ops import SCALAR
from autotune.model.steptime import RegimeRate, regime_seconds, share_weighted


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


@dataclass(slots=True)
class KernelCost:
    term: KernelTerm
    cores_used: float
    seconds_per_execution: float
    seconds: float = 0.0    # per step: seconds_per_execution * executions


@dataclass(slots=True)
class Prediction:
    total_s: float
    node_s: float
    comm_s: float
    barrier_s: float
    kernels: tuple[KernelCost, ...]
    hidden_s: float = 0.0    # communication hidden behind the interior computation (overlap=halo)
    control_s: float = 0.0   # what step-size control adds per accepted step (model.control)


def regime_cost(term: KernelTerm, rate: RegimeRate) -> KernelCost:
    """One kernel part whose data comes from one level: eqs 8-9 at the rate of its regime
    (model.steptime.regime_rate)."""
    per = regime_seconds(rate.alpha, term.beta, term.delta, rate.divisor)
    return KernelCost(term, rate.cores, per, per * term.executions)


def mixed_cost(costs: list[tuple[float, KernelCost]], regime: str) -> KernelCost:
    """One kernel part whose data comes from one or several levels at once (shares summing to 1): the
    share-weighted mean of its cost in each level's regime, added as model.steptime.per_execution
    adds it.  ECM's transfer terms are per cache line crossing each interface, so lines from
    different levels add their terms linearly."""
    base = costs[0][1].term
    alpha = share_weighted(SCALAR, ((w, c.term.alpha) for w, c in costs))
    term = KernelTerm(base.name, base.kernel, regime, alpha, min(c.term.sigma for _, c in costs), base.beta,
                      base.delta, base.executions)
    per = share_weighted(SCALAR, ((w, c.seconds_per_execution) for w, c in costs))
    cores = share_weighted(SCALAR, ((w, c.cores_used) for w, c in costs))
    return KernelCost(term, cores, per, per * base.executions)


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


def ecm_numbers(r: dict) -> tuple | None:
    """(alpha, sigma, scaling, in-core cycles) of a successful analysis, None of a failed one."""
    if not r.get("ok"):
        return None
    return float(r["cy_per_cl"]), as_sigma(r.get("saturation_cores")), r.get("scaling_cy_per_cl") or [], \
        float(r.get("t_comp") or 0.0)

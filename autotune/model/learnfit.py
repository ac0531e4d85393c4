"""Fitting the learned node parameters (specs.learned) to measured phase times.  Pure (numpy and
scipy, no I/O).

An observation is one solver phase (RHS, LC, APPROX+UPDATE, COPY) of one measured variant in one
scenario: its measured seconds per step, and the kernel work the model prices it from, as
(unit, lines) pairs, where a unit is one ECM result at one scenario's core count.  The model's
seconds for it are the sum of lines x alpha / divisor of each unit's rate (model.steptime) after the
unit's terms are scaled by the factors (model.learned.adjust).

The fit minimises, over the log factors theta,

    sum_i  w_i (log predicted_i(theta) - log measured_i)^2  +  PRIOR_RUNS * sum_k theta_k^2

a robust least squares on log ratios: w_i are Huber weights (iteratively reweighted, scale from
the median absolute deviation), so that a few runs disturbed by a shared machine do not pull the
factors; the second term shrinks every factor toward its benchmarked value 1 as if PRIOR_RUNS
observations had agreed with the ECM model, so that a parameter seen in few runs moves little
(k observations move it about k / (k + PRIOR_RUNS) of the way).  Factors stay within
[1 / LIMIT, LIMIT].
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from autotune.model.ecm import as_sigma
from autotune.model.learned import adjust, parameters_of
from autotune.model.steptime import regime_rate

PRIOR_RUNS = 4.0
LIMIT = 4.0
HUBER = 1.345
MIN_SCALE = 0.1         # repeated runs on a shared machine differ by 10 % and more: no tighter scale
ROBUST_FROM = 10        # observations below which no run is called an outlier (their spread is no scale)
ROUNDS = 5              # reweighting rounds


@dataclass(frozen=True)
class Unit:
    """One ECM result priced at one scenario's cores."""
    result: dict
    kernel: str
    clock_hz: float
    threads: int          # cores busy on the node
    ranks: int            # ranks sharing the node
    numa_cores: int
    cores: int

    def seconds_per_line(self, factors: dict) -> float:
        r = adjust(self.result, self.kernel, factors, self.numa_cores, self.cores) if factors else self.result
        rate = regime_rate(float(r["cy_per_cl"]), as_sigma(r.get("saturation_cores")),
                           r.get("scaling_cy_per_cl") or [], self.clock_hz, self.threads, self.ranks)
        return rate.alpha / rate.divisor


@dataclass(frozen=True)
class Observation:
    group: str                                # the scenario it belongs to (cross-validation folds)
    variant: str
    phase: str
    measured_s: float
    work: tuple[tuple[int, float], ...]       # (unit index, lines)


@dataclass
class Fit:
    factors: dict                             # parameter -> fitted factor
    observations: dict                        # parameter -> observations whose time moves with it
    residual_before_pct: float | None         # median |measured / predicted - 1| over the observations
    residual_after_pct: float | None


class Pricer:
    """The predicted seconds of observations under factors, each unit's rate computed once per
    value of the factors it depends on."""

    def __init__(self, units: list[Unit]):
        self.units = units
        self.params = [tuple(sorted(parameters_of(u.result, u.kernel))) if u.result.get("ok") else ()
                       for u in units]
        self._memo: dict = {}

    def rate(self, k: int, factors: dict) -> float:
        key = (k, tuple(factors.get(p, 1.0) for p in self.params[k]))
        got = self._memo.get(key)
        if got is None:
            mine = {p: factors[p] for p in self.params[k] if p in factors}
            got = self._memo[key] = self.units[k].seconds_per_line(mine)
        return got

    def predict(self, obs: list[Observation], factors: dict) -> list[float]:
        out = []
        for o in obs:
            acc = 0.0
            for k, lines in o.work:
                acc = acc + lines * self.rate(k, factors)
            out.append(acc)
        return out


def _median_abs_pct(measured: list[float], predicted: list[float]) -> float | None:
    devs = [abs(m / p - 1.0) * 100.0 for m, p in zip(measured, predicted) if p > 0]
    return statistics.median(devs) if devs else None


def fit(obs: list[Observation], pricer: Pricer, prior_runs: float = PRIOR_RUNS, rounds: int = ROUNDS) -> Fit:
    """The factors that make the priced observations meet the measured ones (see the module);
    rounds = 1: plain least squares, without the robust reweighting."""
    import numpy as np
    from scipy.optimize import least_squares

    obs = [o for o in obs if o.measured_s > 0 and o.work]
    params = sorted({p for o in obs for k, _ in o.work for p in pricer.params[k]})
    measured = [o.measured_s for o in obs]
    before = pricer.predict(obs, {})
    keep = [i for i, b in enumerate(before) if b > 0 and math.isfinite(b)]
    obs, measured = [obs[i] for i in keep], [measured[i] for i in keep]
    if not obs or not params:
        return Fit({}, {}, _median_abs_pct(measured, [before[i] for i in keep]), None)
    y = np.log(measured)

    def factors_of(theta) -> dict:
        return {p: math.exp(t) for p, t in zip(params, theta)}

    def residual(theta):
        return np.log(np.asarray(pricer.predict(obs, factors_of(theta)))) - y

    theta = np.zeros(len(params))
    weights = np.ones(len(obs))
    prior = math.sqrt(prior_runs)
    limit = math.log(LIMIT)
    for _ in range(rounds if len(obs) >= ROBUST_FROM else 1):
        sw = np.sqrt(weights)
        res = least_squares(lambda t: np.concatenate([sw * residual(t), prior * t]), theta,
                            bounds=(-limit, limit), diff_step=1e-3, xtol=1e-6, ftol=1e-8)
        theta = res.x
        r = residual(theta)
        scale = max(1.4826 * float(np.median(np.abs(r - np.median(r)))), MIN_SCALE)
        z = np.abs(r) / (HUBER * scale)
        weights = np.where(z <= 1.0, 1.0, 1.0 / np.maximum(z, 1e-12))
    factors = factors_of(theta)
    after = pricer.predict(obs, factors)
    return Fit(factors, sensitive(obs, pricer, factors, params, after),
               _median_abs_pct(measured, [before[i] for i in keep]), _median_abs_pct(measured, after))


def largest(factors: dict, count: int = 3) -> list[tuple[str, float]]:
    """The factors furthest from 1 (by their ratio: 0.5 is as far as 2), furthest first."""
    moved = [(p, f) for p, f in factors.items() if f > 0 and abs(math.log(f)) > 1e-4]
    return sorted(moved, key=lambda pf: (-abs(math.log(pf[1])), pf[0]))[:count]


def sensitive(obs: list[Observation], pricer: Pricer, factors: dict, params: list[str], at: list[float]) -> dict:
    """Per parameter: the observations whose predicted time moves with it at these factors (by at
    least a tenth of a 1 % change of the factor; a term below the maximum of an overlapping
    combination does not count)."""
    out = {}
    for p in params:
        moved = pricer.predict(obs, dict(factors, **{p: factors.get(p, 1.0) * 1.01}))
        out[p] = len([m for m, a in zip(moved, at) if a > 0 and abs(m / a - 1.0) > 1e-3])
    return out

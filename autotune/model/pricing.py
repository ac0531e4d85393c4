"""Eqs 8-11 for every variant of a scenario, or of many scenarios at once.  Pure.

The numbers that vary with the scenario (sizes, shares, regimes, seconds) are either plain
floats (one scenario) or numpy arrays over a batch of scenarios (model.ops), and the
arithmetic is written once, in the order of the scalar model (model.ecm), so that both give
the same bits as model.ecm.predict:

    per execution  = sum over the levels its data comes from of  w * seconds(regime)     (9)
    part seconds   = per execution * executions
    kernel seconds = sum of the form's parts in order;   theta = that + t_barrier * barriers  (10)
    psi            = theta + t_comm - min(t_comm, interior RHS seconds if overlapped)     (11)
"""
from __future__ import annotations

from typing import NamedTuple

from autotune.model.ops import Ops
from autotune.model.ranking import Rule, preselect, rank


class RegimeRate(NamedTuple):
    """One part in one regime at the scenario's threads: seconds per execution are
    alpha_eff * beta / delta / divisor (eq 8-9, or kerncraft's scaling where it knows tau cores)."""
    alpha: float
    divisor: float


def regime_rate(alpha: float, sigma: float, scaling, clock_hz: float, threads: int, ranks: int) -> RegimeRate:
    """model.ecm.execution_seconds split into its per-regime constants (same operations, same order):
    with alpha_tau, zeta(alpha_tau, beta, delta) / f; else zeta(alpha, beta, delta) / (f min(tau, sigma))."""
    if len(scaling) >= threads:
        return RegimeRate(float(scaling[threads - 1]) * ranks, clock_hz)
    return RegimeRate(alpha, clock_hz * min(threads, sigma))


def per_execution(ops: Ops, levels, beta, delta: float, alpha_table, divisor_table):
    """Seconds of one execution of a part whose data comes from several levels: levels is
    [(w, code)] in level order (w: share, code: regime index into the tables; NaN entries mark a
    failed analysis and propagate)."""
    acc = 0.0
    for w, code in levels:
        sec = ops.take(alpha_table, code) * beta / delta / ops.take(divisor_table, code)
        acc = acc + ops.where(w > 0, w * sec, 0.0)
    return acc


def ordered_sum(values):
    """sum() of Python numbers: the first term as it is, then left to right."""
    acc = 0
    for v in values:
        acc = acc + v
    return acc


class FormTimes(NamedTuple):
    kernels: object      # sum of the form's parts' seconds per step (NaN: a part failed)
    rhs: object          # of its sweeps that read communicated vectors (the overlap's interior)


def form_times(slot_seconds: list, slots: tuple[int, ...], rhs_slots: tuple[int, ...]) -> FormTimes:
    return FormTimes(ordered_sum(slot_seconds[i] for i in slots), ordered_sum(slot_seconds[i] for i in rhs_slots))


class VariantTimes(NamedTuple):
    total: object
    node: object
    comm: object
    barrier: object
    hidden: object


def variant_times(ops: Ops, form: FormTimes, barriers: int, barrier_s: float, comm_s, overlap: bool,
                  interior) -> VariantTimes:
    """model.ecm.combine_seconds for one variant (its form's times, its scheme's communication)."""
    theta = form.kernels + barrier_s * barriers
    hidden = ops.minimum(comm_s, form.rhs * interior) if overlap else 0.0
    return VariantTimes(theta + comm_s - hidden, theta, comm_s, barrier_s * barriers, hidden)


def rank_one(names: list[str], totals: list[float], failed: list[bool], rule: Rule) -> tuple[list[int], set[str]]:
    """One scenario's order (variant indices, best first) and pre-selection (model.ranking)."""
    index = {n: i for i, n in enumerate(names)}
    ordered = rank([(n, None if f else t) for n, t, f in zip(names, totals, failed)])
    return [index[n] for n, _ in ordered], preselect(ordered, rule)

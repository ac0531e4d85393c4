"""Eqs 8-11 for every variant of a scenario, or of many scenarios at once: the model's one
arithmetic.  Pure.

The numbers that vary with the scenario (sizes, shares, regimes, seconds) are either plain
floats (one scenario) or numpy arrays over a batch of scenarios (model.ops); the arithmetic is
written once, for both, and adds up left to right (autotune.arith), so one scenario priced alone,
the same scenario in a batch, and either on any Python give the same bits.  The per-kernel
breakdowns (model.ecm) are built from the same functions:

    seconds(regime) = alpha * beta / delta / divisor      (8-9; the rate of the regime)
    per execution   = sum over the levels its data comes from of  w * seconds(regime)     (9)
    part seconds    = per execution * executions
    kernel seconds  = sum of the form's parts in order;   theta = that + t_barrier * barriers  (10)
    psi             = theta + t_comm - min(t_comm, interior RHS seconds if overlapped)     (11)
"""
from __future__ import annotations

from typing import NamedTuple

from autotune.arith import ordered_sum
from autotune.model.ops import Ops
from autotune.model.preselect import Rule, preselect, rank


class RegimeRate(NamedTuple):
    """One part in one regime at the scenario's threads: seconds per execution are
    alpha * beta / delta / divisor (eq 8-9: alpha with divisor f min(tau, sigma), or kerncraft's
    scaling alpha_tau with divisor f where it knows tau cores), on `cores` effective cores."""
    alpha: float
    divisor: float
    cores: float


def regime_rate(alpha: float, sigma: float, scaling, clock_hz: float, threads: int, ranks: int) -> RegimeRate:
    """The rate of one ECM result (alpha: cycles per cache line on one core, sigma: saturation
    cores, scaling: kerncraft's cycles per cache line on 1, 2, ... cores) at `threads` cores per
    rank and `ranks` ranks per node.  With alpha_tau the effective cores are alpha / alpha_tau."""
    if len(scaling) >= threads:
        alpha_tau = float(scaling[threads - 1]) * ranks
        return RegimeRate(alpha_tau, clock_hz, alpha / alpha_tau)
    cores = min(threads, sigma)
    return RegimeRate(alpha, clock_hz * cores, cores)


def regime_seconds(alpha, beta, delta: float, divisor):
    """Seconds of one execution in one regime: zeta = alpha beta / delta cycles (eq 8) over the
    rate's divisor (eq 9)."""
    return alpha * beta / delta / divisor


def share_weighted(ops: Ops, pairs):
    """The sum of w * x over (w, x) pairs in the order given, where w > 0 (a level whose share is
    0 adds nothing, even where its x is NaN)."""
    acc = 0.0
    for w, x in pairs:
        acc = acc + ops.where(w > 0, w * x, 0.0)
    return acc


def per_execution(ops: Ops, levels, beta, delta: float, alpha_table, divisor_table):
    """Seconds of one execution of a part whose data comes from several levels: levels is
    [(w, code)] in level order (w: share, code: regime index into the tables; NaN entries mark a
    failed analysis and propagate)."""
    return share_weighted(ops, ((w, regime_seconds(ops.take(alpha_table, code), beta, delta,
                                                   ops.take(divisor_table, code))) for w, code in levels))


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
    control: object = 0.0    # what step-size control adds per accepted step (model.control)


def variant_times(ops: Ops, form: FormTimes, barriers: int, barrier_s: float, comm_s, overlap: bool,
                  interior, control=None) -> VariantTimes:
    """Eqs 10-11 for one variant (its form's times, its scheme's communication).  With the halo
    exchange overlapped (overlap=halo), the interior of the sweeps that read communicated vectors
    runs while it is in flight: the step then takes max(comm, interior) + boundary + the rest,
    i.e. min(comm, interior) less than the sum.  control: step-size control's cost
    (model.control.ControlCost; None: a fixed step), added per accepted step."""
    theta = form.kernels + barrier_s * barriers
    hidden = ops.minimum(comm_s, form.rhs * interior) if overlap else 0.0
    step = theta + comm_s - hidden
    added = control.added(step) if control is not None else 0.0
    return VariantTimes(step + added, theta, comm_s, barrier_s * barriers, hidden, added)


def rank_one(names: list[str], totals: list[float], failed: list[bool], rule: Rule) -> tuple[list[int], set[str]]:
    """One scenario's order (variant indices, best first) and pre-selection (model.preselect)."""
    index = {n: i for i, n in enumerate(names)}
    ordered = rank([(n, None if f else t) for n, t, f in zip(names, totals, failed)])
    return [index[n] for n, _ in ordered], preselect(ordered, rule)

"""Predicted against measured: deviations, rank correlations, the loss of trusting the model.  Pure."""
from __future__ import annotations

import math
import statistics

from autotune.arith import ordered_sum

from autotune.specs.step import PHASE as PHASE_OF_KERNEL   # the solver phase that times each kernel group
from autotune.specs.step import Group


def predicted_phases(kernel_seconds: list[tuple[str, float]], comm_s: float) -> dict[str, float]:
    """Seconds per step by solver phase from (kernel group, seconds) pairs; the network time
    joins COMM (with the pack copy).  Thread barriers fall inside the phases and are left out."""
    out = {"COMM": comm_s}
    for kernel, seconds in kernel_seconds:
        phase = PHASE_OF_KERNEL[kernel]
        out[phase] = out.get(phase, 0.0) + seconds
    return out


def predicted_sweeps(kernel_seconds: list[tuple[str, float, int]], timers: tuple[tuple[str, Group], ...]
                     ) -> dict[str, float]:
    """Seconds of each timed sweep (specs.step.StepForm.timers: the fused sweeps) from (kernel
    group, seconds per step, executions per step) of the parts: a sweep of group G runs one
    execution of each of G's parts."""
    per: dict[str, float] = {}
    for kernel, seconds, executions in kernel_seconds:
        if executions:
            per[kernel] = per.get(kernel, 0.0) + seconds / executions
    return {name: per[group] for name, group in timers if group in per}


def phase_ratios(rows: list) -> dict[str, dict]:
    """Per phase: measured / predicted over the variants that carry both (median, min, max), to
    find which kernel a miss comes from.  rows: with phases (results.tune.TuneRow)."""
    ratios: dict[str, list[float]] = {}
    for r in rows:
        for phase, pm in (r.phases or {}).items():
            if pm.get("predicted_s") and pm.get("measured_s") is not None:
                ratios.setdefault(phase, []).append(pm["measured_s"] / pm["predicted_s"])
    return {ph: {"median": statistics.median(v), "min": min(v), "max": max(v)} for ph, v in ratios.items()}


def _ranks(values: list[float]) -> list[int]:
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0] * len(values)
    for r, i in enumerate(order, 1):
        ranks[i] = r
    return ranks


def compare(rows: list) -> dict:
    """rows: results.tune.TuneRow (name, predicted_s, measured_s: None if the run failed, phases).
    Sets each row's deviation_pct, rank_predicted and rank_measured; returns the summary (Spearman,
    Kendall, top-1 loss, deviation range and median |deviation|)."""
    ok = [r for r in rows if r.measured_s and r.predicted_s]
    counted = {id(r) for r in ok}
    for r in rows:
        r.deviation_pct = 100.0 * (r.predicted_s - r.measured_s) / r.measured_s if id(r) in counted else None
        r.rank_predicted = r.rank_measured = None
    rp = _ranks([r.predicted_s for r in ok])
    rm = _ranks([r.measured_s for r in ok])
    for r, a, b in zip(ok, rp, rm):
        r.rank_predicted, r.rank_measured = a, b
    summary = {"measured": len(ok), "failed": len(rows) - len(ok), "spearman": None, "kendall": None,
               "top1_loss_pct": None, "deviation_pct_range": None, "phase_ratio": phase_ratios(ok)}
    if ok:
        best_measured = min(r.measured_s for r in ok)
        best_pred = min(r.predicted_s for r in ok)
        # variants the model cannot tell apart (equal predictions) share the top place: the loss
        # is the mean over them (the expected loss of picking one), the worst case is kept too
        tied = [r for r in ok if r.predicted_s <= best_pred * (1 + 1e-9)]
        losses = [100.0 * (r.measured_s - best_measured) / best_measured for r in tied]
        predicted_best = min(tied, key=lambda r: r.name)
        summary["top1_loss_pct"] = ordered_sum(losses) / len(losses)
        summary["top1_loss_worst_pct"] = max(losses)
        summary["predicted_best_tied"] = [r.name for r in tied]
        devs = [r.deviation_pct for r in ok]
        summary["deviation_pct_range"] = [min(devs), max(devs)]
        summary["median_abs_deviation_pct"] = statistics.median(abs(d) for d in devs)
        summary["predicted_best"] = predicted_best.name
        summary["measured_best"] = min(ok, key=lambda r: r.measured_s).name
    p = [r.predicted_s for r in ok]
    m = [r.measured_s for r in ok]
    if len(set(p)) >= 2 and len(set(m)) >= 2:    # a constant side has no rank correlation (None)
        from scipy.stats import kendalltau, spearmanr
        rho, tau = spearmanr(p, m).statistic, kendalltau(p, m).statistic
        summary["spearman"] = None if math.isnan(rho) else float(rho)
        summary["kendall"] = None if math.isnan(tau) else float(tau)
    return summary

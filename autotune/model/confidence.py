"""How sure tune's summary figures are: bootstrap intervals over the repetitions.  Pure.

tune runs each variant a few times and reports the median.  Resampling each variant's repetitions
with replacement (each variant on its own) and recomputing a figure from the resampled medians
many times gives the spread of that figure under run-to-run noise; the percentile interval of the
spread is what is reported.  The figures are those of model.compare (Spearman, Kendall, top-1 loss,
median |deviation|) and the gain of model.check's sample check.

Every variant draws from its own random stream, seeded by the seed and its name, so the same input
gives the same intervals bit for bit, and a variant resamples the same way in every figure.
docs/tuning.md#figures-with-their-confidence.
"""
from __future__ import annotations

import hashlib
import statistics

import numpy as np
from scipy.stats import rankdata

from autotune.arith import ordered_sum

CONFIDENCE = 0.95       # the share of the bootstrap distribution an interval covers
RESAMPLES = 2000        # bootstrap resamples per figure
SEED = 20250            # the default seed: the intervals replay exactly

# predictions within this relative distance of the best share the top place (as in compare())
_TIED = 1e-9
# Kendall's pairwise signs are computed for this many (resample, pair) cells at a time
_BLOCK_CELLS = 4_000_000


def _stream(seed: int, name: str) -> np.random.Generator:
    """The random stream of one variant: the seed and the name's digest (stable across processes)."""
    digest = hashlib.blake2b(name.encode(), digest_size=8).digest()
    return np.random.default_rng([seed, int.from_bytes(digest[:4], "little"), int.from_bytes(digest[4:], "little")])


def bootstrap_medians(runs: dict[str, list[float]], resamples: int = RESAMPLES, seed: int = SEED
                      ) -> dict[str, np.ndarray]:
    """For each variant, `resamples` medians of its repetitions drawn with replacement (as many
    draws as repetitions), one array of shape (resamples,) per name.  A variant with one repetition
    gets that value every time; one with none is left out."""
    out = {}
    for name, values in runs.items():
        values = np.asarray(values, dtype=float)
        if values.size == 0:
            continue
        picks = _stream(seed, name).integers(0, values.size, size=(resamples, values.size))
        out[name] = np.median(values[picks], axis=1)
    return out


def _interval(values: np.ndarray, confidence: float) -> list[float] | None:
    """The percentile interval [low, high] of the finite values (None: none is finite)."""
    values = values[np.isfinite(values)]
    if values.size == 0:
        return None
    tail = 50.0 * (1.0 - confidence)
    low, high = np.percentile(values, [tail, 100.0 - tail])
    return [float(low), float(high)]


def median_interval(runs: list[float], confidence: float = CONFIDENCE, resamples: int = RESAMPLES,
                    seed: int = SEED) -> list[float] | None:
    """The bootstrap interval [low, high] of one variant's median (None: no runs)."""
    medians = bootstrap_medians({"": runs}, resamples, seed)
    return _interval(medians[""], confidence) if medians else None


def _measured(rows: list) -> list:
    """The rows compare() counts: a prediction and repetitions, and not failed (measured_s None)."""
    return [r for r in rows if r.predicted_s and r.runs_s and r.measured_s is not None]


def _pearson(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pearson's r of the vector a with each row of b (NaN where a row is constant)."""
    a = a - a.mean()
    b = b - b.mean(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (b @ a) / np.sqrt((a @ a) * np.einsum("ij,ij->i", b, b))


def spearman_rows(predicted: np.ndarray, measured: np.ndarray) -> np.ndarray:
    """Spearman's rho of the predictions with each row of measured (resamples x variants): the
    Pearson correlation of average ranks, ties ranked as scipy.stats.spearmanr ranks them."""
    return _pearson(rankdata(predicted), rankdata(measured, axis=1))


def kendall_rows(predicted: np.ndarray, measured: np.ndarray) -> np.ndarray:
    """Kendall's tau-b (scipy.stats.kendalltau's default) of the predictions with each row of
    measured: the sum of the pairs' sign products over the root of the untied pair counts."""
    i, j = np.triu_indices(predicted.size, 1)
    sx = np.sign(predicted[i] - predicted[j])
    untied_x = np.count_nonzero(sx)
    step = max(1, _BLOCK_CELLS // max(1, i.size))
    out = np.empty(measured.shape[0])
    for start in range(0, measured.shape[0], step):      # blocks bound the memory, not a loop per resample
        sy = np.sign(measured[start:start + step, i] - measured[start:start + step, j])
        with np.errstate(invalid="ignore", divide="ignore"):
            out[start:start + step] = (sy @ sx) / np.sqrt(untied_x * np.count_nonzero(sy, axis=1))
    return out


def top1_loss_rows(predicted: np.ndarray, measured: np.ndarray) -> np.ndarray:
    """compare()'s top-1 loss for each row of measured: the mean loss (% of the row's best) over
    the variants tied at the best prediction, added in their order as compare() adds them."""
    tied = np.flatnonzero(predicted <= predicted.min() * (1 + _TIED))
    best = measured.min(axis=1)
    losses = (100.0 * (measured[:, t] - best) / best for t in tied)
    return ordered_sum(losses) / len(tied)


def median_abs_deviation_rows(predicted: np.ndarray, measured: np.ndarray) -> np.ndarray:
    """compare()'s median |deviation| (% of measured) for each row of measured."""
    return np.median(np.abs(100.0 * (predicted - measured) / measured), axis=1)


def summary_intervals(rows: list, confidence: float = CONFIDENCE, resamples: int = RESAMPLES,
                      seed: int = SEED) -> dict:
    """Bootstrap intervals of compare()'s summary figures.  rows: results.tune.TuneRow (name,
    predicted_s, runs_s: the repetitions, measured_s: None if failed), as compare() takes them.  Returns
    {confidence, resamples, spearman, kendall, top1_loss_pct, median_abs_deviation_pct}, each figure
    [low, high] or None where compare() gives None (no measured row; for the rank correlations,
    fewer than 2 distinct predictions or medians).  Resamples where a rank correlation is undefined
    (all medians equal) are left out of its interval."""
    ok = _measured(rows)
    out = {"confidence": confidence, "resamples": resamples, "spearman": None, "kendall": None,
           "top1_loss_pct": None, "median_abs_deviation_pct": None}
    if not ok:
        return out
    medians = bootstrap_medians({r.name: r.runs_s for r in ok}, resamples, seed)
    measured = np.column_stack([medians[r.name] for r in ok])
    predicted = np.array([r.predicted_s for r in ok], dtype=float)
    out["top1_loss_pct"] = _interval(top1_loss_rows(predicted, measured), confidence)
    out["median_abs_deviation_pct"] = _interval(median_abs_deviation_rows(predicted, measured), confidence)
    point = {statistics.median(r.runs_s) for r in ok}
    if len(set(predicted.tolist())) >= 2 and len(point) >= 2:
        out["spearman"] = _interval(spearman_rows(predicted, measured), confidence)
        out["kendall"] = _interval(kendall_rows(predicted, measured), confidence)
    return out


def gain_rows(pre: np.ndarray, sample: np.ndarray) -> np.ndarray:
    """check_sample()'s gain for each resample: % by which the best of the sample (columns of
    sample) is faster than the best of the pre-selection (columns of pre)."""
    pre_best = pre.min(axis=1)
    return 100.0 * (pre_best - sample.min(axis=1)) / pre_best


def gain_interval(rows: list, confidence: float = CONFIDENCE, resamples: int = RESAMPLES,
                  seed: int = SEED) -> list[float] | None:
    """The bootstrap interval [low, high] of the sample check's gain (model.check.check_sample's
    sample_gain_pct).  rows: results.tune.TuneRow (name, runs_s, measured_s: None if failed, sampled,
    baseline); the rows not sampled are the pre-selection, baseline rows are no part of the check.
    None where the pre-selection or the sample has no measured row."""
    kept = [r for r in rows if not r.baseline and r.runs_s and r.measured_s is not None]
    medians = bootstrap_medians({r.name: r.runs_s for r in kept}, resamples, seed)
    pre = [medians[r.name] for r in kept if not r.sampled]
    sample = [medians[r.name] for r in kept if r.sampled]
    if not pre or not sample:
        return None
    return _interval(gain_rows(np.column_stack(pre), np.column_stack(sample)), confidence)


def describe(interval: list[float] | None, unit: str = "", digits: int = 1) -> str:
    """An interval in words, 'a .. b unit' ('n/a' for None)."""
    if interval is None:
        return "n/a"
    low, high = interval
    return f"{low:.{digits}f} .. {high:.{digits}f}" + (f" {unit}" if unit else "")

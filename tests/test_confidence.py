"""Bootstrap intervals of tune's summary figures and of the sample check's gain."""
import statistics
from dataclasses import replace

import numpy as np
import pytest
from scipy.stats import kendalltau, spearmanr

from autotune.model.check import check_sample
from autotune.model.compare import compare
from autotune.model.confidence import (CONFIDENCE, RESAMPLES, SEED, bootstrap_medians, gain_interval,
                                       kendall_rows, spearman_rows, summary_intervals)
from autotune.results.tune import TuneRow

FIGURES = ("spearman", "kendall", "top1_loss_pct", "median_abs_deviation_pct")


def _rows(noise: float, k: int = 30, reps: int = 7, seed: int = 1) -> list[TuneRow]:
    """k variants whose measured times follow the predictions loosely (the model is off by up to
    +-30 %, so the ranking is imperfect), each run `reps` times with relative noise `noise`."""
    rng = np.random.default_rng(seed)
    predicted = 1.0 + 0.05 * np.arange(k)
    truth = predicted * (1.0 + rng.uniform(-0.3, 0.3, k))
    rows = []
    for i in range(k):
        runs = (truth[i] * (1.0 + noise * rng.standard_normal(reps))).tolist()
        rows.append(TuneRow(f"v{i:02d}", float(predicted[i]), statistics.median(runs), runs))
    return rows


def _width(interval: list[float]) -> float:
    return interval[1] - interval[0]


def test_zero_noise_collapses_to_compares_figures():
    rows = _rows(0.0)
    rows[1].predicted_s = rows[0].predicted_s                # two share the top place
    rows[5].runs_s = rows[6].runs_s = [2.0] * 7               # and two measure the same
    for r in rows:
        r.measured_s = statistics.median(r.runs_s)
    point = compare([replace(r) for r in rows])
    got = summary_intervals(rows)
    assert (got["confidence"], got["resamples"]) == (CONFIDENCE, RESAMPLES)
    for figure in FIGURES:
        low, high = got[figure]
        assert low == high == pytest.approx(point[figure], rel=1e-12, abs=1e-12), figure
    assert 0.0 < point["spearman"] < 1.0 and point["top1_loss_pct"] > 0.0   # not a trivial case


def test_noisy_intervals_hold_the_point_figure():
    rows = _rows(0.05)
    point = compare([replace(r) for r in rows])
    got = summary_intervals(rows)
    for figure in FIGURES:
        low, high = got[figure]
        assert low < high and low <= point[figure] <= high, (figure, got[figure], point[figure])
    assert -1.0 <= got["spearman"][0] and got["spearman"][1] <= 1.0
    assert -1.0 <= got["kendall"][0] and got["kendall"][1] <= 1.0
    assert got["top1_loss_pct"][0] >= 0.0


def test_noisier_runs_give_wider_intervals():
    calm, rough = summary_intervals(_rows(0.01)), summary_intervals(_rows(0.10))
    for figure in FIGURES:
        assert _width(rough[figure]) > _width(calm[figure]), figure


def test_the_same_seed_replays_bit_for_bit():
    rows = _rows(0.05)
    first = summary_intervals(rows)
    assert summary_intervals([replace(r) for r in rows]) == first
    assert summary_intervals(rows, seed=SEED + 1) != first
    assert gain_interval(_check_rows(1.0, 0.9, 0.05)) == gain_interval(_check_rows(1.0, 0.9, 0.05))


def test_bootstrap_medians():
    runs = {"a": [1.0, 2.0, 3.0, 4.0, 10.0], "b": [5.0], "c": []}
    got = bootstrap_medians(runs, resamples=500, seed=3)
    assert set(got) == {"a", "b"} and got["a"].shape == got["b"].shape == (500,)
    assert np.all(got["b"] == 5.0)                             # one repetition: its value every time
    assert set(np.unique(got["a"])) <= {1.0, 2.0, 3.0, 4.0, 10.0}   # odd count: a median is one of the runs
    assert len(np.unique(got["a"])) > 1
    # each variant resamples on its own: another variant beside it changes nothing
    alone = bootstrap_medians({"a": runs["a"]}, resamples=500, seed=3)
    assert np.array_equal(alone["a"], got["a"])
    assert not np.array_equal(bootstrap_medians({"a": runs["a"]}, 500, seed=4)["a"], got["a"])


def test_rank_correlations_match_scipy_with_ties():
    rng = np.random.default_rng(0)
    predicted = np.array([1.0, 1.0, 2.0, 3.0, 3.0, 4.0, 5.0])
    measured = rng.integers(0, 4, size=(50, predicted.size)).astype(float)   # many ties
    rho, tau = spearman_rows(predicted, measured), kendall_rows(predicted, measured)
    for row, r, t in zip(measured, rho, tau):
        if len(set(row)) < 2:
            assert np.isnan(r) and np.isnan(t)
            continue
        assert r == pytest.approx(spearmanr(predicted, row).statistic, abs=1e-12)
        assert t == pytest.approx(kendalltau(predicted, row).statistic, abs=1e-12)


def test_figures_without_a_point_have_no_interval():
    empty = summary_intervals([])
    assert all(empty[f] is None for f in FIGURES)
    failed = summary_intervals([TuneRow("a", 1.0, None, []), TuneRow("b", 2.0, None, [1.0, 1.1])])
    assert all(failed[f] is None for f in FIGURES)             # a run marked failed counts as none
    one = summary_intervals([TuneRow("a", 1.0, 1.1, [1.0, 1.2, 1.1])])
    assert one["spearman"] is None and one["kendall"] is None and one["top1_loss_pct"] == [0.0, 0.0]
    same = summary_intervals([TuneRow(n, 1.0, t * 1.05, [t, t * 1.1]) for n, t in (("a", 1.0), ("b", 2.0))])
    assert same["spearman"] is None and same["kendall"] is None   # a constant side: no rank correlation
    assert same["median_abs_deviation_pct"] is not None
    flat = summary_intervals([TuneRow(n, p, 1.0, [1.0] * 3) for n, p in (("a", 1.0), ("b", 2.0))])
    assert flat["spearman"] is None and flat["top1_loss_pct"] == [0.0, 0.0]


def _check_rows(pre_s: float, sample_s: float, noise: float, reps: int = 7) -> list[TuneRow]:
    """Three pre-selected and three sampled variants; the best of each side at pre_s and sample_s."""
    rng = np.random.default_rng(11)
    rows = []
    for side, best, sampled in (("p", pre_s, False), ("s", sample_s, True)):
        for i, factor in enumerate((1.0, 1.15, 1.3)):
            runs = (best * factor * (1.0 + noise * rng.standard_normal(reps))).tolist()
            rows.append(TuneRow(f"{side}{i}", None, statistics.median(runs), runs, sampled=sampled))
    return rows


def _check(rows: list[TuneRow]) -> dict:
    return check_sample(rows, 40, "top 3", 0, gain_interval=gain_interval(rows))


def test_a_clearly_faster_sample_is_a_miss():
    c = _check(_check_rows(1.0, 0.7, 0.02))
    low, high = c["sample_gain_interval_pct"]
    assert 5.0 < low <= c["sample_gain_pct"] <= high and c["sample_gain_pct"] == pytest.approx(30.0, abs=3.0)
    assert c["verdict"].startswith("missed: the best of 3 random variants")
    assert f"{low:.1f} .. {high:.1f} %" in c["verdict"] and "beyond the 5 % margin" in c["verdict"]


def test_a_noisy_tie_is_undecided():
    c = _check(_check_rows(1.0, 1.0, 0.10))
    low, high = c["sample_gain_interval_pct"]
    assert low <= 5.0 < high
    assert c["verdict"].startswith("undecided: the best of 3 random variants")
    assert f"{low:.1f} .. {high:.1f} %" in c["verdict"] and "straddles the 5 % margin" in c["verdict"]


def test_a_clearly_slower_sample_holds():
    c = _check(_check_rows(1.0, 1.3, 0.02))
    low, high = c["sample_gain_interval_pct"]
    assert low <= c["sample_gain_pct"] <= high < 0.0
    assert c["verdict"].startswith("pre-selection held: the best of 3 random variants")
    assert "within the 5 % margin" in c["verdict"]


def test_the_gain_needs_both_sides_and_leaves_the_baseline_out():
    rows = _check_rows(1.0, 0.7, 0.02)
    pre = [r for r in rows if not r.sampled]
    sample = [r for r in rows if r.sampled]
    assert gain_interval(pre) is None and gain_interval(sample) is None
    assert gain_interval(pre + [replace(r, runs_s=[], measured_s=None) for r in sample]) is None
    assert gain_interval(pre + [replace(r, measured_s=None) for r in sample]) is None   # marked failed
    fast_baseline = TuneRow("paper", None, 0.1, [0.1] * 7, baseline=True)
    assert gain_interval(rows + [fast_baseline]) == gain_interval(rows)
    # one repetition a side: no spread, the interval is the point gain
    single = [TuneRow("p", None, 1.0, [1.0]), TuneRow("s", None, 0.8, [0.8], sampled=True)]
    assert gain_interval(single) == pytest.approx([20.0, 20.0])

import pytest

from autotune.model.compare import compare, phase_ratios, predicted_phases
from autotune.results.tune import TuneRow


def test_perfect_ranking_and_loss():
    rows = [TuneRow("a", 1.0, 2.0), TuneRow("b", 2.0, 3.0), TuneRow("c", 3.0, 4.5)]
    s = compare(rows)
    assert s["spearman"] == pytest.approx(1.0) and s["kendall"] == pytest.approx(1.0)
    assert s["top1_loss_pct"] == 0.0 and rows[0].deviation_pct == pytest.approx(-50.0)
    assert [r.rank_measured for r in rows] == [1, 2, 3]
    assert s["deviation_pct_range"] == pytest.approx([-50.0, -33.333333], rel=1e-6)
    assert s["median_abs_deviation_pct"] == pytest.approx(100 / 3)   # |-50|, |-33.3|, |-33.3|


def test_wrong_winner_costs_and_failures_are_kept():
    rows = [TuneRow("a", 1.0, 1.1), TuneRow("b", 2.0, 1.0), TuneRow("c", 3.0, None)]
    s = compare(rows)
    assert s["top1_loss_pct"] == pytest.approx(10.0)
    assert s["spearman"] == pytest.approx(-1.0) and s["failed"] == 1
    assert rows[2].deviation_pct is None and rows[2].rank_measured is None
    assert s["predicted_best"] == "a" and s["measured_best"] == "b"


def test_tied_predictions_share_the_top_place():
    rows = [TuneRow("a", 1.0, 1.2), TuneRow("b", 1.0, 1.0), TuneRow("c", 2.0, 1.5)]
    s = compare(rows)
    assert s["predicted_best_tied"] == ["a", "b"]
    assert s["top1_loss_pct"] == pytest.approx(10.0) and s["top1_loss_worst_pct"] == pytest.approx(20.0)


def test_phases_group_the_kernels_and_ratios_locate_a_miss():
    pred = predicted_phases([("LC", 1.0), ("LC", 0.5), ("RHS", 2.0), ("PACK", 0.25), ("COPY", 0.1),
                             ("APPROX", 0.2), ("UPDATE", 0.1)], comm_s=0.75)
    assert pred == pytest.approx({"LC": 1.5, "RHS": 2.0, "COMM": 1.0, "COPY": 0.1, "APPROX+UPDATE": 0.3})
    rows = [TuneRow("v", phases={"LC": {"predicted_s": 1.0, "measured_s": m},
                                 "RHS": {"predicted_s": 2.0, "measured_s": 2.0}}) for m in (1.0, 3.0, 2.0)]
    q = phase_ratios(rows)
    assert q["LC"] == pytest.approx({"median": 2.0, "min": 1.0, "max": 3.0}) and q["RHS"]["median"] == 1.0

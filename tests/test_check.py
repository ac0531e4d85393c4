"""tune --sample: the pre-selection checked against a random draw of the variants it leaves out."""
import csv
import io
import json

import pytest

import autotune
from autotune.model.check import HELD_MARGIN_PCT, check_sample, draw_sample
from autotune.model.preselect import Rule
from autotune.request.selection import Sample, sample_of
from autotune.report.render import render
from autotune.results.tune import TuneCheck, TuneResult, TuneRow, TuneSummary

from .conftest import run_cli

POOL = [f"v{i:02d}" for i in range(40)]
TOP = POOL[:5]


def test_the_draw_is_deterministic_for_a_seed_and_leaves_the_preselection_out():
    first = draw_sample(POOL, TOP, 10, seed=7)
    assert first == draw_sample(POOL, TOP, 10, seed=7) == draw_sample(list(POOL), set(TOP), 10, 7)
    assert len(first) == len(set(first)) == 10 and not set(first) & set(TOP) and set(first) <= set(POOL)
    assert first == sorted(first, key=POOL.index)            # in rank order
    assert draw_sample(POOL, TOP, 10, seed=8) != first
    assert draw_sample(POOL, TOP, 1000, seed=7) == POOL[5:]  # fewer left than asked: all of them
    assert draw_sample(POOL, POOL, 3, seed=7) == []


def _rows(pre: list[float], sample: list[float | None]) -> list[TuneRow]:
    return ([TuneRow(f"p{i}", None, t) for i, t in enumerate(pre)]
            + [TuneRow(f"s{i}", None, t, sampled=True) for i, t in enumerate(sample)])


def test_held_when_the_sample_is_slower():
    c = check_sample(_rows([1.0, 1.2], [1.031, 2.0, None]), pool_size=40, selection="top 2", seed=3)
    assert c["preselected_best"] == {"name": "p0", "measured_s": 1.0}
    assert c["sample_best"] == {"name": "s0", "measured_s": 1.031}
    assert c["sample_beats_preselected"] is False and c["sample_gain_pct"] == pytest.approx(-3.1)
    assert c["verdict"].startswith("pre-selection held: the best of 3 random variants (s0) is 3.1 % slower "
                                   "than the best of the 2 pre-selected (top 2)")
    assert (c["sampled"], c["pool"], c["preselected"], c["seed"]) == (3, 40, 2, 3)
    assert c["runs_saved_pct"] == pytest.approx(95.0)
    TuneCheck(**c)                                           # the result type takes it as it is


def test_held_within_the_margin_and_missed_beyond_it():
    near = check_sample(_rows([1.0], [0.97]), 20, "top 1", 0)
    assert near["sample_beats_preselected"] is True and near["sample_gain_pct"] == pytest.approx(3.0)
    assert near["verdict"].startswith("pre-selection held:") and f"{HELD_MARGIN_PCT:g} % margin" in near["verdict"]
    missed = check_sample(_rows([1.0, 1.1], [0.8, 1.5]), 20, "top 2", 0)
    assert missed["sample_beats_preselected"] is True and missed["sample_gain_pct"] == pytest.approx(20.0)
    assert missed["verdict"] == ("missed: the best of 2 random variants (s0) is 20.0 % faster than the best "
                                 "of the 2 pre-selected (top 2)")
    assert missed["runs_saved_pct"] == pytest.approx(90.0)


def test_nothing_to_compare():
    empty = check_sample(_rows([1.0], []), 1, "top 1", 0)
    assert empty["sample_best"] is None and empty["sample_beats_preselected"] is None
    assert empty["verdict"].startswith("nothing to sample") and empty["runs_saved_pct"] == 0.0
    failed = check_sample(_rows([None], [1.0]), 10, "top 1", 0)
    assert failed["preselected_best"] is None and failed["sample_gain_pct"] is None
    assert failed["verdict"].startswith("undecided")


def test_sample_request():
    assert sample_of(None) is None and sample_of(None, "5") is None
    assert sample_of("4", "9", Rule("top", 3)) == Sample(4, 9) == sample_of(4, 9)
    assert sample_of(2, None) == Sample(2, 0) and sample_of(2, -3) == Sample(2, -3)
    for size, seed, field in ((0, 0, "sample"), (-1, 0, "sample"), ("x", 0, "sample"), (True, 0, "sample"),
                              (2.5, 0, "sample"), (2, "x", "seed"), (None, "x", "seed")):
        with pytest.raises(autotune.InputError) as e:
            sample_of(size, seed)
        assert e.value.field == field
    with pytest.raises(autotune.InputError) as e:
        sample_of(3, 0, Rule("all"))
    assert e.value.field == "sample" and "every variant runs already" in str(e.value)
    with pytest.raises(autotune.InputError) as e:
        sample_of(3, 0, named=True)
    assert e.value.field == "sample"


@pytest.mark.parametrize("argv,needle", [
    (["--sample", "0"], "--sample 0: expected an integer >= 1"),
    (["--sample", "-1"], "--sample -1: expected an integer >= 1"),
    (["--sample", "x"], "--sample x: expected an integer"),
    (["--sample", "3", "--seed", "x"], "--seed x: expected an integer"),
    (["--seed", "x"], "--seed x: expected an integer"),
    (["--sample", "3", "--all"], "--sample 3: every variant runs already"),
    (["--sample", "3", "--variants", "lc=jli,comm=neighbour"], "--sample 3: not with named variants"),
    (["--sample", "3", "--plan", "plan.json"], "--sample 3: not with --plan"),
])
def test_bad_sample_exits_2_with_one_line(argv, needle, capsys, tmp_path):
    code, out, err = run_cli(capsys, "tune", "--ivp", "heat2d", *argv, "--store", tmp_path / "s.sqlite")
    assert code == 2 and out == "" and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1 and needle in err, err


def test_api_refuses_a_bad_sample(tmp_path):
    with pytest.raises(autotune.InputError) as e:
        autotune.tune(autotune.TuneRequest.of("heat2d", sample=0), store=tmp_path / "s.sqlite")
    assert e.value.field == "sample" and str(e.value).startswith("sample 0:")
    with pytest.raises(autotune.InputError) as e:
        autotune.tune(autotune.TuneRequest.of("heat2d", sample=2, all=True), store=tmp_path / "s.sqlite")
    assert e.value.field == "sample"
    request = autotune.TuneRequest.of("heat2d", sample=2)      # a sample, then every variant asked for
    with pytest.raises(autotune.InputError) as e:
        autotune.TuneRequest.of(request, all=True)
    assert e.value.field == "sample"


def test_tune_with_a_sample(replay_store, private_builds, capsys):
    """Two pre-selected and two sampled variants measured in one run; the check recomputed from the rows."""
    argv = ["tune", "--ivp", "heat2d", "--nodes", "2", "--threads", "1", "--n", 1200 ** 2, "--top", "2",
            "--sample", "2", "--seed", "5", "--steps", "2", "--warmup", "1", "--reps", "1", "--store", replay_store]
    code, out, err = run_cli(capsys, *argv, "--format", "json")
    assert code == 0, err
    res = json.loads(out)
    rows, s = res["variants"], res["summary"]
    pre = [r for r in rows if r["preselected"]]
    sampled = [r for r in rows if r.get("sampled")]
    assert len(rows) == 4 and len(pre) == 2 and len(sampled) == 2
    assert not any(r["preselected"] for r in sampled) and not any(r["sampled"] for r in pre)
    assert all(r["measured_s"] > 0 and len(r["runs_s"]) == 1 for r in rows)
    c = s["check"]
    best_pre = min(pre, key=lambda r: r["measured_s"])
    best_sample = min(sampled, key=lambda r: r["measured_s"])
    assert c["preselected_best"] == {"name": best_pre["name"], "measured_s": best_pre["measured_s"]}
    assert c["sample_best"] == {"name": best_sample["name"], "measured_s": best_sample["measured_s"]}
    gain = 100 * (best_pre["measured_s"] - best_sample["measured_s"]) / best_pre["measured_s"]
    assert c["sample_gain_pct"] == pytest.approx(gain)
    assert c["sample_beats_preselected"] == (gain > 0)
    assert c["verdict"].startswith("missed" if gain > HELD_MARGIN_PCT else "pre-selection held")
    assert c["runs_saved_pct"] == pytest.approx(100 * (1 - 2 / c["pool"])) and c["pool"] == 2 + s["skipped"] + 2
    assert s["measured"] == 4
    # the same seed draws the same variants (from the stored predictions); the table marks them
    code, out, _ = run_cli(capsys, *argv)
    marked = {line.split()[0] for line in out.splitlines() if line.endswith("  sampled")}
    assert code == 0 and marked == {r["name"] for r in sampled}
    assert "check of the pre-selection: 2 variants drawn at random (seed 5)" in out


def _result(check: dict | None) -> TuneResult:
    rows = [TuneRow("a", 1.0, 1.0, [1.0], preselected=True, deviation_pct=0.0, rank_predicted=1, rank_measured=2),
            TuneRow("lc=x,comm=y", 2.0, 0.5, [0.5], sampled=True, deviation_pct=300.0, rank_predicted=2,
                    rank_measured=1)]
    summary = TuneSummary(2, 0, -1.0, -1.0, 100.0, [0.0, 300.0], {}, skipped=8,
                          check=TuneCheck(**check) if check else None)
    return TuneResult("heat2d", "radauIIA7", "m", 100, 2, 1, 2, 1, 1, 0.1, ["-O3"], "top 1 by predicted time",
                      rows, summary)


def test_the_check_in_every_format():
    rows = [TuneRow("a", None, 1.0), TuneRow("lc=x,comm=y", None, 0.5, sampled=True)]
    res = _result(check_sample(rows, 10, "top 1 by predicted time", 4))
    table = render(res, "table")
    assert "missed: the best of 1 random variant (lc=x,comm=y) is 50.0 % faster" in table
    assert "saves 90.0 % of the runs of an exhaustive search of the 10 variants" in table
    assert [line.split()[0] for line in table.splitlines() if line.endswith("  sampled")] == ["lc=x,comm=y"]
    got = list(csv.DictReader(io.StringIO(render(res, "csv"))))
    assert [(r["name"], r["preselected"], r["sampled"]) for r in got] == [("a", "True", "False"),
                                                                          ("lc=x,comm=y", "False", "True")]
    c = json.loads(render(res, "json"))["summary"]["check"]
    assert c["sample_beats_preselected"] is True and c["sample_gain_pct"] == pytest.approx(50.0)
    assert c["preselected_best"] == {"name": "a", "measured_s": 1.0} and c["runs_saved_pct"] == pytest.approx(90.0)
    assert list(res.to_frame()["sampled"]) == [False, True]
    plain = _result(None)
    assert json.loads(render(plain, "json"))["summary"]["check"] is None
    assert "check of the pre-selection" not in render(plain, "table")


def test_a_gain_interval_decides_the_verdict():
    plain = check_sample(_rows([1.0], [0.97]), 20, "top 1", 0)
    assert "sample_gain_interval_pct" not in plain             # without one the check is as before
    near = check_sample(_rows([1.0], [0.97]), 20, "top 1", 0, gain_interval=[1.0, 8.0])
    assert near["sample_gain_pct"] == pytest.approx(3.0) and near["sample_gain_interval_pct"] == [1.0, 8.0]
    assert near["verdict"] == ("undecided: the best of 1 random variant (s0) is 3.0 % faster than the best of "
                               "the 1 pre-selected (top 1), but the gain's 95 % interval 1.0 .. 8.0 % straddles "
                               f"the {HELD_MARGIN_PCT:g} % margin")
    held = check_sample(_rows([1.0], [0.97]), 20, "top 1", 0, gain_interval=[-2.0, 5.0])
    assert held["verdict"].startswith("pre-selection held: the best of 1 random variant (s0) is 3.0 % faster")
    assert held["verdict"].endswith("; the gain's 95 % interval -2.0 .. 5.0 % is within the 5 % margin")
    missed = check_sample(_rows([1.0, 1.1], [0.8, 1.5]), 20, "top 2", 0, gain_interval=[12.5, 27.0])
    assert missed["verdict"] == ("missed: the best of 2 random variants (s0) is 20.0 % faster than the best of "
                                 "the 2 pre-selected (top 2); the gain's 95 % interval 12.5 .. 27.0 % is beyond "
                                 "the 5 % margin")
    # a point gain beyond the margin whose interval reaches into it is not a miss yet
    unsure = check_sample(_rows([1.0, 1.1], [0.8, 1.5]), 20, "top 2", 0, gain_interval=[4.0, 30.0])
    assert unsure["verdict"].startswith("undecided: the best of 2 random variants (s0) is 20.0 % faster")
    assert unsure["sample_beats_preselected"] is True and unsure["sample_gain_pct"] == pytest.approx(20.0)

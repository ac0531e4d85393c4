"""The reproducibility benchmark: the sections two machine files differ in, A with one of B's,
the ratios of two rankings, and a run that finds the section it was given."""
import json

import pytest

from autotune.storage.yamlfile import dump_text, round_trip_yaml
from benchmarks.calibrations import compare, differing_sections, main, run_shifts, with_section


def test_sections_are_found_and_swapped_one_at_a_time():
    a = {"clock": "2.4 GHz", "benchmarks": {"measurements": {"L1": {"x": 1}, "MEM": {"x": 2}}},
         "cluster": {"name": "a", "barrier": 1}, "provenance": {"made": "then"}}
    b = {"clock": "2.5 GHz", "benchmarks": {"measurements": {"L1": {"x": 1}, "MEM": {"x": 3}}},
         "cluster": {"name": "b", "barrier": 1}, "provenance": {"made": "now"}, "extra": 1}
    # the provenance prices nothing, the cluster's name is not a difference; the bandwidths also level by level
    assert differing_sections(a, b) == [("clock",), ("benchmarks",), ("benchmarks", "measurements", "MEM"), ("extra",)]
    mem = with_section(a, b, ("benchmarks", "measurements", "MEM"))
    assert mem["benchmarks"]["measurements"] == {"L1": {"x": 1}, "MEM": {"x": 3}} and mem["clock"] == "2.4 GHz"
    assert a["benchmarks"]["measurements"]["MEM"] == {"x": 2}          # A itself is left alone
    assert with_section(a, b, ("extra",))["extra"] == 1 and "extra" not in with_section(b, a, ("extra",))
    b["cluster"]["barrier"] = 2
    assert ("cluster",) in differing_sections(a, b)
    assert with_section(a, b, ("cluster",))["cluster"] == {"name": "a", "barrier": 2}


def test_the_ratios_over_the_variants_both_price():
    got = compare({"x": 1.0, "y": 2.0, "z": None, "w": 4.0}, {"x": 1.05, "y": 1.6, "z": 3.0})
    assert got["variants"] == 2 and got["median_ratio"] == pytest.approx(0.925)
    assert got["median_abs"] == pytest.approx(0.125) and got["max_abs"] == pytest.approx(0.2)
    assert got["within_every"] == 0.5 and got["lowest"] == ["y", 0.8] and got["highest"][0] == "x"
    assert compare({"x": 1.0}, {}) == {"variants": 0}


def test_a_run_names_the_section_that_moves_the_predictions(replay_store, tmp_path, capsys):
    from autotune.specs.machine import load_machine
    a = tmp_path / "a.yaml"
    a.write_text(open(load_machine("haswell-ep-e5-2630v3").path).read())
    rt = round_trip_yaml()
    data = rt.load(a.read_text())
    data["cluster"]["network"]["latency_s"] = 4e-6          # a slower network in B, nothing else
    b = tmp_path / "b.yaml"
    b.write_text(dump_text(rt, data))
    out = tmp_path / "out.json"
    assert main([str(a), str(b), "--n", "35808256", "--nodes", "8", "--store", str(replay_store),
                 "--json", str(out)]) == 0
    rows = json.loads(out.read_text())["rows"]
    assert list(rows) == ["B (the whole file)", "B's cluster"] and rows["B's cluster"] == rows["B (the whole file)"]
    assert rows["B's cluster"]["variants"] > 100 and rows["B's cluster"]["median_ratio"] > 1.0
    printed = capsys.readouterr().out
    assert "B's cluster" in printed and "targets: median |B / A - 1| <= 5 %" in printed
    # --whole: the whole files only, the same figures
    assert main([str(a), str(b), "--n", "35808256", "--nodes", "8", "--store", str(replay_store), "--whole",
                 "--json", str(out)]) == 0
    assert json.loads(out.read_text())["rows"] == {"B (the whole file)": rows["B (the whole file)"]}


def test_a_file_that_is_not_a_machine_is_refused(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("- a list\n")
    assert main([str(bad), str(bad)]) == 2
    assert capsys.readouterr().err.strip() == f"{bad}: expected a machine file (a YAML mapping)"
    assert main([str(tmp_path / "none.yaml"), str(bad)]) == 2
    assert capsys.readouterr().err.strip() == f"{tmp_path / 'none.yaml'}: expected a machine file (a YAML mapping)"


QUIET = [20.0, 20.4, 19.9, 20.2, 20.1]


def test_the_runs_tell_a_host_that_moved_from_a_busy_share_of_the_runs():
    a = {"MEM": {"triad": [[10.0, 10.1, 9.9, 10.2, 10.0], QUIET], "load": [[9.0] * 5, QUIET]}}
    moved = {"MEM": {"triad": [[x * 1.12 for x in r] for r in a["MEM"]["triad"]],
                     "load": [[x * 1.12 for x in r] for r in a["MEM"]["load"]]}}
    got = run_shifts(a, moved)
    assert [(r["level"], r["threads"], r["kernels"]) for r in got] == [("MEM", 1, 2), ("MEM", 2, 2)]
    for r in got:                       # every run 12 % faster: every statistic moved alike
        assert r["median"] == pytest.approx(1.12) and r["best run"] == pytest.approx(1.12)
    busy = {"MEM": {"triad": [a["MEM"]["triad"][0], [18.0, 20.4, 18.1, 20.2, 18.2]],
                    "load": [a["MEM"]["load"][0], [18.0, 20.4, 18.1, 20.2, 18.2]]}}
    two = run_shifts(a, busy)[1]        # three runs of five slowed: the median falls, the quartile holds
    assert two["median"] < 0.92 and two["upper quartile"] == pytest.approx(1.0) and two["best run"] == pytest.approx(1.0)
    # a point only one side measured, or without runs, is left out
    assert run_shifts({"MEM": {"copy": [None, QUIET]}}, {"MEM": {"copy": [QUIET]}}) == []


def test_the_runs_are_printed_and_a_json_without_them_is_refused(replay_store, tmp_path, capsys):
    from autotune.specs.machine import load_machine
    a = tmp_path / "a.yaml"
    a.write_text(open(load_machine("haswell-ep-e5-2630v3").path).read())
    runs_a, runs_b = tmp_path / "a.json", tmp_path / "b.json"
    runs_a.write_text(json.dumps({"bandwidth_samples": {"MEM": {"triad": [QUIET]}}}))
    runs_b.write_text(json.dumps({"bandwidth_samples": {"MEM": {"triad": [[x * 1.1 for x in QUIET]]}}}))
    out = tmp_path / "out.json"
    assert main([str(a), str(a), "--n", "35808256", "--nodes", "8", "--store", str(replay_store), "--whole",
                 "--runs", str(runs_a), str(runs_b), "--json", str(out)]) == 0
    shift = json.loads(out.read_text())["run_shifts"]
    assert len(shift) == 1 and shift[0]["upper quartile"] == pytest.approx(1.1)
    assert "MEM          1           1.100           1.100           1.100" in capsys.readouterr().out
    runs_b.write_text(json.dumps({"wide_spreads": []}))
    assert main([str(a), str(a), "--runs", str(runs_a), str(runs_b)]) == 2
    assert "b.json: expected the JSON of calibrate --node with its runs" in capsys.readouterr().err

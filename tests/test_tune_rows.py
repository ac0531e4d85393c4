"""A tune's rows are TuneRow from the selection to the summary; read back (a tune's JSON, the
store) a field a row does not have is an error, and the store's JSON is the one tune always wrote."""
import json
from dataclasses import asdict

import pytest

from autotune.errors import InputError
from autotune.pipeline.tunerecord import partial_of, partial_record, row_of_stored, stored_record
from autotune.results.tune import TuneRow

from .conftest import run_cli
from .test_tune_race import SCENARIO, _store_runs, _top4

RUN = dict(method="radauIIA7", model="ecm", n=100, nodes=1, threads=2, steps=5, warmup=2, h=0.05, flags=["-O3"],
           compiler="gcc 13", kerncraft="0.8", date="2025-01-01 12:00:00 UTC", placement=None)


def _measured() -> TuneRow:
    return TuneRow("v", 1.0, 2.0, [2.0, 2.1], preselected=True, phases={"RHS": {"predicted_s": 1.0, "measured_s": 2.0}},
                   runs_round=[0, 1], runs_state=[None, None], predicted_state_s=None, state_factor=None)


def test_an_unknown_field_is_an_error_not_dropped():
    row = _measured()
    assert TuneRow.of(asdict(row)) == row
    assert TuneRow.of({"name": "v"}) == TuneRow("v")                 # a field left out: its default
    with pytest.raises(InputError, match="tune row: field 'runs_median': not a field of a tune row"):
        TuneRow.of(dict(asdict(row), runs_median=2.0))
    with pytest.raises(InputError, match="field 'name': required"):
        TuneRow.of({"predicted_s": 1.0})
    from autotune.pipeline.learn import runs_of_tune            # a tune's JSON read back for a fit
    tuned = {"ivp": "heat2d", "method": "radauIIA7", "n": 100, "nodes": 1, "threads": 2,
             "variants": [asdict(row), dict(asdict(row), speedup=2.0)]}
    with pytest.raises(InputError, match="tune result, variant 1: field 'speedup'"):
        runs_of_tune(tuned)
    from autotune.results.frames import configuration       # what the document adds to each row
    documented = dict(tuned, variants=[dict(asdict(row), configuration=configuration(row.name))])
    assert [r.variant for r in runs_of_tune(documented)] == [row.name]


def test_the_stored_json_is_the_one_tune_always_wrote():
    row = _measured()
    rec = stored_record(row, RUN)
    assert list(rec) == ["name", "predicted_s", "measured_s", "runs_s", "error", "preselected", "sampled", "baseline",
                         "reused", "runs_round", "runs_state", "phases", "predicted_state_s", "deviation_state_pct",
                         "state", "state_factor", *RUN]
    assert json.loads(json.dumps(rec))["runs_s"] == [2.0, 2.1]
    back, run = row_of_stored(json.loads(json.dumps(rec)), "run")
    assert back == row and run == RUN
    # a failure carries no phases, state or empty lists; a race left and rounds set aside are kept
    failed = stored_record(TuneRow("w", 1.0, error="exit 9"), RUN)
    assert list(failed)[:9] == list(rec)[:9] and list(failed)[9:] == list(RUN)
    raced = stored_record(TuneRow("x", 1.0, 1.0, [1.0], runs_round=[0], runs_state=[None], noisy_runs_s=[3.0],
                                  race={"out": "slower"}), RUN)
    assert list(raced)[9:13] == ["runs_round", "runs_state", "noisy_runs_s", "race"]
    with pytest.raises(ValueError, match="'nodez'"):
        stored_record(row, dict(RUN, nodez=1))


def test_a_stored_run_with_an_unknown_field_is_an_error():
    rec = dict(stored_record(_measured(), RUN), online=True, chosen=False, out=None)    # an online trial's run
    assert row_of_stored(rec, "run")[1]["online"] is True
    with pytest.raises(InputError, match="the store's run of v: field 'speedup'"):
        row_of_stored(dict(rec, speedup=2.0), "the store's run of v")


def test_partial_records_keep_their_json():
    row = TuneRow("v", runs_s=[1.0, 1.1], runs_state=[None, {"bandwidth_Bps": 1e9, "clock_hz": 2e9}],
                  runs_steal_pct=[0.0, 0.4], runs_wall_over_cpu=[1.1, 1.2])
    rec = partial_record(row, {"RHS": [0.5, 0.6]})
    assert list(rec) == ["runs_s", "phase_runs", "runs_state", "runs_steal_pct", "runs_wall_over_cpu"]
    assert partial_of(rec, "p") == ([1.0, 1.1], {"RHS": [0.5, 0.6]}, row.runs_state, [0.0, 0.4], [1.1, 1.2])
    assert partial_of({"runs_s": [1.0], "phase_runs": {}}, "p") == ([1.0], {}, [None], [None], [None])   # older
    with pytest.raises(InputError, match="p: field 'rounds'"):
        partial_of(dict(rec, rounds=[0, 1]), "p")


def test_the_rows_are_tune_rows_from_selection_to_summary(own_replay_store, capsys, monkeypatch):
    import autotune.pipeline.tune as tune_mod
    names = _top4(own_replay_store)
    _store_runs(own_replay_store, dict(zip(names, (1.0, 1.3, 1.6, 1.005))), 4e9, 2.4e9)
    seen = {}
    summarize = tune_mod.summarize

    def spy(ranked, sel, *args, **kw):
        seen["rows"] = list(sel.rows.values())
        seen["result"] = summarize(ranked, sel, *args, **kw)
        return seen["result"]
    monkeypatch.setattr(tune_mod, "summarize", spy)
    code, out, err = run_cli(capsys, "tune", *SCENARIO, "--steps", "10", "--warmup", "2", "--reps", "3", "--replay",
                             "--format", "json", "--store", own_replay_store)
    assert code == 0, err
    assert seen["rows"] and all(type(r) is TuneRow for r in seen["rows"])
    assert all(a is b for a, b in zip(seen["result"].variants, seen["rows"]))      # no conversion on the way
    assert [v["name"] for v in json.loads(out)["variants"]] == [r.name for r in seen["rows"]]


def test_a_store_run_with_an_unknown_field_stops_the_tune(own_replay_store, capsys):
    import sqlite3
    names = _top4(own_replay_store)
    _store_runs(own_replay_store, dict(zip(names, (1.0, 1.3, 1.6, 1.005))), 4e9, 2.4e9)
    db = sqlite3.connect(own_replay_store)
    (key, result), = db.execute("SELECT key, result FROM runs WHERE variant = ?", (names[1],)).fetchall()
    db.execute("UPDATE runs SET result = ? WHERE key = ?", (json.dumps(dict(json.loads(result), speedup=2)), key))
    db.commit()
    db.close()
    code, _, err = run_cli(capsys, "tune", *SCENARIO, "--steps", "10", "--warmup", "2", "--reps", "3", "--replay",
                           "--store", own_replay_store)
    assert code == 2 and f"the store's run of {names[1]}: field 'speedup': not a field of a tune row" in err

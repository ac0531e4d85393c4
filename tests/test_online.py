"""The online solver (docs/online.md): one program that carries several variants, tries them
during its first steps and goes on with the fastest; its trial to the store."""
import json
from pathlib import Path

import numpy as np
import pytest

from autotune.codegen.online import MAX_CANDIDATES, meta_of, trial_steps
from autotune.codegen.solver import solver_source
from autotune.errors import InputError
from autotune.pipeline.online import online_solver, record_of, stored_rows
from autotune.pipeline.runners import run_key_of
from autotune.request.run import RunOptions
from autotune.specs.ivp import load_ivp
from autotune.specs.method import load_method
from autotune.specs.variants import parse_variant
from autotune.tools.build import build, run
from autotune.tools.launcher import parse_launcher

from .conftest import run_cli

FLAGS = RunOptions().plan(1.0).flags
METHOD = load_method("radauIIA7")
# three forms that share no code: the paper's (pack, sweeps one by one), the halo overlap on the
# neighbour exchange, and the pipelined step (ghost, one sweep a step, rings)
CANDIDATES = ["lc=ijl,comm=allgather", "lc=ijl,comm=neighbour,overlap=halo",
              "lc=jl-onepass,comm=neighbour,au=fused,pred=direct,buf=ghost,rhs=onepass,fuse=rhs-lc,block=l1,"
              "pipe=wavefront"]


def _online(ivp, names, n, **kw):
    variants = [parse_variant(x, ivp.comm) for x in names]
    src = online_solver(ivp, METHOD, variants, n, None, meta_of(ivp, METHOD, None, FLAGS, [1e-3] * len(names)), **kw)
    return src, build(src.source, FLAGS, parts=src.parts)


def _run(exe, ivp, n, steps, h, procs, threads, path, env=None, monkeypatch=None):
    for k, v in (env or {}).items():
        monkeypatch.setenv(k, v)
    res = run(exe, parse_launcher(None), procs, threads, n, ivp.size_value(n), steps, h, 0, path)
    for k in env or {}:
        monkeypatch.delenv(k)
    return res, np.fromfile(path)


@pytest.mark.parametrize("procs,threads", [(2, 1), (1, 2)])
def test_a_run_that_switched_computes_the_same_numbers(procs, threads, private_builds, tmp_path, monkeypatch):
    """The trial switches at every step; the run then goes on with one.  Against each candidate's
    own solver and the online solver running that candidate alone, to rounding."""
    ivp, n, steps, h = load_ivp("heat2d"), 4096, 12, 1e-6
    src, exe = _online(ivp, CANDIDATES, n)
    res, y = _run(exe, ivp, n, steps, h, procs, threads, tmp_path / "online.bin")
    on = res["online"]
    assert on["candidates"] == CANDIDATES and on["switches"] >= len(CANDIDATES) - 1
    assert sum(on["steps_by_candidate"]) == steps and all(k >= 1 for k in on["steps_by_candidate"])
    assert len(res["log"]) == 2 and res["log"][1].startswith("online: choice at step")
    scale = np.abs(y).max()
    for i, name in enumerate(CANDIDATES, 1):
        alone, ya = _run(exe, ivp, n, steps, h, procs, threads, tmp_path / f"only{i}.bin",
                         {"AUTOTUNE_ONLINE_ONLY": str(i)}, monkeypatch)
        assert alone["online"]["switches"] == 0 and alone["online"]["trials"] == []
        own = build(solver_source(ivp, METHOD, parse_variant(name, ivp.comm), n), FLAGS)
        _, yo = _run(own, ivp, n, steps, h, procs, threads, tmp_path / f"own{i}.bin")
        assert np.abs(ya - yo).max() <= 1e-13 * scale
        assert np.abs(y - yo).max() <= 1e-13 * scale, name


def test_the_trial_races_and_rechecks(private_builds, tmp_path, monkeypatch):
    """The paper's form is several times slower than the pipelined step at this size: it leaves
    at once and is never chosen.  A re-check every 20 steps runs a trial again (the buffers are
    kept), and the JSON goes to AUTOTUNE_ONLINE_JSON as well."""
    ivp, n, steps = load_ivp("heat2d"), 90_000, 60
    src, exe = _online(ivp, CANDIDATES, n, recheck=20)
    record = tmp_path / "run.json"
    res, _ = _run(exe, ivp, n, steps, 1e-7, 2, 1, tmp_path / "y.bin", {"AUTOTUNE_ONLINE_JSON": str(record)},
                  monkeypatch)
    on = res["online"]
    assert [t["step"] for t in on["trials"]] == [1, 20, 40] and on["recheck"] == 20
    first, later = on["trials"][0], on["trials"][1]
    assert all(1 <= t["rounds"] <= t["steps"] for t in on["trials"])
    assert all(t["steps"] <= max(trial_steps(20, 3), 6) for t in on["trials"])
    # each trial's steal share of the host's CPU time (where /proc/stat is there) and its wall over CPU time
    has_stat = Path("/proc/stat").exists()
    assert all((0.0 <= t["steal_pct"] <= 100.0) if has_stat else t["steal_pct"] is None for t in on["trials"])
    assert all(t["wall_over_cpu"] is None or 0.1 < t["wall_over_cpu"] < 20 for t in on["trials"])
    slow = first["candidates"][0]
    assert slow["out"] == "clearly slower" and slow["out_after"] == 1 and slow["ratio"] > 1.25
    assert all(t["choice"] != CANDIDATES[0] for t in on["trials"])
    assert json.loads(record.read_text())["online"] == on


def test_online_source_checks_its_input():
    ivp = load_ivp("heat2d")
    v = parse_variant(CANDIDATES[0], ivp.comm)
    meta = meta_of(ivp, METHOD, None, FLAGS, [])
    with pytest.raises(InputError, match="1 to 8"):
        online_solver(ivp, METHOD, [v] * 0, 1024, None, meta)
    with pytest.raises(InputError, match="named twice"):
        online_solver(ivp, METHOD, [v, v], 1024, None, meta)
    with pytest.raises(InputError) as e:
        online_solver(ivp, METHOD, [v], 1024, None, meta, recheck=-1)
    assert e.value.field == "recheck"
    src = online_solver(ivp, METHOD, [v], 1024, None, meta)
    assert src.parts == 2 and src.source.count("#elif AUTOTUNE_PART == ") == 1 and MAX_CANDIDATES == 8
    assert trial_steps(300, 5) == 15 and trial_steps(20, 3) == 6


def _record(**over) -> dict:
    """An online run's JSON as the solver writes it (two candidates, one trial, the second out)."""
    rec = {"variant": "online:2", "n": 1000, "ranks": 2, "threads": 1, "steps": 30, "warmup": 1,
           "median_step_s": 1e-3, "placement": {"nodes": ["a", "b"], "hosts": ["a", "b"]},
           "online": {"ivp": "heat2d", "method": "radauIIA7", "machine": "m1", "flags": ["-O3"],
                      "predicted_s": [1e-3, 2e-3], "candidates": ["lc=ijl,comm=allgather", "lc=jil,comm=allgather"],
                      "choice": "lc=ijl,comm=allgather", "recheck": 0, "switches": 3, "steps_by_candidate": [27, 3],
                      "trials": [{"step": 0, "steps": 5, "rounds": 2, "choice": "lc=ijl,comm=allgather",
                                  "why": "separated",
                                  "candidates": [{"variant": "lc=ijl,comm=allgather",
                                                  "steps_s": [1e-3, 1.2e-3], "out": None, "out_after": None,
                                                  "ratio": 1.0},
                                                 {"variant": "lc=jil,comm=allgather",
                                                  "steps_s": [3e-3], "out": "clearly slower", "out_after": 1,
                                                  "ratio": 3.0}]}]}}
    rec["online"].update(over)
    return rec


def test_the_trial_becomes_runs_of_each_candidate_marked_online():
    rows = stored_rows(_record(), 0.1, "today")
    assert [name for _, name, _ in rows] == ["lc=ijl,comm=allgather", "lc=jil,comm=allgather"]
    key, name, row = rows[0]
    assert key == run_key_of("m1", "heat2d", "radauIIA7", 1000, 2, 1, name, ["-O3"])   # where tune files its runs
    assert row["online"] and row["chosen"] and row["runs_s"] == [1e-3, 1.2e-3]
    assert row["measured_s"] == pytest.approx(1.1e-3) and (row["nodes"], row["threads"]) == (2, 1)
    assert rows[1][2]["out"] == "clearly slower" and not rows[1][2]["chosen"]
    untimed = _record()
    untimed["online"]["trials"][0]["candidates"][1]["steps_s"] = []
    assert len(stored_rows(untimed, None, "today")) == 1          # a candidate the trial never timed: no run


@pytest.mark.parametrize("text,needle", [
    ("not json", "expected the JSON line"), ("{oops", "not JSON"),
    (json.dumps({"n": 1}), "field 'ranks'"),
    (json.dumps(_record(machine=None)), "field 'online.machine'"),
    (json.dumps(_record(candidates=["x", "y"])), "field 'online.trials'")])
def test_a_bad_record_is_refused(text, needle):
    with pytest.raises(InputError) as e:
        record_of(text, "run.json")
    assert needle in e.value.args[0] and e.value.field == "ingest" and e.value.args[0].startswith("run.json:")


def test_ingest_stores_a_production_runs_trial(tmp_path, capsys):
    from autotune.storage.store import Store
    path, store = tmp_path / "run.json", tmp_path / "s.sqlite"
    path.write_text("solver output first\n" + json.dumps(_record()) + "\n")
    assert Store(store).measured_runs("m1") == []
    code, out, err = run_cli(capsys, "tune", "--ingest", path, "--store", store, "--format", "json")
    assert code == 0, err
    res = json.loads(out)
    assert res["source"] == str(path) and res["choice"] == "lc=ijl,comm=allgather"
    assert [c["stored"] for c in res["candidates"]] == [True, True]
    runs = Store(store).measured_runs("m1")
    assert [(ivp, v, r["online"]) for _, ivp, v, r in runs] == [("heat2d", "lc=ijl,comm=allgather", True),
                                                                  ("heat2d", "lc=jil,comm=allgather", True)]
    import autotune
    frame = autotune.ingest(path, store=tmp_path / "api.sqlite").to_frame()     # the API, into another store
    assert list(frame["name"]) == _record()["online"]["candidates"] and list(frame["chosen"]) == [True, False]
    assert set(frame["nodes"]) == {2} and frame["trial_s"][0] == pytest.approx(1.1e-3)
    code, out, err = run_cli(capsys, "tune", "--ingest", tmp_path / "missing.json", "--store", store)
    assert code == 2 and err.count("\n") == 1 and "--ingest" in err and "missing.json" in err


@pytest.mark.parametrize("argv,option", [
    (["generate", "--ivp", "heat2d", "--online", "9"], "--online"),
    (["generate", "--ivp", "heat2d", "--online", "3", "--within", "5"], "--online"),
    (["generate", "--ivp", "heat2d", "--within", "5"], "--within"),
    (["generate", "--ivp", "heat2d", "--nodes", "4"], "--nodes"),
    (["tune", "--ivp", "heat2d", "--recheck", "5"], "--recheck"),
    (["tune", "--ivp", "heat2d", "--online", "--replay"], "--replay"),
    (["tune", "--ivp", "heat2d", "--online", "--sample", "2"], "--sample"),
    (["tune", "--ivp", "heat2d", "--ingest", "x.json"], "--ingest")])
def test_online_options_are_checked(argv, option, capsys, tmp_path):
    code, _, err = run_cli(capsys, *argv, "--store", tmp_path / "s.sqlite")
    assert code == 2 and err.count("\n") == 1 and option in err, err


def test_generate_online_writes_the_solver_of_the_preselection(replay_store, tmp_path, capsys):
    code, out, err = run_cli(capsys, "generate", "--ivp", "heat2d", "--nodes", "2", "--threads", "1",
                             "--n", 1200 ** 2, "--online", "4", "--store", replay_store, "--out", tmp_path / "o")
    assert code == 0, err
    made = json.loads((tmp_path / "o" / "online.json").read_text())
    ranked = json.loads(run_cli(capsys, "rank", "--ivp", "heat2d", "--nodes", "2", "--threads", "1", "--n",
                                1200 ** 2, "--top", "4", "--format", "json", "--store", replay_store)[1])
    top = [v["name"] for v in ranked["variants"] if v["preselected"]]
    assert [c["name"] for c in made["candidates"]] == top and made["parts"] == 5 and len(made["build"]) == 6
    source = (tmp_path / "o" / "online.c").read_text()
    assert all(f"#{i} {name}" in source for i, name in enumerate(top, 1))
    assert "wrote" in out and "online.c" in out


def test_tune_online_runs_one_solver_and_stores_its_trial(own_replay_store, private_builds, capsys):
    from autotune.storage.store import Store
    before = Store(own_replay_store).measured_runs("haswell-ep-e5-2630v3")
    code, out, err = run_cli(capsys, "tune", "--ivp", "heat2d", "--nodes", "2", "--threads", "1",
                             "--n", 1200 ** 2, "--top", "3", "--steps", "20", "--online", "--format", "json",
                             "--store", own_replay_store)
    assert code == 0, err
    res = json.loads(out)
    assert len(res["candidates"]) == 3 and res["choice"] in [c["name"] for c in res["candidates"]]
    assert res["trial_steps"] <= trial_steps(20, 3) and res["build_s"] > 0 and len(res["log"]) == 2
    added = [r for _, _, _, r in Store(own_replay_store).measured_runs("haswell-ep-e5-2630v3")][len(before):]
    assert added and all(r["online"] and r["n"] == 1200 ** 2 and r["runs_s"] for r in added)
    assert {r["name"] for r in added} == {c["name"] for c in res["candidates"] if c["stored"]}
    assert "trial at step 1" in err and "choice at step" in err


def test_a_batch_job_runs_the_online_solver(tmp_path):
    from autotune.pipeline import submit
    from autotune.tools import slurm
    from .test_batch import ENTRY
    spec = submit.job_spec(tmp_path / "plan.json", 0, ENTRY, tmp_path / "s.sqlite",
                           submit.SubmitOptions(online=True, recheck=50), 64)
    assert slurm.batch_script(spec).splitlines()[-1].endswith("--format json --online --recheck 50")
    plain = submit.job_spec(tmp_path / "plan.json", 0, ENTRY, tmp_path / "s.sqlite", submit.SubmitOptions(), 64)
    assert "--online" not in slurm.batch_script(plain)

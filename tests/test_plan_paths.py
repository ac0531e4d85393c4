"""Where a plan finds its files: paths in a scenarios file are taken beside it, the plan records
them absolute, and the plan runs (and submits) from any working directory.  No solver is built:
these are the fast tests."""
import contextlib
import json
import os
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from autotune.progress import SILENT
from autotune.pipeline import plan as planning
from autotune.pipeline import submit
from autotune.specs.ivp import load_ivp
from autotune.specs.loading import absolute_path, beside
from autotune.specs.method import method_file
from autotune.storage.store import Store

from .conftest import run_cli
from .test_batch import FakeSlurm
from .test_plan_partitions import _cluster_file

SCENARIOS = """\
defaults: {machine: machines/big.yaml, method: methods/my7.yaml, n: 1440000, threads: 1, top: 1,
           partitions: {tiny: ./machines/small.yaml}}
scenarios:
  - {ivp: ivps/heat.yaml, nodes: 2}
  - {ivp: heat2d, nodes: 2, partition: small}
  - {ivp: ivps/heat.yaml, nodes: 2, partition: tiny}
"""


@pytest.fixture()
def conf(tmp_path):
    """A folder of one's own files beside the scenarios file: machines/big.yaml (4 nodes, whose
    cluster section maps partition small to small.yaml beside it), machines/small.yaml (2 nodes),
    ivps/heat.yaml (heat2d's file) and methods/my7.yaml (Radau IIA 7 under a name not shipped)."""
    conf = tmp_path / "conf"
    (conf / "machines").mkdir(parents=True)
    (conf / "ivps").mkdir()
    (conf / "methods").mkdir()
    _cluster_file(conf / "machines" / "small.yaml", 2)
    _cluster_file(conf / "machines" / "big.yaml", 4, "  partitions: {small: small.yaml}\n")
    shutil.copy(load_ivp("heat2d").path, conf / "ivps" / "heat.yaml")
    method = method_file("radauIIA7").read_text().replace("name: radauIIA7", "name: my7")
    assert "name: my7" in method
    (conf / "methods" / "my7.yaml").write_text(method)
    (conf / "s.yaml").write_text(SCENARIOS)
    for folder in ("elsewhere", "other", "out"):
        (tmp_path / folder).mkdir()
    return conf


def _fake_tune(calls: list):
    """tune() without building: records what it was asked to run."""
    def tune(ranked, variants, run_plan, store, progress, **kw):
        calls.append((ranked.scenario, [v.name for v in variants]))
        return SimpleNamespace(variants=[])
    return tune


def test_a_plan_made_elsewhere_records_absolute_paths_and_runs_from_anywhere(
        conf, tmp_path, capsys, monkeypatch, own_replay_store):
    monkeypatch.chdir(tmp_path / "elsewhere")          # neither the scenarios' folder nor the plan's
    plan_file = tmp_path / "out" / "p.json"
    code, out, err = run_cli(capsys, "plan", os.path.join("..", "conf", "s.yaml"), "--out", plan_file,
                             "--store", own_replay_store)
    assert code == 0, err
    plan = json.loads(plan_file.read_text())
    machines, ivp, shipped_ivp = conf / "machines", str(conf / "ivps" / "heat.yaml"), load_ivp("heat2d").path
    got = [(s["ivp_path"], s["machine_path"], s["method_path"], s["method"], s["partition"])
           for s in plan["scenarios"]]
    my7 = str(conf / "methods" / "my7.yaml")
    assert got == [(ivp, str(machines / "big.yaml"), my7, "my7", None),
                   (shipped_ivp, str(machines / "small.yaml"), my7, "my7", "small"),    # big.yaml's map
                   (ivp, str(machines / "small.yaml"), my7, "my7", "tiny")]            # the defaults' map
    assert all(os.path.isabs(p) and os.path.isfile(p) for row in got for p in row[:3])
    assert plan["source"] == str(conf / "s.yaml")

    monkeypatch.chdir(tmp_path / "other")              # as a batch job started from another folder
    calls = []
    monkeypatch.setattr(planning, "tune", _fake_tune(calls))
    with contextlib.closing(Store(own_replay_store)) as store:
        res = planning.run_plan(planning.read_plan(plan_file), store, SILENT)
    assert res.totals.scenario_errors == 0 and [r.error for r in res.scenarios] == [None] * 3
    assert [(sc.ivp.name, sc.machine.name, sc.method.name, sc.nodes) for sc, _ in calls] == [
        ("heat2d", "big", "my7", 2), ("heat2d", "small", "my7", 2), ("heat2d", "small", "my7", 2)]
    assert [names for _, names in calls] == [[v["name"] for v in s["variants"]] for s in plan["scenarios"]]


def test_a_plan_made_elsewhere_submits_from_anywhere(conf, tmp_path, capsys, monkeypatch, own_replay_store):
    monkeypatch.chdir(tmp_path / "elsewhere")
    plan_file = tmp_path / "out" / "p.json"
    assert run_cli(capsys, "plan", conf / "s.yaml", "--out", plan_file, "--store", own_replay_store)[0] == 0
    monkeypatch.chdir(tmp_path / "other")
    fake = FakeSlurm()
    fake.partitions = lambda: ({"all": 4, "small": 2, "tiny": 2}, "all")
    monkeypatch.setitem(submit.SCHEDULERS, "slurm", fake)
    code, out, err = run_cli(capsys, "tune", "--plan", os.path.join("..", "out", "p.json"), "--submit", "slurm",
                             "--store", tmp_path / "s.sqlite", "--format", "json")
    assert code == 0, err
    assert json.loads(out)["submitted"] == ["0 -> 101", "1 -> 102", "2 -> 103"]
    commands = [s.splitlines()[-1] for s in fake.scripts]
    assert all(f" --plan {plan_file} --scenario {i} " in c for i, c in enumerate(commands))


def test_a_relative_path_is_taken_beside_the_scenarios_file_not_in_the_working_directory(conf, tmp_path, capsys,
                                                                                           monkeypatch):
    monkeypatch.chdir(tmp_path / "elsewhere")
    (tmp_path / "elsewhere" / "machines").mkdir()
    shutil.copy(conf / "machines" / "small.yaml", tmp_path / "elsewhere" / "machines" / "only-here.yaml")
    (conf / "s.yaml").write_text("scenarios:\n  - {ivp: heat2d, machine: machines/only-here.yaml}\n")
    code, out, err = run_cli(capsys, "plan", conf / "s.yaml", "--out", tmp_path / "out" / "p.json")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert f"machine file {conf}/machines/only-here.yaml: no such file" in err
    # names stay names, an absolute path stays as it is
    (conf / "s.yaml").write_text("scenarios:\n"
                                 "  - {ivp: 'heat2d, ivps/heat.yaml', machine: zen4-epyc-vm-2core, method: radauIIA5}\n"
                                 f"  - {{ivp: {conf}/ivps/heat.yaml, machine: {conf}/machines/small.yaml}}\n")
    got = [(req.ivp, req.machine, req.method) for req, *_ in planning.read_scenarios(conf / "s.yaml")]
    assert got == [(f"heat2d,{conf}/ivps/heat.yaml", "zen4-epyc-vm-2core", "radauIIA5"),
                   (f"{conf}/ivps/heat.yaml", f"{conf}/machines/small.yaml", "radauIIA7")]


def test_absolute_paths_fold_dotdot_except_after_a_link(tmp_path, monkeypatch):
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "elsewhere" / "c").mkdir(parents=True)
    (tmp_path / "a" / "link").symlink_to(tmp_path / "elsewhere" / "c")
    monkeypatch.chdir(tmp_path / "a")
    assert absolute_path("b/../x.yaml") == tmp_path / "a" / "x.yaml"
    assert absolute_path("../a/./b/x.yaml") == tmp_path / "a" / "b" / "x.yaml"
    # link/.. is the link target's parent: kept, and the link not resolved
    assert str(absolute_path("link/../x.yaml")) == f"{tmp_path}/a/link/../x.yaml"
    assert str(absolute_path("link/../../x.yaml")) == f"{tmp_path}/a/link/../../x.yaml"
    assert absolute_path("/../x.yaml") == Path("/../x.yaml")
    assert beside("x.yaml", "b/..") == str(tmp_path / "a" / "x.yaml") and beside("heat2d", "b") == "heat2d"


def test_a_plan_of_an_older_version_with_relative_paths_still_runs_from_its_folder(
        conf, tmp_path, monkeypatch, own_replay_store):
    """Plans written before paths were absolute: relative to the working directory, as then;
    without method_path, the method is loaded by its name."""
    entry = {"id": "old", "ivp": "heat2d", "ivp_path": "ivps/heat.yaml", "method": "radauIIA7",
             "machine": "small", "machine_path": "machines/small.yaml", "n": 1440000, "nodes": 2, "threads": 1,
             "run": {"steps": 3, "warmup": 1, "reps": 1}, "variants": [{"name": "lc=jli,comm=allgather",
                                                                         "predicted_s": 1.0}]}
    (tmp_path / "out" / "p.json").write_text(json.dumps({"plan_version": 1, "scenarios": [entry]}))
    monkeypatch.chdir(conf)
    calls = []
    monkeypatch.setattr(planning, "tune", _fake_tune(calls))
    with contextlib.closing(Store(own_replay_store)) as store:
        res = planning.run_plan(planning.read_plan(tmp_path / "out" / "p.json"), store, SILENT)
    assert res.scenarios[0].error is None
    assert [(sc.machine.name, sc.method.name) for sc, _ in calls] == [("small", "radauIIA7")]

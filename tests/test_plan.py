"""Plans: scenarios.yaml -> plan.json -> tune --plan -> a resumed tune --plan runs nothing twice."""
import json

import pytest

from .conftest import ranked_size, run_cli


@pytest.fixture(autouse=True)
def _private_builds(private_builds):
    """Every test here builds and runs solvers."""


SCENARIOS = """\
defaults: {steps: 3, warmup: 1, reps: 1}
scenarios:
  - {ivp: heat2d, n: 1440000, nodes: 2, threads: 1, top: 2}
  - {ivp: heat2d, n: 1440000, nodes: 2, threads: 1, top: 1, launcher: "false {procs}", flags: "-O2 -fopenmp"}
"""


def test_plan_round_trip_resumes_without_running_twice(own_replay_store, tmp_path, capsys):
    (tmp_path / "s.yaml").write_text(SCENARIOS)
    plan_file = tmp_path / "out" / "plan.json"
    code, out, err = run_cli(capsys, "plan", tmp_path / "s.yaml", "--out", plan_file, "--store", own_replay_store)
    assert code == 0, err
    plan = json.loads(plan_file.read_text())
    assert [len(s["variants"]) for s in plan["scenarios"]] == [2, 1]
    first = plan["scenarios"][0]
    assert (first["n"], first["nodes"], first["threads"], first["run"]["steps"]) == (1440000, 2, 1, 3)
    # (a 2D grid's sweeps have no strips: they are not ranked)
    assert first["not_selected"] == ranked_size(excluded=("pipe=none+traversal=strips",)) - 2 and first[
        "not_selected_predicted_cost_s"] > 0
    assert first["variants"][0]["predicted_s"] <= first["variants"][1]["predicted_s"]

    code, out, err = run_cli(capsys, "tune", "--plan", plan_file, "--format", "json", "--store", own_replay_store)
    assert code == 0, err
    res = json.loads(out)
    ok, bad = res["scenarios"]
    assert all(v["measured_s"] > 0 and not v["reused"] for v in ok["variants"]) and ok["summary"]["measured"] == 2
    # the failing launcher costs its own variant only, and is reported
    assert bad["variants"][0]["measured_s"] is None and "false" in bad["variants"][0]["error"]
    assert res["totals"] == {"scenarios": 2, "ran": 2, "reused": 0, "failed": 1, "scenario_errors": 0, "pending": 0}
    runs_first = err.count("run 1/1")

    code, out, err = run_cli(capsys, "tune", "--plan", plan_file, "--format", "json", "--store", own_replay_store)
    res2 = json.loads(out)
    assert res2["totals"]["ran"] == 0 and res2["totals"]["reused"] == 2
    assert err.count("run 1/1") == runs_first - 2      # only the failed variant is tried again
    again = {v["name"]: v["measured_s"] for v in res2["scenarios"][0]["variants"]}
    assert again == {v["name"]: v["measured_s"] for v in ok["variants"]}


def test_plan_input_errors(tmp_path, capsys, replay_store):
    bad = tmp_path / "bad.yaml"
    bad.write_text("scenarios:\n  - {ivp: heat2d, nodes: 2, top: 0}\n")
    code, _, err = run_cli(capsys, "plan", bad, "--out", tmp_path / "p.json")
    assert code == 2 and "bad.yaml" in err and "scenarios[0].top" in err and "Traceback" not in err
    bad.write_text("scenarios:\n  - {ivp: heat2d, nodes: 'x'}\n")
    code, _, err = run_cli(capsys, "plan", bad, "--out", tmp_path / "p.json")
    assert code == 2 and "nodes" in err
    (tmp_path / "p.json").write_text("{}")
    code, _, err = run_cli(capsys, "tune", "--plan", tmp_path / "p.json")
    assert code == 2 and "plan_version" in err
    code, _, err = run_cli(capsys, "tune")
    assert code == 2 and "--plan" in err
    # a racing design in a plan: reps auto with a budget; a budget without it, or a bad one, refused
    bad.write_text("scenarios:\n  - {ivp: heat2d, nodes: 2, reps: 3, budget: 40}\n")
    code, _, err = run_cli(capsys, "plan", bad, "--out", tmp_path / "p.json")
    assert code == 2 and "bad.yaml" in err and "budget" in err and "--reps auto" in err
    bad.write_text("scenarios:\n  - {ivp: heat2d, nodes: 2, reps: often}\n")
    code, _, err = run_cli(capsys, "plan", bad, "--out", tmp_path / "p.json")
    assert code == 2 and "reps" in err and "'auto'" in err
    good = tmp_path / "race.yaml"
    good.write_text("scenarios:\n  - {ivp: heat2d, n: 1440000, nodes: 2, threads: 1, top: 2, reps: auto, budget: 90s}\n")
    code, out, err = run_cli(capsys, "plan", good, "--out", tmp_path / "race.json", "--store", replay_store)
    assert code == 0, err
    run = json.loads((tmp_path / "race.json").read_text())["scenarios"][0]["run"]
    assert run["reps"] == "auto" and run["budget"] == "90s"


def _plan_with_launcher(tmp_path, capsys, store, mpiexec, instead: str, at: int, top: int, reps: int):
    """A one-scenario plan whose launcher counts its calls and, at call number `at`, runs `instead`
    (then exits 9) where it would run the solver; returns (the file counting calls, the plan)."""
    calls, launcher, plan = tmp_path / "calls", tmp_path / "launcher.sh", tmp_path / "plan.json"
    launcher.write_text(f'n=$(cat {calls} 2>/dev/null || echo 0); echo $((n + 1)) > {calls}\n'
                        f'[ "$n" = {at - 1} ] && {instead}; [ "$n" = {at - 1} ] && exit 9\nexec {mpiexec} -n "$@"\n')
    (tmp_path / "s.yaml").write_text("scenarios:\n  - {ivp: heat2d, n: 1440000, nodes: 2, threads: 1, "
                                     f"top: {top}, steps: 3, warmup: 1, reps: {reps}, "
                                     f"launcher: \"bash {launcher} {{procs}}\"}}\n")
    assert run_cli(capsys, "plan", tmp_path / "s.yaml", "--out", plan, "--store", store)[0] == 0
    return calls, plan


def test_an_interrupted_measurement_resumes_its_missing_repetitions(own_replay_store, tmp_path, capsys, mpiexec):
    """A run killed at its third repetition (a cancelled batch job) keeps the two before it; the
    resumed plan runs the third alone and reports all three."""
    calls, plan = _plan_with_launcher(tmp_path, capsys, own_replay_store, mpiexec, "exit 9", 3, top=1, reps=3)
    code, out, err = run_cli(capsys, "tune", "--plan", plan, "--format", "json", "--store", own_replay_store)
    first = json.loads(out)["scenarios"][0]["variants"][0]
    assert first["measured_s"] is None and "exit 9" in first["error"] and len(first["runs_s"]) == 2
    code, out, err = run_cli(capsys, "tune", "--plan", plan, "--format", "json", "--store", own_replay_store)
    again = json.loads(out)["scenarios"][0]["variants"][0]
    assert "2 of 3 repetitions measured before" in err
    assert "run 1/3" not in err and "run 2/3" not in err and err.count("run 3/3") == 1
    assert again["runs_s"][:2] == first["runs_s"] and len(again["runs_s"]) == 3
    assert again["measured_s"] == sorted(again["runs_s"])[1]
    assert calls.read_text().strip() == "4"           # 2 + the failed one + the one missing


def test_a_killed_run_keeps_each_finished_variant_and_repetition(own_replay_store, tmp_path, capsys, mpiexec):
    """The process killed (as a batch job's is) at the second variant's last repetition: the
    first variant's finished measurement and the second's first repetition are in the store, and
    the resumed plan runs that one repetition alone."""
    import subprocess
    import sys
    from pathlib import Path
    calls, plan = _plan_with_launcher(tmp_path, capsys, own_replay_store, mpiexec, "kill -9 $PPID", 4, top=2,
                                      reps=2)
    proc = subprocess.run([sys.executable, "-m", "autotune", "tune", "--plan", str(plan), "--store",
                           str(own_replay_store)], capture_output=True, text=True, cwd=Path(__file__).parents[1])
    assert proc.returncode == -9, proc.stderr
    code, out, err = run_cli(capsys, "tune", "--plan", plan, "--format", "json", "--store", own_replay_store)
    first, second = json.loads(out)["scenarios"][0]["variants"]
    assert first["reused"] and len(first["runs_s"]) == 2 and first["measured_s"] > 0
    assert "1 of 2 repetitions measured before" in err and err.count("run 2/2") == 1 and "run 1/2" not in err
    assert len(second["runs_s"]) == 2 and second["measured_s"] > 0
    assert calls.read_text().strip() == "5"           # 3 runs, the killed one, the one missing

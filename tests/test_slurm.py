"""The cluster path against a real Slurm (one node on localhost, tests/slurm/up): srun with the MPI's
PMI plug-in, world-size checks, calibrate through srun, and plans through sbatch: submit, status,
collect, a job cancelled mid-run resumed alone, eight jobs writing to one store.

    eval "$(bash tests/slurm/up)" && python3 -m pytest -m slurm; bash tests/slurm/down
"""
import json
import os
import shutil
import subprocess
import sys
import time

import pytest

from .conftest import run_cli


def _slurm_answers() -> bool:
    """A Slurm this shell can reach: SLURM_CONF names a file and sinfo answers."""
    conf = os.environ.get("SLURM_CONF")
    if not conf or not os.path.exists(conf) or not shutil.which("sinfo"):
        return False
    try:
        return subprocess.run(["sinfo", "-h"], capture_output=True, timeout=20).returncode == 0
    except subprocess.TimeoutExpired:
        return False


# CI sets AUTOTUNE_REQUIRE_SLURM=1 after bringing Slurm up: there a missing Slurm fails the tests
pytestmark = [pytest.mark.slurm, pytest.mark.skipif(
    os.environ.get("AUTOTUNE_REQUIRE_SLURM") != "1" and not _slurm_answers(),
    reason="no Slurm: eval \"$(bash tests/slurm/up)\" starts one on localhost")]

MACHINE = "zen4-epyc-vm-2core"          # a one-node machine: every rank of a job on the Slurm node
# the solvers run here: built for this host's CPU, not the test machine's (its file asks for AVX-512,
# which a job on a CPU without it dies of: SIGILL); the analyses stay the machine file's
HOST_FLAGS = "-O3 -march=native -fopenmp"
ONE_WORLD = "from mpi4py import MPI; c = MPI.COMM_WORLD; print(c.rank, c.size)"


@pytest.fixture(autouse=True)
def _builds(private_builds):
    """Solvers are built into the session's scratch directory (shared by the jobs)."""


def _srun(*args):
    return subprocess.run(["srun", *args, sys.executable, "-c", ONE_WORLD], capture_output=True, text=True,
                          timeout=120)


def test_srun_needs_the_pmi_plugin_for_one_world():
    joined = _srun("--mpi=pmi2", "-n", "2")
    assert joined.returncode == 0, joined.stderr
    assert sorted(joined.stdout.split("\n")[:2]) == ["0 2", "1 2"]
    apart = _srun("-n", "2")                # MpiDefault=none: two 1-rank worlds, the silent failure
    assert apart.stdout.split("\n")[:2] == ["0 1", "0 1"]


def test_calibrate_through_srun_and_a_split_world_refused(tmp_path, capsys):
    machine = tmp_path / "m.yaml"
    shutil.copy(_machine_path(), machine)
    common = ["calibrate", "--machine", machine, "--procs", "2", "--threads", "1", "--ops", "allgather",
              "--max-bytes", "4096", "--max-seconds", "0.05", "--timeout", "120", "--format", "json"]
    code, out, err = run_cli(capsys, *common, "--launcher", "srun", "--store", tmp_path / "a.sqlite",
                             "--out", tmp_path / "fit.yaml")
    assert code == 0, err
    fit = json.loads(out)
    assert fit["procs"] == [2] and fit["runs"] == 2 and "allgather" in fit["operations"]
    code, out, err = run_cli(capsys, *common, "--launcher", "srun -n {procs}", "--store", tmp_path / "b.sqlite",
                             "--out", tmp_path / "fit2.yaml")
    assert code == 1 and "2 separate MPI worlds of 1 rank(s), not one of 2" in err and "--mpi=pmi2" in err
    assert not (tmp_path / "fit2.yaml").exists()


def test_tune_refuses_a_split_world(own_replay_store, capsys):
    code, out, err = run_cli(capsys, "tune", "--ivp", "heat2d", "--machine", MACHINE, "--n", "1440000",
                             "--nodes", "2", "--threads", "1", "--top", "1", "--steps", "2", "--warmup", "1",
                             "--reps", "1", "--launcher", "srun -n {procs}", "--format", "json",
                             "--flags", HOST_FLAGS, "--store", own_replay_store)
    row = json.loads(out)["variants"][0]
    assert row["measured_s"] is None and "separate MPI worlds of 1 rank(s), not one of 2" in row["error"]


def _machine_path():
    from autotune.specs.machine import load_machine
    return load_machine(MACHINE).path


def _plan(tmp_path, capsys, store, scenarios: str):
    (tmp_path / "s.yaml").write_text(scenarios)
    plan = tmp_path / "plan.json"
    code, _, err = run_cli(capsys, "plan", tmp_path / "s.yaml", "--out", plan, "--store", store)
    assert code == 0, err
    return plan


def _status(capsys, plan) -> dict:
    code, out, err = run_cli(capsys, "tune", "--plan", plan, "--status", "--format", "json")
    assert code == 0, err
    return json.loads(out)


def _wait(capsys, plan, done, timeout=240) -> dict:
    """Poll --status until `done(status)` holds."""
    end = time.time() + timeout
    while True:
        st = _status(capsys, plan)
        if done(st) or time.time() > end:
            return st
        time.sleep(1)


def _runs(store) -> list[tuple]:
    """The finished measurements (not the repetitions kept of unfinished ones)."""
    import sqlite3
    db = sqlite3.connect(store)
    rows = db.execute("SELECT key, variant, measured_s FROM runs WHERE key NOT LIKE '%/partial/%' "
                      "ORDER BY rowid").fetchall()
    db.close()
    return rows


PLAN3 = f"""\
defaults: {{machine: {MACHINE}, n: 1440000, warmup: 1, reps: 1, flags: "{HOST_FLAGS}"}}
scenarios:
  - {{ivp: heat2d, nodes: 2, threads: 1, top: 2, steps: 3}}
  - {{ivp: heat2d, nodes: 1, threads: 2, top: 1, steps: 3}}
  - {{ivp: heat2d, nodes: 2, threads: 1, top: 1, steps: 400, flags: "-O2 -fopenmp"}}
"""


def test_plan_through_sbatch_status_cancel_and_resume(own_replay_store, tmp_path, capsys):
    plan = _plan(tmp_path, capsys, own_replay_store, PLAN3)
    code, out, err = run_cli(capsys, "tune", "--plan", plan, "--submit", "slurm", "--store", own_replay_store,
                             "--time", "00:10:00", "--format", "json")
    assert code == 0, err
    sub = json.loads(out)
    first_jobs = [s["job"] for s in sub["scenarios"]]
    assert len(set(first_jobs)) == 3 and all(j.isdigit() for j in first_jobs) and len(sub["submitted"]) == 3
    script = (tmp_path / "plan.jobs" / "scenario-0.sh").read_text()
    for line in ("#SBATCH --nodes=1", "#SBATCH --ntasks=2", "#SBATCH --cpus-per-task=1", "#SBATCH --time=00:10:00",
                 "--scenario 0", "--launcher srun"):
        assert line in script
    state = json.loads((tmp_path / "plan.state.json").read_text())
    assert [state["scenarios"][str(i)]["jobs"][0]["job_id"] for i in range(3)] == first_jobs

    # the long scenario: cancel it while it runs; the other two finish
    st = _wait(capsys, plan, lambda s: s["scenarios"][2]["status"] == "running")
    assert st["scenarios"][2]["status"] == "running"
    subprocess.run(["scancel", first_jobs[2]], check=True)
    st = _wait(capsys, plan, lambda s: [x["status"] for x in s["scenarios"]] == ["done", "done", "cancelled"])
    assert [x["status"] for x in st["scenarios"]] == ["done", "done", "cancelled"], st
    assert [x["measured"] for x in st["scenarios"]] == [2, 1, 0]
    assert len(_runs(own_replay_store)) == 3

    # collect: the two finished ones from the store, the cancelled one submitted again (alone)
    code, out, err = run_cli(capsys, "tune", "--plan", plan, "--format", "json")
    res = json.loads(out)
    assert res["totals"]["ran"] == 0 and res["totals"]["reused"] == 3 and res["totals"]["pending"] == 1
    assert "scenario 2 " in err and f"(was cancelled, job {first_jobs[2]})" in err
    assert "scenario 0 " not in err and "scenario 1 " not in err
    st = _wait(capsys, plan, lambda s: s["counts"] == {"done": 3}, timeout=300)
    assert st["counts"] == {"done": 3}, st
    assert [len(x["jobs"]) for x in st["scenarios"]] == [1, 1, 2]
    code, out, err = run_cli(capsys, "tune", "--plan", plan, "--format", "json")
    res = json.loads(out)
    assert code == 0 and res["totals"] == {"scenarios": 3, "ran": 0, "reused": 4, "failed": 0,
                                            "scenario_errors": 0, "pending": 0}
    runs = _runs(own_replay_store)
    assert len(runs) == 4 and len({r[0] for r in runs}) == 4 and all(r[2] > 0 for r in runs)
    assert all(v["measured_s"] > 0 for s in res["scenarios"] for v in s["variants"])


def test_eight_jobs_write_one_store(own_replay_store, tmp_path, capsys, monkeypatch):
    """Eight jobs at once on the two cores (oversubscribed), the store in rollback-journal mode as
    on a network file system: every run arrives, once."""
    monkeypatch.setenv("AUTOTUNE_STORE_MODE", "journal")
    flags = ["-O1", "-O2", "-O3", "-O2 -funroll-loops"]
    entries = "".join(f"  - {{ivp: heat2d, nodes: {p}, threads: 1, top: 1, flags: \"{f} -fopenmp\"}}\n"
                      for f in flags for p in (1, 2))
    plan = _plan(tmp_path, capsys, own_replay_store,
                 f"defaults: {{machine: {MACHINE}, n: 1440000, steps: 3, warmup: 1, reps: 1}}\n"
                 f"scenarios:\n{entries}")
    code, out, err = run_cli(capsys, "tune", "--plan", plan, "--submit", "slurm", "--store", own_replay_store,
                             "--sbatch-args=--oversubscribe", "--format", "json")
    assert code == 0, err
    assert len(json.loads(out)["submitted"]) == 8
    st = _wait(capsys, plan, lambda s: s["counts"].get("done") == 8, timeout=400)
    assert st["counts"] == {"done": 8}, st
    assert st["store_mode"] == "journal (AUTOTUNE_STORE_MODE=journal)"
    runs = _runs(own_replay_store)
    assert len(runs) == 8 and len({r[0] for r in runs}) == 8 and all(r[2] > 0 for r in runs)


def test_plan_through_sbatch_online(own_replay_store, tmp_path, capsys):
    """tune --plan --submit slurm --online: the scenario's job runs one online solver of its
    variants through srun and stores its trial, marked online; collecting reads it back."""
    plan = _plan(tmp_path, capsys, own_replay_store,
                 f"defaults: {{machine: {MACHINE}, n: 1440000, warmup: 1, reps: 1, flags: \"{HOST_FLAGS}\"}}\n"
                 f"scenarios:\n  - {{ivp: heat2d, nodes: 2, threads: 1, top: 3, steps: 20}}\n")
    code, out, err = run_cli(capsys, "tune", "--plan", plan, "--submit", "slurm", "--online", "--store",
                             own_replay_store, "--time", "00:10:00", "--format", "json")
    assert code == 0, err
    assert (tmp_path / "plan.jobs" / "scenario-0.sh").read_text().splitlines()[-1].endswith("--format json --online")
    st = _wait(capsys, plan, lambda s: s["counts"] == {"done": 1}, timeout=300)
    assert st["counts"] == {"done": 1} and st["scenarios"][0]["measured"] == 3, st
    import sqlite3
    db = sqlite3.connect(own_replay_store)
    rows = [json.loads(r) for (r,) in db.execute("SELECT result FROM runs WHERE key NOT LIKE '%/partial/%'")]
    db.close()
    assert len(rows) == 3 and all(r["online"] and r["runs_s"] and r["nodes"] == 2 for r in rows)
    assert sum(r["chosen"] for r in rows) == 1
    code, out, err = run_cli(capsys, "tune", "--plan", plan, "--format", "json")
    assert code == 0 and json.loads(out)["totals"]["reused"] == 3, err

"""The cluster path on several (virtual) Slurm nodes, tests/slurm/up --nodes 4: ranks on distinct
nodes, placement checked and stored, a plan on 1, 2 and 4 nodes, a plan too big for the partition,
and (with --partitions) a plan whose scenarios go to partitions of their own.

    eval "$(bash tests/slurm/up --nodes 4 --cpus-per-node 2 --partitions)" && python3 -m pytest -m slurm
"""
import json
import re
import subprocess
import sys
import time

import pytest

from .conftest import run_cli
from .test_slurm import HOST_FLAGS, _machine_path, _plan, _runs, _slurm_answers, _wait


def _nodes() -> list[str]:
    if not _slurm_answers():
        return []
    out = subprocess.run(["sinfo", "-h", "-N", "-o", "%N"], capture_output=True, text=True, timeout=20).stdout
    return sorted(set(out.split()))


NODES = _nodes()
pytestmark = [pytest.mark.slurm, pytest.mark.skipif(
    len(NODES) < 4, reason="needs 4 Slurm nodes: eval \"$(bash tests/slurm/up --nodes 4 --cpus-per-node 2)\"")]


@pytest.fixture(autouse=True)
def _builds(private_builds):
    """Solvers are built into the session's scratch directory (shared by the jobs)."""


def _cluster_of(nodes: int, path):
    """The test machine as a cluster of `nodes` nodes (one rank per node), written to path (its
    cluster section's node count edited as text: the file's node part stays as it is)."""
    text = open(_machine_path()).read()
    head, sep, cluster = text.partition("\ncluster:\n")
    assert sep and re.search(r"(?m)^  nodes: \d+$", cluster)
    path.write_text(head + sep + re.sub(r"(?m)^  nodes: \d+$", f"  nodes: {nodes}", cluster, count=1))
    return path


@pytest.fixture()
def cluster_machine(tmp_path):
    return _cluster_of(len(NODES), tmp_path / "vcluster.yaml")


def _placements(store) -> list[dict]:
    import sqlite3
    db = sqlite3.connect(store)
    rows = db.execute("SELECT result FROM runs WHERE key NOT LIKE '%/partial/%' ORDER BY rowid").fetchall()
    db.close()
    return [json.loads(r[0]).get("placement") for r in rows]


def test_srun_places_one_rank_on_each_virtual_node():
    proc = subprocess.run(["srun", "--mpi=pmi2", "-N", "4", "-n", "4", sys.executable, "-c",
                           "import os; from mpi4py import MPI; print(MPI.COMM_WORLD.rank, os.environ['SLURMD_NODENAME'])"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    by_rank = dict(line.split() for line in proc.stdout.splitlines())
    assert sorted(by_rank.values()) == NODES[:4] and len(by_rank) == 4


def test_tune_over_two_nodes_stores_where_it_ran(own_replay_store, cluster_machine, capsys):
    code, out, err = run_cli(capsys, "tune", "--ivp", "heat2d", "--machine", cluster_machine, "--n", "1440000",
                             "--nodes", "2", "--threads", "1", "--top", "1", "--steps", "2", "--warmup", "1",
                             "--reps", "1", "--launcher", "srun", "--format", "json", "--flags", HOST_FLAGS,
                             "--store", own_replay_store)
    assert code == 0, err
    assert json.loads(out)["variants"][0]["measured_s"] > 0
    (where,) = _placements(own_replay_store)
    assert len(where["nodes"]) == 2 and set(where["nodes"]) <= set(NODES)
    assert where["virtual"] is True and where["packed"] is False
    assert where["ranks_per_node"] == {n: 1 for n in where["nodes"]}


def _measurement_placements(store) -> dict[int, dict]:
    import sqlite3
    db = sqlite3.connect(store)
    rows = [json.loads(r) for (r,) in db.execute("SELECT record FROM measurements WHERE operation != 'barrier'")]
    db.close()
    return {r["params"]["p"]: r["placement"] for r in rows}


def test_calibrate_through_srun_on_two_and_four_nodes_records_each_ranks_node(cluster_machine, tmp_path, capsys):
    store = tmp_path / "c.sqlite"
    code, out, err = run_cli(capsys, "calibrate", "--machine", cluster_machine, "--procs", "2,4", "--threads", "1",
                             "--ops", "allgather", "--max-bytes", "4096", "--max-seconds", "0.05", "--timeout",
                             "120", "--launcher", "srun", "--store", store, "--out", tmp_path / "fit.yaml",
                             "--format", "json")
    assert code == 0, err
    where = _measurement_placements(store)
    for p in (2, 4):        # one rank on each of p distinct virtual nodes, marked virtual
        assert len(where[p]["nodes"]) == p and set(where[p]["nodes"]) <= set(NODES)
        assert where[p]["ranks_per_node"] == {n: 1 for n in where[p]["nodes"]}
        assert where[p]["virtual"] is True and where[p]["packed"] is False
    assert f"ranks on {', '.join(NODES[:4])} (virtual nodes: one host)" in err
    fit = json.loads(out)
    assert fit["measured_on"] == {"nodes": NODES[:4], "virtual": True, "packed": False}
    import yaml
    net = yaml.safe_load((tmp_path / "fit.yaml").read_text())["cluster"]["network"]
    assert net["provenance"].endswith("on virtual nodes of one host: not a measurement across a network")
    assert net["measured_on"]["virtual"] is True
    # a launcher told {nodes} that packs the ranks onto one node measures nothing
    code, out, err = run_cli(capsys, "calibrate", "--machine", cluster_machine, "--procs", "2", "--threads", "1",
                             "--ops", "allgather", "--max-bytes", "64", "--max-seconds", "0.05", "--timeout", "120",
                             "--launcher", "srun --mpi={pmi} -N 1 -n {procs} --overcommit --comment=asked-{nodes}",
                             "--store", tmp_path / "d.sqlite", "--out", tmp_path / "fit2.yaml")
    assert code == 1 and "asked for 2 nodes and ran on 1" in err and not (tmp_path / "fit2.yaml").exists()
    assert _measurement_placements(tmp_path / "d.sqlite") == {}


@pytest.mark.kerncraft
def test_jobs_mpi_analyses_on_the_ranks_of_other_nodes(replay_template, tmp_path):
    from .test_mpi_pool import SCENARIO, _ecm_rows, _store_lacking
    store = _store_lacking(replay_template, tmp_path / "mpi.sqlite", ("update",))
    proc = subprocess.run(["srun", "--mpi=pmi2", "-N", "3", "-n", "3", sys.executable, "-m", "mpi4py.futures",
                           "-m", "autotune", *SCENARIO, "--store", str(store), "--jobs", "mpi"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["ecm"]["analyses_run"] >= 1
    # rank 0 (autotune) runs on the first node; every analysis ran on a worker rank's own node
    done = re.findall(r"kerncraft \[\d+/\d+\] (\S+) on (\S+) done", proc.stderr)
    assert done and {node for _, node in done} <= set(NODES[1:3]), proc.stderr
    assert "update" in {part for part, *_ in _ecm_rows(store).values()}


def test_a_run_on_fewer_nodes_than_asked_is_no_result(own_replay_store, cluster_machine, capsys):
    # told {nodes} (so it claims to place them) but packs both ranks on one node
    code, out, err = run_cli(capsys, "tune", "--ivp", "heat2d", "--machine", cluster_machine, "--n", "1440000",
                             "--nodes", "2", "--threads", "1", "--top", "1", "--steps", "2", "--warmup", "1",
                             "--reps", "1", "--launcher", "srun --mpi={pmi} -N 1 -n {procs} --overcommit "
                             "--comment=asked-{nodes}", "--format", "json", "--flags", HOST_FLAGS,
                             "--store", own_replay_store)
    row = json.loads(out)["variants"][0]
    assert row["measured_s"] is None and "asked for 2 nodes and ran on 1" in row["error"]
    assert _runs(own_replay_store)[0][2] is None       # stored as a failure, not as a 2-node time


def test_plan_on_one_two_and_four_nodes(own_replay_store, cluster_machine, tmp_path, capsys):
    plan = _plan(tmp_path, capsys, own_replay_store,
                 f"defaults: {{machine: {cluster_machine}, flags: \"{HOST_FLAGS}\", "
                 f"n: 1440000, steps: 2, warmup: 1, reps: 1, top: 1, "
                 f"threads: 1}}\nscenarios:\n  - {{ivp: heat2d, nodes: 1}}\n  - {{ivp: heat2d, nodes: 2}}\n"
                 f"  - {{ivp: heat2d, nodes: 4}}\n")
    code, out, err = run_cli(capsys, "tune", "--plan", plan, "--submit", "slurm", "--store", own_replay_store,
                             "--format", "json")
    assert code == 0, err
    scripts = [(tmp_path / "plan.jobs" / f"scenario-{i}.sh").read_text() for i in range(3)]
    assert [f"#SBATCH --nodes={k}" in s for k, s in zip((1, 2, 4), scripts)] == [True] * 3
    st = _wait(capsys, plan, lambda s: s["counts"] == {"done": 3}, timeout=420)
    assert st["counts"] == {"done": 3}, st
    code, out, err = run_cli(capsys, "tune", "--plan", plan, "--format", "json")
    assert code == 0 and json.loads(out)["totals"]["reused"] == 3
    assert sorted(len(p["nodes"]) for p in _placements(own_replay_store)) == [1, 2, 4]


def _job_field(job: str, field: str) -> str:
    out = subprocess.run(["scontrol", "show", "job", job], capture_output=True, text=True, timeout=20).stdout
    found = re.search(rf"\b{field}=(\S+)", out)
    return found.group(1) if found else ""


def _scontrol(*args: str) -> None:
    proc = subprocess.run(["scontrol", *args], capture_output=True, text=True, timeout=20)
    assert proc.returncode == 0, proc.stderr


@pytest.fixture()
def nodes_restored():
    """Every node back in service after the test, whatever it did to them."""
    yield
    for node in NODES:
        subprocess.run(["scontrol", "update", f"nodename={node}", "state=resume"], capture_output=True, timeout=20)
    _until(lambda: set(subprocess.run(["sinfo", "-h", "-N", "-o", "%T"], capture_output=True, text=True,
                                      timeout=20).stdout.split()) == {"idle"}, 60)


def _submitted(capsys, plan, store) -> str:
    """Submit the plan; the job id of its first scenario."""
    code, out, err = run_cli(capsys, "tune", "--plan", plan, "--submit", "slurm", "--store", store)
    assert code == 0, err
    return json.loads((plan.with_name("plan.state.json")).read_text())["scenarios"]["0"]["jobs"][-1]["job_id"]


def _until(what, timeout: float, poll: float = 0.3) -> bool:
    end = time.time() + timeout
    while not what():
        if time.time() > end:
            return False
        time.sleep(poll)
    return True


def _one_scenario(tmp_path, capsys, store, machine, nodes: int, steps: int):
    return _plan(tmp_path, capsys, store,
                 f"defaults: {{machine: {machine}, flags: \"{HOST_FLAGS}\", n: 1440000, steps: {steps}, "
                 f"warmup: 1, reps: 1, top: 1, threads: 1}}\nscenarios:\n  - {{ivp: heat2d, nodes: {nodes}}}\n")


def test_a_node_taken_down_mid_job_loses_nothing_and_measures_nothing_twice(own_replay_store, cluster_machine,
                                                                          tmp_path, capsys, nodes_restored):
    plan = _one_scenario(tmp_path, capsys, own_replay_store, cluster_machine, 2, 300)
    job = _submitted(capsys, plan, own_replay_store)
    assert _until(lambda: _job_field(job, "JobState") == "RUNNING", 120)
    victim = subprocess.run(["scontrol", "show", "hostnames", _job_field(job, "NodeList")], capture_output=True,
                            text=True, timeout=20).stdout.split()[0]
    # the node fails: Slurm kills what ran there and requeues the job; drained, it stays out of
    # service (down alone, its slurmd would return it at once: ReturnToService=2)
    _scontrol("update", f"nodename={victim}", "state=down", "reason=test")
    _scontrol("update", f"nodename={victim}", "state=drain", "reason=test")
    # the job ends with its node; Slurm requeues it (the plan shows it queued again, same id) and
    # it runs once more on nodes that are up; the store then holds its measurement exactly once
    st = _wait(capsys, plan, lambda s: s["counts"] == {"done": 1}, timeout=300)
    assert st["counts"] == {"done": 1}, st
    assert int(_job_field(job, "Restarts") or 0) >= 1
    assert len(_runs(own_replay_store)) == 1
    assert victim not in _placements(own_replay_store)[0]["nodes"]
    code, out, err = run_cli(capsys, "tune", "--plan", plan, "--format", "json")
    assert code == 0 and json.loads(out)["totals"] == dict(json.loads(out)["totals"], reused=1, ran=0, failed=0)


def test_a_drained_node_is_scheduled_around(own_replay_store, cluster_machine, tmp_path, capsys, nodes_restored):
    drained = NODES[0]                  # the node Slurm would take first
    _scontrol("update", f"nodename={drained}", "state=drain", "reason=test")
    plan = _one_scenario(tmp_path, capsys, own_replay_store, cluster_machine, 2, 2)
    _submitted(capsys, plan, own_replay_store)
    st = _wait(capsys, plan, lambda s: s["counts"] == {"done": 1}, timeout=300)
    assert st["counts"] == {"done": 1}, st
    (where,) = _placements(own_replay_store)
    assert len(where["nodes"]) == 2 and drained not in where["nodes"], where


def test_status_and_collect_survive_a_controller_restart(own_replay_store, cluster_machine, tmp_path, capsys):
    import os
    plan = _one_scenario(tmp_path, capsys, own_replay_store, cluster_machine, 2, 100)
    job = _submitted(capsys, plan, own_replay_store)
    assert _until(lambda: _job_field(job, "JobState") == "RUNNING", 120)
    pid_file = os.path.join(os.environ["AUTOTUNE_SLURM_DIR"], "slurmctld.pid")
    _scontrol("shutdown", "slurmctld")
    try:
        assert _until(lambda: subprocess.run(["sinfo", "-h"], capture_output=True, timeout=30).returncode != 0, 60)
        # without a controller: one line naming the command that failed, nothing else
        code, out, err = run_cli(capsys, "tune", "--plan", plan, "--status")
        assert code == 1 and len(err.strip().splitlines()) == 1 and "squeue failed" in err, err
    finally:
        subprocess.run(["slurmctld", "-f", os.environ["SLURM_CONF"]], check=True, timeout=60)
    assert _until(lambda: subprocess.run(["sinfo", "-h"], capture_output=True, timeout=30).returncode == 0, 60)
    assert os.path.exists(pid_file)         # tests/slurm/down stops it by this pid
    # the restarted controller recovered the job from its saved state: the plan follows it to the end
    st = _wait(capsys, plan, lambda s: s["counts"] == {"done": 1}, timeout=300)
    assert st["counts"] == {"done": 1} and st["scenarios"][0]["job"] == job, st
    code, out, err = run_cli(capsys, "tune", "--plan", plan, "--format", "json")
    assert code == 0 and json.loads(out)["totals"]["reused"] == 1
    assert len(_runs(own_replay_store)) == 1


def test_a_plan_bigger_than_the_partition_is_refused_before_submitting(own_replay_store, cluster_machine,
                                                                       tmp_path, capsys):
    big = _cluster_of(2 * len(NODES), tmp_path / "big.yaml")
    plan = _plan(tmp_path, capsys, own_replay_store,
                 f"defaults: {{machine: {big}, flags: \"{HOST_FLAGS}\", "
                 f"n: 1440000, steps: 2, warmup: 1, reps: 1, top: 1, threads: 1}}\n"
                 f"scenarios:\n  - {{ivp: heat2d, nodes: 2}}\n  - {{ivp: heat2d, nodes: {2 * len(NODES)}}}\n")
    code, out, err = run_cli(capsys, "tune", "--plan", plan, "--submit", "slurm", "--store", own_replay_store)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert f"scenario 1 asks for {2 * len(NODES)} nodes and partition" in err and "nothing submitted" in err
    assert not (tmp_path / "plan.state.json").exists()


def _partition_nodes() -> dict[str, set[str]]:
    """Partition -> its nodes, of the Slurm running (empty without 4 nodes)."""
    if len(NODES) < 4:
        return {}
    out = subprocess.run(["sinfo", "-h", "-N", "-o", "%P %N"], capture_output=True, text=True, timeout=20).stdout
    parts: dict[str, set[str]] = {}
    for line in out.splitlines():
        name, node = line.split()
        parts.setdefault(name.rstrip("*"), set()).add(node)
    return parts


PARTITIONS = _partition_nodes()


@pytest.mark.skipif(not {"small", "big"} <= set(PARTITIONS), reason="needs partitions small and big: eval "
                    "\"$(bash tests/slurm/up --nodes 4 --cpus-per-node 2 --partitions)\"")
def test_a_plan_over_two_partitions_runs_each_scenario_in_its_own(own_replay_store, tmp_path, capsys):
    small, big = _cluster_of(2, tmp_path / "small.yaml"), _cluster_of(2, tmp_path / "big.yaml")
    plan = _plan(tmp_path, capsys, own_replay_store,
                 f"defaults: {{partitions: {{small: {small}, big: {big}}}, flags: \"{HOST_FLAGS}\", "
                 f"n: 1440000, nodes: 1, threads: 1, "
                 f"steps: 1, warmup: 0, reps: 1, top: 1}}\n"
                 "scenarios:\n  - {ivp: heat2d, partition: small}\n  - {ivp: heat2d, partition: big}\n")
    assert [s["machine"] for s in json.loads(plan.read_text())["scenarios"]] == ["small", "big"]
    code, out, err = run_cli(capsys, "tune", "--plan", plan, "--submit", "slurm", "--store", own_replay_store)
    assert code == 0, err
    st = _wait(capsys, plan, lambda s: s["counts"] == {"done": 2}, timeout=300)
    assert st["counts"] == {"done": 2}, st
    for row, partition in zip(st["scenarios"], ("small", "big")):
        where = subprocess.run(["squeue", "-h", "-t", "all", "-j", row["job"], "-o", "%P %N"], capture_output=True,
                               text=True, timeout=20).stdout.split()
        assert where[0] == partition and where[1] in PARTITIONS[partition], (row, where)

"""One run across two Slurm partitions whose nodes are unequal (tests/slurm/up --partitions
--quota-small Q: the small nodes' jobs get Q of one CPU): the inequality measured, and a plan's
mixed scenario submitted as one heterogeneous job whose ranks run on a node of each partition.

    eval "$(bash tests/slurm/up --nodes 4 --cpus-per-node 2 --partitions --quota-small 0.5)"
    python3 -m pytest -m slurm tests/test_slurm_mixed.py
"""
import json
import os
import re
import sqlite3
import subprocess
import sys

import pytest

from .conftest import run_cli
from .test_slurm import HOST_FLAGS, _machine_path, _plan, _wait
from .test_slurm_nodes import PARTITIONS

QUOTA = os.environ.get("AUTOTUNE_SLURM_QUOTA")
pytestmark = [pytest.mark.slurm, pytest.mark.skipif(
    not QUOTA or not {"small", "big"} <= set(PARTITIONS),
    reason="needs partitions small and big, the small ones under a CPU quota: eval \"$(bash tests/slurm/up "
           "--nodes 4 --cpus-per-node 2 --partitions --quota-small 0.5)\"")]

SPIN = ("import os, time\nt = time.perf_counter()\nk = 0\nfor i in range(6_000_000):\n    k += i\n"
        "print(os.environ['SLURMD_NODENAME'], time.perf_counter() - t)")


@pytest.fixture(autouse=True)
def _builds(private_builds):
    """Solvers are built into the session's scratch directory (shared by the jobs)."""


def _spin(partition: str) -> float:
    out = subprocess.run(["srun", "-p", partition, "-N", "1", "-n", "1", sys.executable, "-c", SPIN],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    node, seconds = out.stdout.split()
    assert node in PARTITIONS[partition]
    return float(seconds)


def test_the_small_partitions_nodes_are_slower_as_measured():
    """The same loop, one task on a node of each partition, in turns: the small one takes about
    1/Q as long (printed: the measured inequality)."""
    big, small = [], []
    for _ in range(3):
        big.append(_spin("big"))
        small.append(_spin("small"))
    ratio = sorted(small)[1] / sorted(big)[1]
    print(f"inequality: small {sorted(small)[1]:.3f} s, big {sorted(big)[1]:.3f} s, ratio {ratio:.2f} "
          f"(quota {QUOTA})")
    assert ratio > 0.7 / float(QUOTA)


def _kinds(tmp_path):
    """big.yaml (the test machine), small.yaml (its nodes under the quota) and cluster.yaml whose
    partitions name them."""
    text = open(_machine_path()).read()
    head, sep, cluster = text.partition("\ncluster:\n")
    cluster = re.sub(r"(?m)^  nodes: \d+$", "  nodes: 2", cluster, count=1)
    (tmp_path / "big.yaml").write_text(head + sep + cluster)
    (tmp_path / "small.yaml").write_text(head + sep + f"  cpu_quota: {QUOTA}\n" + cluster)
    (tmp_path / "cluster.yaml").write_text(head + sep + "  partitions: {big: big.yaml, small: small.yaml}\n" + cluster)
    return tmp_path / "cluster.yaml"


def test_a_mixed_scenario_runs_as_one_heterogeneous_job_across_the_partitions(own_replay_store, tmp_path, capsys):
    cluster = _kinds(tmp_path)
    plan = _plan(tmp_path, capsys, own_replay_store,
                 f"defaults: {{machine: {cluster}, flags: \"{HOST_FLAGS}\", n: 1440000, threads: 1, "
                 "steps: 4, warmup: 1, reps: 2, top: 1}\n"
                 "scenarios:\n  - {ivp: heat2d, nodes: {big: 1, small: 1}}\n")
    planned = json.loads(plan.read_text())
    assert planned["plan_version"] == 3
    entry = planned["scenarios"][0]
    assert [k["partition"] for k in entry["kinds"]] == ["big", "small"]
    split = entry["variants"][0]["split"]
    assert sum(split) == 1440000 and split[0] > split[1]
    code, out, err = run_cli(capsys, "tune", "--plan", plan, "--submit", "slurm", "--store", own_replay_store)
    assert code == 0, err
    script = (plan.parent / "plan.jobs" / "scenario-0.sh").read_text()
    assert "#SBATCH hetjob" in script and "--partition=big" in script and "--partition=small" in script
    st = _wait(capsys, plan, lambda s: s["counts"] == {"done": 1}, timeout=400)
    assert st["counts"] == {"done": 1}, st
    job = st["scenarios"][0]["job"]
    where = subprocess.run(["squeue", "-h", "-t", "all", "-j", job, "-o", "%i %P %N"], capture_output=True,
                           text=True, timeout=20).stdout.split("\n")
    seen = {line.split()[1]: line.split()[2] for line in where if line.strip()}
    assert set(seen) == {"big", "small"} and all(seen[p] in PARTITIONS[p] for p in seen), where
    # collected: both splits measured, each run one world over a node of each partition
    code, out, err = run_cli(capsys, "tune", "--plan", plan, "--store", own_replay_store, "--format", "json")
    assert code == 0, err
    runs = json.loads(out)["scenarios"][0]["runs"]
    assert [r["split_kind"] for r in runs] == ["model", "even"] and all(r["runs"] == 2 for r in runs), [(r["runs"], r["errors"]) for r in runs]
    db = sqlite3.connect(own_replay_store)
    placed = [json.loads(r)["placement"] for (r,) in db.execute(
        "SELECT result FROM runs WHERE machine LIKE 'mixed:%'").fetchall()]
    db.close()
    assert len(placed) == 4
    for p in placed:
        assert len(p["nodes"]) == 2 and {n for n in p["nodes"]} & PARTITIONS["big"] and \
            {n for n in p["nodes"]} & PARTITIONS["small"], p
    # the slower node holds less, and the model's split runs faster than the even one
    model, even = runs
    print(f"measured: model split {model['measured_s']:.4e} s/step, even {even['measured_s']:.4e} s/step")
    assert model["measured_s"] < even["measured_s"]

"""Real MPI runs (mpiexec -n 2) of the micro-benchmarks and of `autotune calibrate`."""
import json
import shutil
import subprocess
import sys

import pytest

from autotune.specs.schemes import OPERATIONS
from autotune.specs.shipped import shipped_dir

from .conftest import run_cli



@pytest.mark.parametrize("op", list(OPERATIONS))
def test_each_benchmark_runs_on_two_ranks(op, tmp_path, mpiexec):
    out = tmp_path / "m.jsonl"
    subprocess.run([mpiexec, "-n", "2", sys.executable, "-m", OPERATIONS[op].benchmark, "--max-bytes", "4096",
                    "--factor", "8", "--max-seconds", "0.05", "--out", str(out)],
                   check=True, cwd=tmp_path, capture_output=True, timeout=120)
    recs = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["params"]["bytes"] for r in recs] == [8, 64, 512, 4096]
    for r in recs:
        assert r["callpath"] == op and r["metric"] == "time" and r["params"]["p"] == 2
        assert 0 < r["min"] <= r["median"] <= r["max"] and len(r["value"]) == r["reps"] >= 10


def test_barrier_benchmark(tmp_path, compiler):
    from benchmarks_mpi import barrier
    exe = barrier.build("gcc", tmp_path)
    rec = barrier.run(exe, 2, reps=5, inner=200)
    assert rec["params"]["threads"] == 2 and rec["callpath"] == "barrier" and 0 < rec["median"] < 1e-2


@pytest.fixture()
def machine_copy(tmp_path):
    dst = tmp_path / "mine.yaml"
    shutil.copy(shipped_dir("machines") / "haswell-ep-e5-2630v3.yaml", dst)
    return dst


def test_calibrate_fits_writes_the_machine_and_resumes(mpiexec, machine_copy, tmp_path, capsys, replay_store):
    store = tmp_path / "s.sqlite"
    code, out, _ = run_cli(capsys, "rank", "--ivp", "heat2d", "--machine", machine_copy, "--nodes", "8",
                           "--format", "json", "--store", replay_store)
    before = {v["name"]: v for v in json.loads(out)["variants"]}
    argv = ["calibrate", "--machine", machine_copy, "--procs", "2", "--threads", "1,2", "--max-bytes", 2**20,
            "--factor", "4", "--max-seconds", "0.05", "--store", store, "--format", "json"]
    code, out, err = run_cli(capsys, *argv, "--plot", tmp_path / "fit.png", "--raw", tmp_path / "raw.jsonl")
    assert code == 0, err
    res = json.loads(out)
    assert (tmp_path / "fit.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert res["runs"] == 4 + 2 and "measuring" in err      # the four operations, the barrier at 1 and 2 threads
    for op in ("allgather", "neighbour", "pairwise", "allreduce"):
        r = res["operations"][op]
        assert r["measured_p"] == [2] and r["heldout_error_pct"]["points"] >= 2
        assert r["fit"]["segments"][0]["latency_s"] >= 0
    assert res["barrier"]["per_doubling_s"] > 0
    ops = [json.loads(line) for line in (tmp_path / "raw.jsonl").read_text().splitlines()]
    barrier = [json.loads(line) for line in (tmp_path / "raw.barrier.jsonl").read_text().splitlines()]
    raw = ops + barrier            # a file per set of parameters: Extra-P reads them off the first line
    assert {r["callpath"] for r in ops} == {"allgather", "neighbour", "pairwise", "allreduce"}
    assert {r["callpath"] for r in barrier} == {"barrier"} and len(barrier) == 2      # --threads 1,2
    assert all(set(r["params"]) == {"p", "bytes"} for r in ops) and all(set(r["params"]) == {"threads"} for r in barrier)
    assert all(set(r) >= {"params", "value", "metric"} and isinstance(r["value"], list) for r in raw)
    # where the ranks ran: both on this host's one node, asked for 2 nodes of the 8-node
    # machine by a launcher that cannot place them: packed, and said so everywhere
    placed = [r["placement"] for r in raw if r["callpath"] != "barrier"]
    assert placed and all(sum(w["ranks_per_node"].values()) == 2 and len(w["nodes"]) == 1 and w["packed"]
                          for w in placed)
    assert res["measured_on"]["packed"] is True and res["measured_on"]["nodes"] == placed[0]["nodes"]
    text = machine_copy.read_text()
    assert "model: fitted" in text and "# Reference cluster" in text   # comments kept
    assert "measured_on:" in text and " ".join(text.split()).count("not a measurement across a network") == 1
    # rank now uses (and says it uses) the fitted model; the kerncraft part is unchanged,
    # so every ECM result is reused from the store
    code, out, _ = run_cli(capsys, "rank", "--ivp", "heat2d", "--machine", machine_copy, "--nodes", "8",
                           "--format", "json", "--store", replay_store)
    d = json.loads(out)
    assert code == 0 and d["ecm"]["analyses_run"] == 0
    assert any("fitted on" in n for n in d["notes"]) and d["comm_model"]["model"] == "fitted"
    for v in d["variants"]:
        assert v["node_s"] == pytest.approx(before[v["name"]]["node_s"], rel=0.05)  # barrier term may change
        assert v["comm_s"] != before[v["name"]]["comm_s"]
    # a second calibration reuses every stored measurement
    code, out, err = run_cli(capsys, *argv)
    assert code == 0 and json.loads(out)["runs"] == 0 and "reused" in err


def test_failing_and_missing_launchers_name_the_command(machine_copy, tmp_path, capsys):
    base = ["calibrate", "--machine", machine_copy, "--procs", "2", "--max-bytes", 64, "--store", tmp_path / "s.sqlite"]
    code, _, err = run_cli(capsys, *base, "--launcher", "false {procs}")
    assert code == 1 and "false 2" in err and "log:" in err and "Traceback" not in err
    code, _, err = run_cli(capsys, *base, "--launcher", "no-such-launcher -n {procs}")
    assert code == 1 and "'no-such-launcher' not found" in err


@pytest.mark.parametrize("extra,needle", [(["--procs", "1"], "at least 2"), (["--ops", "bcast"], "--ops"),
                                          (["--procs", "2,x"], "--procs x: expected a number")])
def test_calibrate_bad_input(extra, needle, machine_copy, tmp_path, capsys):
    code, _, err = run_cli(capsys, "calibrate", "--machine", machine_copy, *extra, "--store", tmp_path / "s")
    assert code == 2 and needle in err

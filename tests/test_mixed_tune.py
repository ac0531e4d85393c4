"""tune over a mixed allocation: the chosen variant built for uneven blocks and run as one MPI world
of a group of ranks per kind, at the model's split and at the even split (docs/usage.md "Mixed
allocations"); the launch each launcher gets."""
import json

import pytest

from autotune.errors import InputError
from autotune.tools.launcher import mpmd_argv, parse_launcher

from .conftest import run_cli
from .test_mixed import N, _node_part_file


def test_mpiexec_and_srun_start_one_world_of_a_group_per_kind():
    cmd = ["./solver", "4000000"]
    assert mpmd_argv(parse_launcher(None), [(2, 8), (1, 2)], cmd) == [
        "mpiexec", "-n", "2", "-env", "OMP_NUM_THREADS", "8", *cmd, ":",
        "-n", "1", "-env", "OMP_NUM_THREADS", "2", *cmd]
    assert mpmd_argv(parse_launcher("srun"), [(2, 8), (1, 2)], cmd, "pmix", [["taskset", "-c", "0"], []]) == [
        "srun", "--mpi=pmix", "-N", "2", "-n", "2", "-c", "8", "--export=ALL,OMP_NUM_THREADS=8", "taskset", "-c",
        "0", *cmd, ":", "-N", "1", "-n", "1", "-c", "2", "--export=ALL,OMP_NUM_THREADS=2", *cmd]
    with pytest.raises(InputError, match="launched with mpiexec or srun"):
        mpmd_argv(parse_launcher("aprun -n {procs}"), [(1, 1)], cmd)


@pytest.fixture(autouse=True)
def _private_builds(private_builds):
    """The tests that build solvers build their own."""


def test_tune_runs_the_split_and_the_even_split_and_reports_each_kind(own_replay_store, tmp_path, capsys):
    _node_part_file(tmp_path / "node.yaml")
    machine = _node_part_file(tmp_path / "cluster.yaml", "  partitions: {big: node.yaml, small: node.yaml}\n")
    code, out, err = run_cli(capsys, "tune", "--ivp", "heat2d", "--n", N, "--machine", machine,
                             "--nodes", "big:1,small:1", "--threads", "big:2,small:1", "--top", "1",
                             "--steps", "3", "--warmup", "1", "--reps", "2", "--format", "json",
                             "--store", own_replay_store)
    assert code == 0, err
    res = json.loads(out)
    assert res["nodes"] == "big:1,small:1" and [k["threads"] for k in res["kinds"]] == [2, 1]
    runs = res["runs"]
    assert [r["split_kind"] for r in runs] == ["model", "even"] and len({r["variant"] for r in runs}) == 1
    model, even = runs
    assert even["split"] == f"{N // 2};{N // 2}"
    counts = [int(c) for c in model["split"].split(";")]
    assert sum(counts) == N and counts[0] > counts[1]        # two threads hold more than one
    for r in runs:
        assert r["runs"] == 2 and r["errors"] is None and r["measured_s"] > 0
        assert r["deviation"] == pytest.approx(r["predicted_s"] / r["measured_s"] - 1)
        for k in r["kinds"]:
            assert k["measured_busy_s"] > 0 and k["predicted_node_s"] > 0
            assert k["node_deviation"] == pytest.approx(k["predicted_node_s"] / k["measured_busy_s"] - 1)
    # the rank that holds more is busier at the even split's counterpart: its own time is measured
    assert model["kinds"][0]["share"] == pytest.approx(counts[0] / N)
    assert "run 4/4" in err


def test_tune_refuses_what_a_mixed_allocation_does_not_run(capsys, tmp_path):
    _node_part_file(tmp_path / "node.yaml")
    machine = _node_part_file(tmp_path / "cluster.yaml", "  partitions: {big: node.yaml, small: node.yaml}\n")
    base = ["tune", "--ivp", "heat2d", "--n", N, "--machine", machine, "--nodes", "big:1,small:1",
            "--store", tmp_path / "s.sqlite"]
    for extra, said in ((["--reps", "auto"], "--reps"), (["--baseline"], "--baseline"),
                        (["--launcher", "aprun -n {procs}"], "--launcher")):
        code, out, err = run_cli(capsys, *base, *extra)
        assert code == 2 and said in err and len(err.strip().splitlines()) == 1, (extra, err)

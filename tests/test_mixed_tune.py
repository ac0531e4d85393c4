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


def test_tune_online_races_the_candidates_at_one_split(own_replay_store, tmp_path, capsys):
    _node_part_file(tmp_path / "node.yaml")
    machine = _node_part_file(tmp_path / "cluster.yaml", "  partitions: {big: node.yaml, small: node.yaml}\n")
    split = f"{N * 3 // 4},{N // 4}"
    code, out, err = run_cli(capsys, "tune", "--ivp", "heat2d", "--n", N, "--machine", machine,
                             "--nodes", "big:1,small:1", "--threads", "1", "--top", "2", "--online",
                             "--split", split, "--steps", "8", "--warmup", "1", "--format", "json",
                             "--store", own_replay_store)
    assert code == 0, err
    res = json.loads(out)
    assert res["nodes"] == 2 and len(res["candidates"]) == 2 and res["choice"] in [c["name"] for c in
                                                                                    res["candidates"]]
    assert f"at the split {split}" in err and "online:" in err


def test_calibrate_across_kinds_writes_their_network_and_rank_uses_it(tmp_path, capsys, mpiexec):
    """calibrate --kinds big,small: the benchmarks with a rank on each kind (mpiexec's MPMD form),
    the fit written to cluster.networks["big+small"], and a mixed allocation of those kinds
    priced with it (the result says so)."""
    _node_part_file(tmp_path / "node.yaml")
    machine = _node_part_file(tmp_path / "cluster.yaml", "  partitions: {big: node.yaml, small: node.yaml}\n")
    code, out, err = run_cli(capsys, "calibrate", "--machine", machine, "--kinds", "small,big", "--procs", "2",
                             "--ops", "allgather", "--max-bytes", "4096", "--max-seconds", "0.02",
                             "--store", tmp_path / "c.sqlite", "--format", "json")
    assert code == 0, err
    from autotune.specs.machine import load_machine
    m = load_machine(machine)
    net = m.networks["big+small"]
    assert net["model"] == "fitted" and "allgather" in net["fits"] and "ranks across big and small" in net["provenance"]
    assert m.network["model"] == "datasheet"             # the cluster network is left as it was
    from autotune.request.scenario import ScenarioRequest
    msc = ScenarioRequest.of("heat2d", n=N, machine=machine, nodes="big:1,small:1").mixed()
    assert msc.network["fits"]["allgather"] == net["fits"]["allgather"]
    assert "measured across big+small" in msc.network_from
    for kinds, said in (("big", "two or more different partitions"), ("big,huge", "two or more different")):
        code, _, err = run_cli(capsys, "calibrate", "--machine", machine, "--kinds", kinds, "--store",
                               tmp_path / "c.sqlite")
        assert code == 2 and said in err and len(err.strip().splitlines()) == 1

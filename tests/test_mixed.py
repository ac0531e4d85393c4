"""Mixed allocations: nodes of several kinds in one run, each variant's split solved by the
model (docs/method.md "Mixed allocations").  The split's solver on known times, the request's
checks, and rank/explain end to end on recorded analyses."""
import csv
import io
import json
import math
import re

import numpy as np
import pytest

from autotune.errors import InputError
from autotune.model import split as splitmod
from autotune.request.mixed import is_mix, parse_mix
from autotune.request.scenario import ScenarioRequest
from autotune.specs.machine import DEFAULT_MACHINE, load_machine

from .conftest import run_cli

N = 4_000_000      # heat2d at 2000 x 2000


def _linear(grid, per_component):
    return [np.array([[b * c for b in g]]) for g, c in zip(grid, per_component)]


def test_the_split_of_two_linear_kinds_gives_each_its_speed_share():
    ranks = [2, 1]
    q, grid = splitmod.grid(N, ranks, 8)
    blocks = splitmod.solve(grid, _linear(grid, [1.0, 2.0]), ranks, N)[0]
    # the slow kind's rank runs half as many components; the grid is q apart
    assert abs(blocks[0] - 1_600_000) <= q and abs(blocks[1] - 800_000) <= q
    split = splitmod.counts(blocks, ranks, N, [1, 0], 8)
    assert sum(split) == N and len(split) == 3
    assert all(c % 8 == 0 for c in split[:-1])
    step = max(split[0] * 1.0, split[2] * 2.0)
    assert step <= 1_600_000 * (1 + 1.5 / splitmod.RESOLUTION)


def test_the_split_lands_below_a_regime_step_where_that_is_faster():
    """Kind 0 doubles its time per component past a block (its data leaves a cache): the
    solver keeps its block below that step rather than sharing by the speeds alone."""
    ranks = [1, 1]
    q, grid = splitmod.grid(N, ranks, 8)
    step_at = 2_400_000
    t0 = np.array([[b * (1.0 if b <= step_at else 3.0) for b in grid[0]]])
    t1 = np.array([[b * 1.5 for b in grid[1]]])
    blocks = splitmod.solve(grid, [t0, t1], ranks, N)[0]
    assert blocks[0] <= step_at
    # the solved split is as fast as the best of every split the grid has (each kind's block a
    # grid block, the two holding n)
    best = min(max(a * (1.0 if a <= step_at else 3.0), min(b for b in grid[1] if b >= N - a) * 1.5)
               for a in grid[0] if a < N and N - a <= grid[1][-1])
    got = max(t0[0][grid[0].index(blocks[0])], t1[0][grid[1].index(blocks[1])])
    assert got <= best * (1 + 1e-12)


def test_a_failed_kind_leaves_the_variant_without_a_split():
    ranks = [1, 1]
    _, grid = splitmod.grid(1000, ranks, 8)
    times = _linear(grid, [1.0, 1.0])
    times[1][:] = np.nan
    assert splitmod.solve(grid, times, ranks, 1000) == [None]


@pytest.mark.parametrize("blocks, ranks, n", [([104, 56], [2, 1], 240), ([8, 8, 8], [1, 1, 1], 17), ([4000], [3], 11999)])
def test_counts_hold_n_and_never_empty_a_rank(blocks, ranks, n):
    split = splitmod.counts(blocks, ranks, n, list(range(len(ranks))), 8)
    assert sum(split) == n and min(split) >= 1
    at = 0
    for b, r in zip(blocks, ranks):
        assert max(split[at:at + r]) <= b
        at += r


def test_kinds_are_told_from_a_sweep_of_counts():
    assert is_mix("big:4,small:2") and is_mix({"big": 4})
    assert not is_mix("1:64:x2") and not is_mix("8,16") and not is_mix(8)
    assert parse_mix("big:4, small:2") == (("big", 4), ("small", 2))
    for bad, said in [("big:x", "whole number"), ("big:0", "at least 1"), ("big:1,big:2", "named twice"),
                      ("big", "KIND:NODES")]:
        with pytest.raises(InputError, match=said):
            parse_mix(bad)


def _node_part_file(path, partitions: str = "") -> str:
    """The default machine (its node part unchanged: the recorded analyses serve it) with
    `partitions` in its cluster section."""
    text = open(load_machine(DEFAULT_MACHINE).path).read()
    path.write_text(text.rstrip("\n") + "\n" + partitions)
    return str(path)


@pytest.fixture()
def cluster(tmp_path):
    """cluster.yaml naming partitions big and small (both the default machine's nodes, the small
    one run with fewer threads), and `lost` whose machine file is missing."""
    _node_part_file(tmp_path / "node.yaml")
    return _node_part_file(tmp_path / "cluster.yaml",
                           "  partitions: {big: node.yaml, small: node.yaml, lost: missing.yaml}\n")


@pytest.mark.parametrize("args, said", [
    (["--nodes", "huge:2,small:1"], "--nodes huge: unknown partition or machine (partitions of"),
    (["--nodes", "lost:2,small:1"], "--nodes lost: partition of cluster without a usable machine file"),
    (["--nodes", "big:0,small:1"], "--nodes big:0: expected at least 1 node of each kind"),
    (["--nodes", "big:2,small:1", "--split", "2000000,2000000,0"], "--split 2000000,2000000,0: a rank without"),
    (["--nodes", "big:2,small:1", "--split", "1,2"], "expected 3 blocks, one per rank"),
    (["--nodes", "big:2,small:1", "--split", "1,2,3"], "not n = 4000000"),
    (["--nodes", "big:2,small:1", "--threads", "tiny:2"], "--threads tiny: not one of the kinds"),
    (["--nodes", "big:2,small:1", "--threads", "small:99"], "cores per node (kind small)"),
    (["--nodes", "4", "--split", "1,2"], "--split 1,2: only with nodes of several kinds"),
])
def test_bad_input_is_one_line_and_status_2_before_any_work(capsys, tmp_path, cluster, args, said):
    code, out, err = run_cli(capsys, "rank", "--ivp", "heat2d", "--n", N, "--machine", cluster,
                             "--store", tmp_path / "s.sqlite", *args)
    assert code == 2 and out == ""
    assert said in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "s.sqlite").exists() or (tmp_path / "s.sqlite").stat().st_size < 100_000


def test_commands_of_one_kind_refuse_a_mixed_allocation():
    with pytest.raises(InputError, match="mixed allocation; this command takes one kind"):
        ScenarioRequest.of("heat2d", nodes="big:2,small:1").scenario()


@pytest.fixture(scope="module")
def mixed_rank(replay_template, tmp_path_factory):
    """heat2d on two big nodes of 8 threads and one small of 2, ranked as JSON (recorded analyses)."""
    import shutil

    from autotune.cli.main import main
    tmp = tmp_path_factory.mktemp("mixed")
    shutil.copy(replay_template, tmp / "store.sqlite")
    _node_part_file(tmp / "node.yaml")
    machine = _node_part_file(tmp / "cluster.yaml", "  partitions: {big: node.yaml, small: node.yaml}\n")
    common = ["--ivp", "heat2d", "--n", str(N), "--machine", machine, "--store", str(tmp / "store.sqlite")]
    return tmp, common, main


def _run(capsys, mixed_rank, *argv):
    tmp, common, main = mixed_rank
    code = main([*argv[:1], *common, *argv[1:]])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def test_rank_gives_each_variant_a_split_faster_than_the_even_one(capsys, mixed_rank):
    out = _run(capsys, mixed_rank, "rank", "--nodes", "big:2,small:1", "--threads", "small:2",
               "--format", "json")
    d = json.loads(out)
    assert d["nodes"] == "big:2,small:1" and d["ranks"] == 3
    assert [k["threads"] for k in d["kinds"]] == [8, 2]
    rows = [v for v in d["variants"] if v["predicted_s"] is not None]
    assert rows and rows[0]["rank"] == 1
    for v in rows:
        assert sum(v["split"]) == N and min(v["split"]) >= 1
        assert v["predicted_s"] == max(k["predicted_s"] for k in v["kinds"])
        assert v["predicted_s"] <= v["even"]["predicted_s"] * (1 + 1e-12)
        assert v["even"]["split"] == [1333334, 1333333, 1333333]
    best = rows[0]
    # the small kind runs a quarter of the threads: it gets less than its even share
    assert best["kinds"][1]["share"] < 1 / 3
    assert best["vs_even"] < 0.9
    # ranks are ordered by the split's step
    steps = [v["predicted_s"] for v in rows]
    assert steps == sorted(steps)


def test_the_even_split_of_one_kind_is_the_homogeneous_prediction(capsys, mixed_rank):
    """A big kind at the even split is priced as `rank --nodes 3` prices each node: the same
    node model, block and interconnect."""
    mixed = json.loads(_run(capsys, mixed_rank, "rank", "--nodes", "big:2,small:1", "--all", "--format", "json"))
    plain = json.loads(_run(capsys, mixed_rank, "rank", "--nodes", "3", "--all", "--format", "json"))
    homogeneous = {v["name"]: v["predicted_s"] for v in plain["variants"]}
    checked = 0
    for v in mixed["variants"]:
        if v["name"] in homogeneous and v["even"]["predicted_s"] is not None:
            assert math.isclose(v["even"]["kinds"][0]["predicted_s"], homogeneous[v["name"]], rel_tol=1e-12)
            checked += 1
    assert checked >= 100


def test_a_given_split_is_priced_as_given_and_csv_has_a_column_per_kind(capsys, mixed_rank):
    out = _run(capsys, mixed_rank, "rank", "--nodes", "big:2,small:1", "--threads", "small:2",
               "--split", "1600000,1600000,800000", "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert {"big_share", "big_block", "big_s", "small_share", "small_block", "small_s", "even_s"} <= set(rows[0])
    assert all(r["split"] == "1600000;1600000;800000" for r in rows if r["predicted_s"])
    assert all(float(r["small_share"]) == 0.2 for r in rows if r["predicted_s"])


def test_explain_shows_each_kinds_share_and_breakdown(capsys, mixed_rank):
    tmp, common, main = mixed_rank
    table = _run(capsys, mixed_rank, "rank", "--nodes", "big:2,small:1", "--threads", "small:2")
    best = re.search(r"^split of (\S+) ", table, re.M).group(1)
    out = _run(capsys, mixed_rank, "explain", "--nodes", "big:2,small:1", "--threads", "small:2", "--variant", best)
    assert "blocks per rank (AUTOTUNE_COUNTS):" in out
    assert "--- kind big: one of its 2 ranks at its block ---" in out and "--- kind small:" in out
    d = json.loads(_run(capsys, mixed_rank, "explain", "--nodes", "big:2,small:1", "--threads", "small:2",
                        "--variant", best, "--format", "json"))
    assert d["rank"] == 1 and set(d["breakdown"]) == {"big", "small"}
    assert d["breakdown"]["small"]["threads"] == 2


def test_scale_sweeps_mixed_node_counts(capsys, mixed_rank):
    """Each allocation of the product of the kinds' counts, its best variant at its split: two
    big nodes more than one, and the small kind's share falls as big nodes are added."""
    d = json.loads(_run(capsys, mixed_rank, "scale", "--nodes", "big:1:2,small:1", "--threads", "small:2",
                        "--format", "json"))
    rows = d["allocations"]
    assert [r["nodes"] for r in rows] == ["big:1,small:1", "big:2,small:1"] and [r["ranks"] for r in rows] == [2, 3]
    assert rows[0]["speedup"] == 1.0 and rows[1]["speedup"] > 1.2
    for r in rows:
        assert r["big_share"] + r["small_share"] == pytest.approx(1.0)
        assert r["predicted_s"] <= r["even_s"] * (1 + 1e-12)
    assert rows[1]["small_share"] < rows[0]["small_share"]
    code, out, err = run_cli(capsys, "scale", "--ivp", "heat2d", "--nodes", "big:0:2,small:1")
    assert code == 2 and "--nodes 0:2: expected values >= 1" in err and len(err.strip().splitlines()) == 1


def test_the_api_takes_kinds_as_a_mapping_and_gives_a_frame(mixed_rank):
    import autotune
    tmp, common, _ = mixed_rank
    machine = common[common.index("--machine") + 1]
    res = autotune.rank(autotune.RankRequest.of("heat2d", n=N, machine=machine, nodes={"big": 2, "small": 1},
                                                threads={"small": 2}), store=tmp / "store.sqlite")
    frame = res.to_frame()
    assert list(frame.columns[:7]) == ["rank", "variant", "preselected", "predicted_s", "even_s", "vs_even", "split"]
    assert frame["predicted_s"].iloc[0] == res.best.step_s
    assert frame["big_share"].iloc[0] > 2 / 3 and frame["split"].iloc[0].count(";") == 2


def test_a_node_with_half_the_cpu_time_is_priced_at_twice_the_node_seconds(capsys, mixed_rank):
    tmp, common, _ = mixed_rank
    half = _node_part_file(tmp / "half.yaml")
    text = open(half).read().replace("\ncluster:\n", "\ncluster:\n  cpu_quota: 0.5\n", 1)
    open(half, "w").write(text)
    full = json.loads(_run(capsys, mixed_rank, "rank", "--nodes", "3", "--all", "--format", "json"))
    tmp2 = [a if a != common[common.index("--machine") + 1] else half for a in common]
    from autotune.cli.main import main
    assert main(["rank", *tmp2, "--nodes", "3", "--all", "--format", "json"]) == 0
    slow = json.loads(capsys.readouterr()[0])
    node = {v["name"]: v["node_s"] for v in full["variants"]}
    for v in slow["variants"]:
        assert math.isclose(v["node_s"], 2 * node[v["name"]], rel_tol=1e-12)


def test_a_cpu_quota_outside_0_to_1_is_refused(capsys, tmp_path):
    bad = _node_part_file(tmp_path / "bad.yaml")
    open(bad, "w").write(open(bad).read().replace("\ncluster:\n", "\ncluster:\n  cpu_quota: 1.5\n", 1))
    code, out, err = run_cli(capsys, "rank", "--ivp", "heat2d", "--machine", bad, "--nodes", "2")
    assert code == 2 and "cpu_quota" in err and len(err.strip().splitlines()) == 1

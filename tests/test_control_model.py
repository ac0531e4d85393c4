"""Step-size control priced and asked for (model.control, pipeline.controlrate): its terms, the
ranking with them, the rejection rate a tune stores and the ranking reads back, the store keys of
controlled runs, and the input it refuses (recorded kerncraft results; nothing is built)."""
import json
import math

import pytest

import autotune
from autotune.model.comm import network_model
from autotune.model.control import ControlCost, control_cost, data_level
from autotune.pipeline.controlrate import add_counts, counts, with_measured_rate
from autotune.pipeline.runners import run_key
from autotune.report.render import render
from autotune.request.scenario import ScenarioRequest
from autotune.specs.machine import load_machine
from autotune.specs.variants import fixed_twin
from autotune.storage.store import Store

from .conftest import pool_size, run_cli

HASWELL = load_machine("haswell-ep-e5-2630v3")
PIPELINED = ("lc=jl-onepass,comm=neighbour,au=fused,pred=direct,buf=ghost,rhs=onepass,fuse=rhs-lc,block=l2,"
             "pipe=wavefront,traversal=strips")
CONTROLLED = ",norm=fused,reduce=blocking"      # the pipelined step's only control (its last level sums the norm)


def _fixed_name(variant) -> str:
    """A controlled variant's fixed-step twin's name."""
    return fixed_twin(variant).name


def test_the_control_costs_its_bytes_at_its_levels_bandwidth_and_one_reduction():
    net = network_model(HASWELL.network)
    n_local = 4_000_000
    sweep = control_cost(n_local, 1, 8, 8, HASWELL.caches, HASWELL.bandwidth, net, windowed=False)
    rate = HASWELL.bandwidth("MEM", 8)
    assert sweep.level == "MEM"
    assert sweep.save_s == pytest.approx(24 * n_local / rate) and sweep.norm_s == pytest.approx(24 * n_local / rate)
    assert sweep.reduce_s == pytest.approx(net("allreduce", 8, 8)) and sweep.reduce_s > 0
    piped = control_cost(n_local, 1, 8, 8, HASWELL.caches, HASWELL.bandwidth, net, windowed=True)
    assert piped.save_s == 0 and piped.norm_s == 0 and piped.restore_s == sweep.save_s   # it keeps y
    assert control_cost(n_local, 1, 1, 8, HASWELL.caches, HASWELL.bandwidth, net, False).reduce_s == 0
    small = control_cost(1000, 1, 2, 1, HASWELL.caches, HASWELL.bandwidth, net, False)
    assert small.level == "L1" and data_level(3 * 8 * 1000, HASWELL.caches, 1) == "L1"
    assert data_level(3 * 8 * 500_000, HASWELL.caches, 8) == "L3" and data_level(1e9, HASWELL.caches, 8) == "MEM"
    # (1 + r) attempts per accepted step, and a restore per rejected one
    # (a redo starts from the y the save still holds: one save per accepted step; a nonblocking
    # reduction copies the new y on every attempt)
    c = ControlCost(1.0, 2.0, 0.5, 4.0, rejected=0.25)
    assert c.per_accepted(10.0) == pytest.approx(1.25 * 12.5 + 1.0 + 0.25 * 4.0)
    every = ControlCost(1.0, 2.0, 0.5, 4.0, rejected=0.25, overlapped=True)
    assert every.per_accepted(10.0) == pytest.approx(1.25 * 12.0 + 1.25 * 1.0 + 0.25 * 4.0)
    assert c.added(10.0) == pytest.approx(c.per_accepted(10.0) - 10.0)
    # norm=fused reads Y_s in the sweep that writes the new y: a third of its own sweep's bytes;
    # reduce=nonblocking waits only for what the save of the new y does not cover
    fused = control_cost(n_local, 1, 8, 8, HASWELL.caches, HASWELL.bandwidth, net, False, fused=True)
    assert fused.norm_s == pytest.approx(sweep.norm_s / 3) and fused.save_s == sweep.save_s
    hidden = control_cost(n_local, 1, 8, 8, HASWELL.caches, HASWELL.bandwidth, net, False, overlapped=True)
    assert hidden.exposed_reduce_s == 0 and hidden.attempt_s == pytest.approx(sweep.attempt_s - sweep.reduce_s)
    slow = ControlCost(1.0, 2.0, 3.0, 4.0, overlapped=True)
    assert slow.exposed_reduce_s == 2.0 and slow.attempt_s == 5.0
    assert control_cost(n_local, 1, 8, 8, HASWELL.caches, HASWELL.bandwidth, net, True, overlapped=True).overlapped is False


def test_a_controlled_ranking_adds_the_control_to_every_variant(replay_store):
    fixed = autotune.rank("heat2d", nodes=8, store=replay_store)
    ctl = autotune.rank(autotune.RankRequest.of("heat2d", nodes=8, rtol=1e-6), store=replay_store)
    before = {r.name: r.predicted_s for r in fixed.ordered if r.predicted_s}
    net = network_model(HASWELL.network)
    reduce = net("allreduce", 8, 8)
    n_local = math.ceil(fixed.scenario.n / 8)
    copy = 24 * n_local / HASWELL.bandwidth("MEM", 8)
    seen = set()
    for r in ctl.ordered:
        if _fixed_name(r.variant) not in before:
            continue
        added = r.predicted_s - before[_fixed_name(r.variant)]
        assert r.prediction.control_s == pytest.approx(added, rel=1e-9)
        piped = "pipe=wavefront" in r.name
        norm = copy / 3 if "norm=fused" in r.name else copy
        wait = max(reduce - copy, 0) if "reduce=nonblocking" in r.name else reduce
        assert added == pytest.approx(reduce if piped else copy + norm + wait, rel=1e-6), r.name
        seen.add((piped, r.variant.norm, r.variant.reduce))
    assert seen == {(True, "fused", "blocking")} | {(False, n, b) for n in ("sweep", "fused")
                                                     for b in ("blocking", "nonblocking")}
    assert ctl.best.name == PIPELINED + CONTROLLED     # the pipelined step keeps y and sums the norm as it goes
    assert len(ctl.ordered) == 4 * len(fixed.ordered) - 3 * sum("pipe=wavefront" in r.name for r in fixed.ordered)
    d = ctl.to_dict()
    assert d["control"] == {"rtol": 1e-6, "atol": 1e-6, "rejected_per_step": 0.0}
    assert d["variants"][0]["control_s"] == pytest.approx(reduce)
    assert "control" not in fixed.to_dict() and "control_s" not in fixed.to_dict()["variants"][0]
    assert any(n.startswith("step control (rtol 1e-06") for n in ctl.notes())


def test_explain_shows_the_controls_terms(replay_store):
    ex = autotune.explain(autotune.RankRequest.of("heat2d", nodes=8, rtol=1e-6).scenario,
                          variant="lc=ijl,comm=allgather", store=replay_store)
    c = ex.control
    assert ex.result.name == "lc=ijl,comm=allgather,norm=sweep,reduce=blocking"   # the paper's control, filled in
    assert c["norm"] == "a sweep of its own" and c["level"] == "MEM" and c["rejected_per_step"] == 0
    assert ex.result.prediction.control_s == pytest.approx(c["save_s"] + c["norm_s"] + c["reduce_s"])
    assert "step control (rtol 1e-06, atol 1e-06): " in render(ex, "table")
    assert ex.to_dict()["control"] == c
    other = autotune.explain(autotune.RankRequest.of("heat2d", nodes=8, rtol=1e-6).scenario,
                             variant="lc=ijl,comm=allgather,norm=fused,reduce=nonblocking", store=replay_store).control
    assert other["norm"] == "in the sweep that writes the new y" and other["norm_s"] == pytest.approx(c["norm_s"] / 3)
    assert other["exposed_reduce_s"] == 0 < other["reduce_s"] == c["reduce_s"] and "(nonblocking" in other["reduce_op"]


def test_a_tunes_rejections_are_priced_by_the_next_ranking(own_replay_store):
    req = autotune.RankRequest.of("heat2d", nodes=8, rtol=1e-6)
    sc = req.scenario.scenario()
    store = Store(own_replay_store)
    try:
        assert counts(sc, store) == (0, 0) and with_measured_rate(sc, store) is sc
        add_counts(sc, store, 80, 10)
        add_counts(sc, store, 20, 15)
        assert counts(sc, store) == (100, 25)
        assert with_measured_rate(sc, store).control.rejected == 0.25
    finally:
        store.close()
    base = autotune.rank(req, store=own_replay_store)
    assert base.scenario.control.rejected == 0.25
    fixed = autotune.rank("heat2d", nodes=8, store=own_replay_store)
    f = fixed.variant(PIPELINED).prediction
    got = base.variant(PIPELINED + CONTROLLED).prediction
    reduce = network_model(HASWELL.network)("allreduce", 8, 8)
    copy = 24 * math.ceil(sc.n / 8) / HASWELL.bandwidth("MEM", 8)
    assert got.total_s == pytest.approx(1.25 * (f.total_s + reduce) + 0.25 * copy, rel=1e-9)
    assert any("0.25 rejected attempts per accepted step (the rate its runs reported)" in n for n in base.notes())


def test_controlled_runs_are_stored_apart_from_fixed_step_ones():
    fixed = ScenarioRequest("heat2d", nodes=8).scenario()
    keys = {run_key(ScenarioRequest("heat2d", nodes=8, rtol=r, atol=a).scenario(), "lc=ijl,comm=allgather", ["-O3"])
            for r, a in ((1e-6, 1e-6), (1e-6, 1e-9), (1e-9, 1e-9))}
    assert len(keys) == 3 and run_key(fixed, "lc=ijl,comm=allgather", ["-O3"]) not in keys
    # a fixed step's key is the one stored runs have always had
    assert run_key(fixed, "x", []) == run_key(ScenarioRequest("heat2d", nodes=8).scenario(), "x", [])


def test_scale_shows_the_reduction_growing_with_the_nodes(replay_store):
    res = autotune.scale(autotune.RankRequest.of("heat2d", nodes="2,8", rtol=1e-6).scenario, store=replay_store)
    note = next(n for n in res.notes if n.startswith("step control per attempt (the paper's"))
    assert "2: 1.00 us" in note and "8: 3.00 us" in note


@pytest.mark.parametrize("argv,says", [
    (["--rtol", "0"], "--rtol 0.0: expected a tolerance between 0 and 1"),
    (["--atol", "2"], "--atol 2.0: expected a tolerance between 0 and 1"),
    (["--rtol", "1e-6", "--method", "gauss6"], "step-size control needs a stiffly accurate method"),
])
def test_bad_tolerances_are_refused_before_any_work(capsys, argv, says):
    code, out, err = run_cli(capsys, "rank", "--ivp", "heat2d", "--nodes", "8", *argv)
    assert code == 2 and not out and says in err and len(err.strip().splitlines()) == 1, err


def test_generate_writes_controlled_solvers_and_says_how_to_run_them(tmp_path, capsys):
    code, _, err = run_cli(capsys, "generate", "--ivp", "heat2d", "--n", "10000", "--rtol", "1e-6", "--atol", "1e-8",
                           "--out", tmp_path / "ctl", "--format", "json")
    assert code == 0, err
    manifest = json.loads((tmp_path / "ctl" / "variants.json").read_text())
    assert manifest["control"] == {"rtol": 1e-6, "atol": 1e-8} and manifest["run"].endswith("[output-file|- [t-end]]")
    sources = [(tmp_path / "ctl" / s["file"]).read_text() for s in manifest["solvers"].values()]
    assert len(sources) == pool_size(controlled=True) and all("v_err" in s and "#define ATOL 1e-08" in s for s in sources)
    code, _, err = run_cli(capsys, "generate", "--ivp", "heat2d", "--n", "10000", "--out", tmp_path / "fixed")
    fixed = json.loads((tmp_path / "fixed" / "variants.json").read_text())
    assert code == 0 and "control" not in fixed and not fixed["run"].endswith("[t-end]]")


def test_a_plan_written_before_the_controls_dimensions_runs_its_variants_with_the_papers_control():
    from autotune.pipeline.plan import _named
    sc = ScenarioRequest("heat2d", nodes=2, rtol=1e-6).scenario()
    assert _named("lc=ijl,comm=allgather", sc) == "lc=ijl,comm=allgather,norm=sweep,reduce=blocking"
    assert _named(PIPELINED, sc) == PIPELINED + CONTROLLED
    assert _named("lc=ijl,comm=allgather", ScenarioRequest("heat2d", nodes=2).scenario()) == "lc=ijl,comm=allgather"
    assert _named("no such variant", sc) == "no such variant"      # the run's check says why

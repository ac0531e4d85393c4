"""The Python API: the same requests and results as the command line, typed, silent, with fields
named as keywords (recorded kerncraft results: no analysis runs here)."""
import json

import pandas as pd
import pytest

import autotune
from autotune.results.rank import COLUMNS, RankResult
from autotune.results.sweep import FIELDS, SweepResult

from .conftest import GRIDLESS, HEAT_DEFAULT_DROPPED, HEAT_DEFAULT_EXCLUDED, free_factor, pool_size, ranked_size, run_cli


def test_rank_is_the_cli_json_as_a_typed_result(replay_store, capsys):
    r = autotune.rank("heat2d", nodes=8, store=replay_store)
    out, err = capsys.readouterr()
    assert out == "" and err == ""                             # the API prints nothing
    assert isinstance(r, RankResult) and r.analyses_run == 0
    code, cli, _ = run_cli(capsys, "rank", "--ivp", "heat2d", "--nodes", "8", "--format", "json",
                           "--store", replay_store)
    document = json.loads(cli)
    meta = document.pop("meta")           # the document says what made it; the rest is the result
    assert code == 0 and json.loads(json.dumps(r.to_dict())) == document
    assert meta["schema"] == "autotune/RankResult" and meta["machine"]["name"] == r.scenario.machine.name
    assert r.best.name == r.ordered[0].variant.name and r.best.predicted_s == min(
        v.predicted_s for v in r.ordered)
    df = r.to_frame()
    assert {e.item for e in r.excluded} == set(HEAT_DEFAULT_EXCLUDED)
    assert "exceed the last-level cache" in r.excluded["pipe=wavefront"].why
    assert isinstance(df, pd.DataFrame) and list(df.columns) == COLUMNS
    assert len(df) == ranked_size(excluded=HEAT_DEFAULT_DROPPED) == pool_size() - 4 - 24
    assert list(df["name"]) == [v["name"] for v in json.loads(cli)["variants"]]
    assert df["predicted_s"].is_monotonic_increasing and df["preselected"].dtype == bool
    # every floor: the step's (y in, the new y out; with write-allocate the new y read first: 3 of
    # 2 vectors) and the sweeps' (25 of 56 vectors written by s = 4, m = 6 read once more)
    b = r.bound
    assert b.wa_bytes == pytest.approx(b.bytes * 3 / 2) and r.bound_wa_s == b.wa_total_s >= r.bound_s
    assert b.sweep.wa_bytes == pytest.approx(b.sweep.bytes * 81 / 56) and b.sweep.bytes == pytest.approx(b.bytes * 28)
    assert b.sweep.wa_mem_s == pytest.approx(b.sweep.mem_s * 81 / 56)
    assert r.bound_sweep_wa_s == b.sweep.wa_total_s > r.bound_sweep_s == b.sweep.total_s > r.bound_s
    assert set(df["bound_wa_s"]) == {r.bound_wa_s} and json.loads(cli)["bound_wa_s"] == r.bound_wa_s
    assert json.loads(cli)["bound_sweep_s"] == r.bound_sweep_s


def test_sweep_scale_and_explain(replay_store):
    s = autotune.sweep(["heat2d", "inverterchain"], n="3e7:3.6e7:3log", nodes=[4, 8], store=replay_store)
    assert isinstance(s, SweepResult)
    df = s.to_frame()
    # heat2d's 6 scenarios (4 and 8 nodes, n about 3e7) leave the pipelined step out, inverterchain's
    # (access distance 1) keep it
    assert list(df.columns) == list(FIELDS)
    assert len(df) == 6 * ranked_size(excluded=HEAT_DEFAULT_DROPPED) + 6 * ranked_size("inverterchain", GRIDLESS)
    assert set(df.groupby(["ivp", "n", "nodes"])["rank"].min()) == {1}
    top = autotune.sweep(["heat2d", "inverterchain"], n="3e7:3.6e7:3log", nodes=[4, 8], top=5, selected_only=True,
                         store=replay_store).to_frame()
    assert len(top) == 2 * 3 * 2 * 5 and top["preselected"].all() and set(top["rank"]) == {1, 2, 3, 4, 5}
    sc = autotune.scale("heat2d", n=35808256, nodes="1:8", store=replay_store)
    f = sc.to_frame()
    assert sorted(set(f["nodes"])) == list(range(1, 9)) and sc.recommended.nodes in range(1, 9)
    assert f.loc[f["nodes"] == 1, "predicted_s"].min() == pytest.approx(sc.analysis.base_s)
    e = autotune.explain("heat2d", nodes=8, variant="lc=jil,comm=neighbour", store=replay_store)
    k = e.to_frame()
    assert e.to_dict()["name"] == "lc=jil,comm=neighbour" and len(k) == len(e.to_dict()["kernels"])
    assert k["seconds"].sum() + e.to_dict()["barrier_s"] == pytest.approx(e.to_dict()["node_s"])
    # a fused sweep explained as the loops it runs over each tile (model.loops); on another CPU
    # than the file's nothing is measured, and the part is priced at its loops' sum
    fused = "lc=jl-onepass,comm=neighbour,au=fused,pred=direct,rhs=onepass,fuse=rhs-lc,block=l1,store=nt"
    loops = autotune.explain("heat2d", nodes=8, variant=fused, store=replay_store).to_dict()["loops"]
    assert set(loops) == {f"{g}.heat2d.interior" for g in ("rhslcd", "rhslc", "rhsau")}
    corrector = loops["rhslc.heat2d.interior"][0]
    assert [lp["part"] for lp in corrector["loops"]] == ["rhs.heat2d.interior.onepass", "lc.onepass.jl",
                                                         "tile.stream_row"]
    assert corrector["sum_cy_per_cl"] > 0
    assert corrector["sum_cy_per_cl"] == pytest.approx(corrector["priced_cy_per_cl"])


def test_progress_goes_to_the_callback(cold_heat2d, session_store, capsys):
    calls = []
    r = autotune.rank("wave1d", nodes=8, store=session_store, progress=lambda *a: calls.append(a))
    assert capsys.readouterr() == ("", "")
    # one RHS part: one argument vector, all s in one sweep (the fused sweeps outside the pipelined
    # step are priced as their loops: those parts and the method's, model.loops); the pipelined
    # step's three levels with their rings in L2 (block=l1) and in L3 (block=l2), its first and
    # last levels streaming y from memory
    assert r.analyses_run == 2 + 3 * 2 + 2 and calls[0] == (0, 10, "") and calls[-1][:2] == (10, 10)
    assert calls[-1][2].startswith(tuple(f"{k}.wave1d.interior" for k in ("rhs", "rhslcd", "rhslc", "rhsau")))


@pytest.mark.parametrize("kwargs,field", [
    ({"threads": 99}, "threads"), ({"nodes": 2.5}, "nodes"), ({"nodes": 0}, "nodes"),
    ({"n": 1000}, "n"), ({"top": 0}, "top"), ({"comm": "sparse"}, "comm"), ({"within": -1}, "within"),
])
def test_bad_input_names_the_keyword(kwargs, field, replay_store):
    """The same field named whether it is a keyword of rank or of the request (comm is only there)."""
    with pytest.raises(autotune.InputError) as e:
        if "comm" in kwargs:
            autotune.rank(autotune.ScenarioRequest("heat2d", **kwargs), store=replay_store)
        else:
            autotune.rank("heat2d", store=replay_store, **kwargs)
    assert e.value.field == field and str(e.value).startswith(field) and "--" not in str(e.value)
    with pytest.raises(autotune.InputError) as e:
        autotune.rank(autotune.RankRequest.of("heat2d", **kwargs), store=replay_store)
    assert e.value.field == field and str(e.value).startswith(field) and "--" not in str(e.value)


def test_plan_file_errors_name_the_entry(tmp_path, capsys):
    f = tmp_path / "s.yaml"
    f.write_text("scenarios:\n  - {ivp: heat2d}\n  - {ivp: heat2d, nodes: 2.5}\n")
    code, _, err = run_cli(capsys, "plan", f, "--store", tmp_path / "s.sqlite", "--out", tmp_path / "p.json")
    assert code == 2 and f"{f}: field 'scenarios[1].nodes': expected integer or string or object, got float 2.5" in err
    f.write_text("scenarios:\n  - {ivp: heat2d}\n  - {ivp: heat2d, threads: 99}\n")
    code, _, err = run_cli(capsys, "plan", f, "--store", tmp_path / "s.sqlite", "--out", tmp_path / "p.json")
    assert code == 2 and f"{f}: field 'scenarios[1].threads': 99: machine" in err
    f.write_text("defaults: {steps: 3}\nscenarios:\n  - {ivp: heat2d, warmup: 3}\n")
    code, _, err = run_cli(capsys, "plan", f, "--store", tmp_path / "s.sqlite", "--out", tmp_path / "p.json")
    assert code == 2 and "'scenarios[0].warmup'" in err and "fewer warm-up steps" in err


def test_cli_names_flags_for_the_same_errors(tmp_path, capsys):
    code, _, err = run_cli(capsys, "rank", "--ivp", "heat2d", "--nodes", "2.5", "--store", tmp_path / "s")
    assert code == 2 and "--nodes 2.5: expected an integer" in err
    code, _, err = run_cli(capsys, "tune", "--ivp", "heat2d", "--steps", "2", "--warmup", "2",
                           "--store", tmp_path / "s")
    assert code == 2 and "--warmup 2: expected fewer warm-up steps than steps (2)" in err


def test_every_output_carries_the_floor_and_no_prediction_beats_it(replay_store):
    r = autotune.rank("heat2d", nodes=8, store=replay_store)
    d = r.to_dict()
    b = d["bound"]
    assert d["bound_s"] == r.bound_s == pytest.approx(max(b["mem_s"], b["core_s"]) + b["comm_s"])
    assert b["bytes"] == 2 * 8 * 35808256 // 8                 # the step's own: y in, the new y out
    assert b["sweep"]["bytes"] == 56 * 8 * 35808256 // 8      # a step of sweeps: 2ms+m+2 vectors of n/p
    # the 20 MiB L3 (2 MiB of L2) keeps that much of the 2 (9) live vectors of 35.8 MB at best
    assert b["level"] == "L2 3% + L3 26% + MEM 71%" and b["sweep"]["level"] == "L2 1% + L3 6% + MEM 93%"
    assert d["bound_sweep_s"] > d["bound_s"]
    for v in d["variants"]:
        assert v["bound_ratio"] == pytest.approx(v["predicted_s"] / d["bound_s"]) and v["bound_ratio"] > 1
    s = autotune.sweep(["heat2d", "inverterchain"], n="3e7:3.6e7:3log", nodes=[4, 8], store=replay_store)
    f = s.to_frame()
    assert (f["bound_ratio"] > 1).all()
    assert (f["bound_ratio"] == f["predicted_s"] / f["bound_s"]).all()
    e = autotune.explain("heat2d", nodes=8, variant="lc=jil,comm=neighbour", store=replay_store).to_dict()
    assert e["bound_s"] == d["bound_s"]


def test_variant_filter_keeps_the_matching_variants(replay_store, capsys):
    r = autotune.rank("heat2d", nodes=8, variant_filter="lc=jl-onepass|lj-onepass,comm=neighbour", store=replay_store)
    names = [v.name for v in r.ordered]
    # 2 LC forms x 8 (au, pred, rhs) x overlapped or not, and the 8 fused neighbour variants
    # (jl-onepass; block l1 or l2, overlapped or not, streaming stores or not), each with buf=pack or
    # ghost, times the free dimensions; and the pipelined one over strips (in row order they do
    # not pay here; a 2D grid's sweeps have no strips)
    assert len(names) == ((2 * 8 * 2 + 8) * 2 + 1) * free_factor() and all(n.startswith(("lc=jl-onepass,comm=neighbour", "lc=lj-onepass,comm=neighbour"))
                                        for n in names)
    paper = autotune.sweep("heat2d,inverterchain", nodes=[4, 8], variant_filter="paper", store=replay_store)
    f = paper.to_frame()
    orders = ("ijl", "ilj", "jil", "jli", "lij", "lji")
    assert len(f) == 2 * 2 * 12
    assert set(f["name"]) == {f"lc={o},comm={c}" for o in orders for c in ("allgather", "neighbour")}
    for text, message in (("tile=l1", "'tile=l1' is not key=value[|value...] or 'paper'"),
                          ("lc=jx", "lc=jx is not a value of lc"), ("comm=sparse", "no variant of heat2d matches")):
        code, _, err = run_cli(capsys, "rank", "--ivp", "heat2d", "--variant-filter", text, "--store", replay_store)
        assert code == 2 and "--variant-filter" in err and message in err
    code, _, err = run_cli(capsys, "tune", "--ivp", "heat2d", "--variants", "lc=jli,comm=neighbour",
                           "--variant-filter", "lc=jl-onepass", "--store", replay_store)
    assert code == 2 and "lc=jli,comm=neighbour: not among the variants --variant-filter keeps" in err


def test_explain_of_a_pipelined_step_shows_its_window(replay_store):
    """Over strips the window is a few of a strip's planes in each core's L2 (80 wide on the
    Haswell file's 256 KiB); in row order at the same size it would be a few rows of 5984."""
    strips = ("lc=jl-onepass,comm=neighbour,au=fused,pred=direct,buf=ghost,rhs=onepass,fuse=rhs-lc,block=l2,"
              "pipe=wavefront,traversal=strips")
    w = autotune.explain("heat2d", nodes=8, variant=strips, store=replay_store).to_dict()["window"]
    assert (w["order"], w["distance"], w["ring_components"], w["level"]) == ("traversal=strips", 93, 512, "L2")
    assert w["bytes_per_thread"] == 8 * (6 * 4 * 512 + 8 * 92) and w["edge_share"] == pytest.approx(12 / 80)
    assert w["ring_bytes_per_step"] == 2 * 6 * 4 * 8 * 35808256 // 8
    rows = autotune.explain("heat2d", nodes=1, threads=2, n=4000000, variant=strips.replace(",traversal=strips", ""),
                            store=replay_store).to_dict()["window"]
    assert (rows["order"], rows["distance"]) == ("rows", 2000) and "edge_share" not in rows
    assert "window" not in autotune.explain("heat2d", nodes=8, variant="lc=jil,comm=neighbour",
                                            store=replay_store).to_dict()

"""End to end through the command line, with real kerncraft analyses (cached per session)."""
import csv
import io
import json

import pytest

from autotune.codegen.parts import copy_part, fused_parts, rhs_parts
from autotune.specs.ivp import load_ivp
from autotune.specs.method import load_method
from autotune.specs.step import FUSED_GROUPS
from autotune.dimensions.lc import all_values as lc_values

from .conftest import HEAT_DEFAULT_DROPPED, HEAT_DEFAULT_EXCLUDED, ranked_size, run_cli
from .forms import parts

pytestmark = pytest.mark.kerncraft


def _distinct_parts(ivp_name):
    m = load_method("radauIIA7")
    names = {p.name for o in lc_values() for au in ("split", "fused") for pred in ("copy", "direct")
             for p in parts(m, o, au, pred)}
    # the predictor's copy has the code of the pack: one analysis serves both
    # the RHS of one argument vector, and of all s in one sweep (rhs=onepass)
    # and the fused sweeps (fuse=rhs-lc)
    ivp = load_ivp(ivp_name)
    return names - {copy_part(m).name}, ({p.name for st in (None, m.stages) for p in rhs_parts(ivp, st)}
                                         | {p.name for g in FUSED_GROUPS for p in fused_parts(ivp, m, g)})


def test_cold_rank_runs_each_part_once_and_follows_the_json_contract(cold_heat2d):
    d, err = cold_heat2d
    method_parts, rhs = _distinct_parts("heat2d")
    # at the default size every part is in one regime (memory): one analysis per part; the fused
    # sweeps outside the pipelined step are priced as their loops (model.loops), whose parts are
    # the method's and the RHS's; and the pipelined step's three levels over strips read their
    # rings in the L2 (the first and the last also stream y, the new y from memory): five more
    fused = {p.name for g in FUSED_GROUPS for p in fused_parts(load_ivp("heat2d"), load_method("radauIIA7"), g)}
    assert d["ecm"]["analyses_run"] == len(method_parts) + len(rhs - fused) + 5
    assert d["ecm"]["failures"] == {}
    assert "kerncraft [" in err and "left" in err          # progress went to stderr
    assert (d["ivp"], d["method"], d["machine"]) == ("heat2d", "radauIIA7", "haswell-ep-e5-2630v3")
    assert (d["n"], d["nodes"], d["threads"]) == (35808256, 8, 8)
    vs = d["variants"]
    ranked = ranked_size(excluded=HEAT_DEFAULT_DROPPED)      # the row-order pipelined step's windows do not fit here
    assert set(d["excluded_values"]) == set(HEAT_DEFAULT_EXCLUDED)
    assert len(vs) == ranked and [v["rank"] for v in vs] == list(range(1, ranked + 1))
    times = [v["predicted_s"] for v in vs]
    assert times == sorted(times) and all(t > 0 for t in times)
    for v in vs:
        if "overlap=halo" in v["name"]:   # part of the communication hides behind the interior
            assert v["node_s"] * (1 - 1e-12) <= v["predicted_s"] <= (v["node_s"] + v["comm_s"]) * (1 + 1e-12)
        else:
            assert v["predicted_s"] == pytest.approx(v["node_s"] + v["comm_s"])
        one = {"rhs.heat2d.interior"}        # the predictor's RHS; the corrector's sweeps follow rhs=
        fused = {f"{g}.heat2d.interior" for g in ("rhslcd", "rhslc", "rhsau")}   # fuse=rhs-lc: its own sweeps
        assert {k["name"] for k in v["kernels"]} & rhs == (fused if "fuse=rhs-lc" in v["name"] else
                                                          (rhs - fused) if "rhs=onepass" in v["name"] else one)
        assert sum(k["seconds"] for k in v["kernels"]) + v["barrier_s"] == pytest.approx(v["node_s"])
        for k in v["kernels"]:
            assert set(k) >= {"alpha", "sigma", "executions", "seconds"} and k["alpha"] > 0
    best = times[0]
    assert [v["preselected"] for v in vs] == [t <= best * 1.10 for t in times]
    assert d["comm_model"]["model"] == "datasheet" and any("data sheet" in n for n in d["notes"])
    # the neighbour exchange moves d doubles, the multi-broadcast the whole vector
    by = {v["name"]: v for v in vs}
    assert by["lc=jil,comm=neighbour"]["comm_s"] < by["lc=jil,comm=allgather"]["comm_s"] / 100


def test_warm_rank_runs_nothing_and_gives_the_same_numbers(cold_heat2d, session_store, capsys):
    code, out, err = run_cli(capsys, "rank", "--ivp", "heat2d", "--nodes", "8", "--format", "json",
                             "--store", session_store)
    d = json.loads(out)
    assert code == 0 and d["ecm"]["analyses_run"] == 0 and "kerncraft [" not in err
    assert [v["predicted_s"] for v in d["variants"]] == [v["predicted_s"] for v in cold_heat2d[0]["variants"]]


def test_another_size_in_the_same_regime_runs_nothing(cold_heat2d, session_store, capsys):
    code, out, _ = run_cli(capsys, "rank", "--ivp", "heat2d", "--nodes", "8", "--n", 6000 ** 2,
                           "--format", "json", "--store", session_store)
    d = json.loads(out)
    assert code == 0 and d["ecm"]["analyses_run"] == 0
    big = {v["name"]: v["node_s"] for v in d["variants"]}
    small = {v["name"]: v["node_s"] for v in cold_heat2d[0]["variants"]}
    assert all(big[k] > small[k] for k in big)   # more components, more time


def test_switching_ivp_runs_only_its_rhs(cold_heat2d, session_store, capsys):
    code, out, _ = run_cli(capsys, "rank", "--ivp", "inverterchain", "--nodes", "8", "--threads", "8",
                           "--n", 35808256, "--format", "json", "--store", session_store)
    d = json.loads(out)
    _, rhs = _distinct_parts("inverterchain")
    # two RHS forms (the fused sweeps' loops among them, model.loops); the pipelined step's three
    # levels (access distance 1: it pays) with their rings in L2 (block=l1) and in L3 (block=l2),
    # its first and last levels streaming y from memory
    assert code == 0 and d["ecm"]["analyses_run"] == len(rhs) - 3 + 3 * 2 + 2 == 10


def test_table_csv_and_explain(cold_heat2d, session_store, capsys):
    code, out, _ = run_cli(capsys, "rank", "--ivp", "heat2d", "--nodes", "8", "--top", "2",
                           "--store", session_store)
    assert code == 0
    assert "n = 35,808,256, nodes = 8, threads = 8" in out and "top 2" in out
    assert sum(1 for line in out.splitlines() if " * " in line) == 2
    code, out, _ = run_cli(capsys, "rank", "--ivp", "heat2d", "--nodes", "8", "--format", "csv",
                           "--store", session_store)
    rows = list(csv.DictReader(io.StringIO(out)))
    ranked = ranked_size(excluded=HEAT_DEFAULT_DROPPED)
    assert len(rows) == ranked and rows[0]["rank"] == "1" and float(rows[0]["predicted_s"]) > 0
    best = cold_heat2d[0]["variants"][0]["name"]
    code, out, _ = run_cli(capsys, "explain", "--ivp", "heat2d", "--nodes", "8", "--variant", best,
                           "--store", session_store)
    # the best: the pipelined step over strips, one barrier a step
    assert "traversal=strips" in best
    assert code == 0 and f"rank 1 of {ranked}" in out and "rhslc.heat2d.interior" in out and "barriers: 1 " in out
    code, out, _ = run_cli(capsys, "explain", "--ivp", "heat2d", "--nodes", "8", "--variant", best,
                           "--format", "json", "--store", session_store)
    d = json.loads(out)
    assert d["name"] == best and d["predicted_s"] == cold_heat2d[0]["variants"][0]["predicted_s"]
    # the bytes a step moves per part and interface, as kerncraft counted the lines: the paper
    # form's copy and RHS each read a vector and write one through the caches (its write-allocate
    # read and the write back): 3 vectors of the node's 35808256 / 8 components per execution
    code, out, _ = run_cli(capsys, "explain", "--ivp", "heat2d", "--nodes", "8", "--variant",
                           "lc=jl-onepass,comm=allgather", "--format", "json", "--store", session_store)
    traffic, vector = json.loads(out)["traffic_bytes"], 8 * 35808256 / 8
    assert set(traffic["predictor.copy"]) == {"L1-L2", "L2-L3", "L3-MEM"}
    assert traffic["predictor.copy"]["L3-MEM"] == pytest.approx(3 * 3 * vector)          # 3 executions
    assert traffic["rhs.heat2d.interior"]["L3-MEM"] == pytest.approx(25 * 3 * vector)    # 25 executions
    code, out, _ = run_cli(capsys, "explain", "--ivp", "heat2d", "--nodes", "8", "--variant",
                           "lc=jl-onepass,comm=allgather", "--store", session_store)
    table = out[out.index("predicted traffic, MB/step"):].splitlines()
    assert table[0].split()[-3:] == ["L1-L2", "L2-L3", "L3-MEM"]
    copy = next(line.split() for line in table if line.startswith("predictor.copy "))
    assert float(copy[-1]) == pytest.approx(3 * 3 * vector / 1e6, abs=0.01)
    assert any(line.startswith("all parts ") for line in table)


def test_a_rank_whose_every_variant_needs_a_part_kerncraft_cannot_analyse_fails(cold_heat2d, session_store, tmp_path,
                                                                                 capsys):
    """Every variant needs the RHS, which kerncraft cannot analyse (a conditional): no prediction,
    exit 1, one line naming the part and kerncraft's reason.  The failure is stored: a second
    rank says the same without running kerncraft again."""
    ivp = tmp_path / "clip.yaml"
    ivp.write_text("""name: clip
size_parameter: N
n: "N"
access_distance: "1"
default_n: 2000000
comm: [allgather, neighbour]
rhs:
  - name: interior
    components: "N"
    halo: "1"
    expr: "y[j-1] > 0.0 ? y[j-1] : y[j]"
""")
    argv = ["rank", "--ivp", ivp, "--nodes", "1", "--variant-filter", "paper", "--format", "json",
            "--store", session_store]
    code, out, err = run_cli(capsys, *argv)
    assert code == 1 and out == "" and "running" in err
    line = err.strip().splitlines()[-1]
    assert line.startswith("autotune: error: kerncraft: no variant could be predicted (clip, n = 2000000, 1 node, ")
    assert "kernel part rhs.clip.interior (" in line and "(log: " in line
    code, out, again = run_cli(capsys, *argv)
    assert code == 1 and again.strip() == line

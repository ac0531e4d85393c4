"""`calibrate --from-runs` end to end: measured runs in the store (made here by pricing with known
factors, so that the truth is known), the fit, its cross-validation, the machine file it writes,
and how rank and explain use and mark the learned factors."""
import json
import math
import shutil
from dataclasses import replace

import pytest

import autotune
from autotune.pipeline.runners import run_key_of
from autotune.specs.learned import Learned
from autotune.specs.machine import load_machine
from autotune.storage.store import Store
from autotune.tools.toolchain import package_version

from .conftest import run_cli

SCENARIOS = [("heat2d", 35808256, 4), ("heat2d", 35808256, 8), ("inverterchain", 36000000, 8)]
# (memory transfers with non-temporal stores are a parameter of their own: copy_nt)
TRUTH = {"LC/L3-MEM:copy": 0.75, "RHS/L3-MEM:copy": 0.75, "RHS/L3-MEM:copy_nt": 1.3, "LC/L2-L3": 1.25, "RHS/core": 0.8}


@pytest.fixture()
def measured(own_replay_store, tmp_path):
    """A copy of the reference machine and a store whose runs are what that machine with the TRUTH
    factors predicts (8 variants per scenario, every phase but COMM)."""
    path = tmp_path / "hw.yaml"
    shutil.copy(load_machine(None).path, path)
    truth = replace(load_machine(str(path)), learned=Learned(TRUTH, 1, 1, package_version("kerncraft"), "x"))
    store = Store(own_replay_store)
    from autotune.pipeline.predict import rank_scenario
    from autotune.model.preselect import Rule
    from autotune.specs.ivp import load_ivp
    from autotune.specs.method import load_method
    from autotune.specs.scenario import Scenario, applicable_variants
    from autotune.specs.stepvalues import step_form
    for ivp, n, nodes in SCENARIOS:
        sc = Scenario(load_ivp(ivp), load_method("radauIIA7"), truth, n, nodes, 8)
        variants, _ = applicable_variants(sc)
        # every 50th variant, and a fused one (the sweep timers)
        sample = variants[::50] + [next(v for v in variants if v.fuse == "rhs-lc" and v.pipe == "none")]
        ranked = rank_scenario(sc, list(dict.fromkeys(sample)), Rule("all"), store)
        assert ranked.analyses_run == 0
        for r in ranked.ordered[:8]:
            timers = step_form(sc.method, r.variant).timers     # fused sweeps timed one by one, as the solver does
            phases = {ph: {"measured_s": s} for ph, s in r.predicted_phases(timers).items()
                      if ph != "COMM" and s > 0}
            name = r.variant.name
            store.put_run(run_key_of("hw", ivp, "radauIIA7", n, nodes, 8, name, []), "hw", ivp, name,
                          r.predicted_s, {"name": name, "measured_s": r.predicted_s, "phases": phases, "n": n,
                                          "nodes": nodes, "threads": 8, "flags": []})
    store.close()
    return path, own_replay_store


def test_from_runs_fits_cross_validates_and_writes_the_machine(measured, capsys):
    path, store = measured
    before_rank = run_cli(capsys, "rank", "--ivp", "heat2d", "--nodes", "8", "--machine", path, "--store", store,
                          "--format", "json")[1]
    code, out, err = run_cli(capsys, "calibrate", "--machine", path, "--from-runs", "--store", store,
                             "--format", "json")
    assert code == 0, err
    res = json.loads(out)
    assert (res["runs"], res["scenarios"], res["folds"]) == (24, 3, "scenario")
    fitted = {p["name"]: p["fitted"] for p in res["parameters"]}
    assert fitted["LC/L3-MEM:copy"] < 0.95 and fitted["RHS/core"] < 0.95
    assert res["residual_after_pct"] < res["residual_before_pct"] / 2
    # what is left to fit on top of the node model, said in one line: the runs' step time against the
    # node model alone and with the factors, and the factors furthest from 1
    left = res["left_to_fit"]
    assert left["runs"] == 24 and left["median_abs_dev_with_factors_pct"] < left["median_abs_dev_node_model_pct"] / 2
    far = [abs(math.log(f["fitted"])) for f in left["largest_factors"]]
    assert far == sorted(far, reverse=True) and len(far) == 3
    assert left["largest_factors"][0]["off_pct"] == pytest.approx((left["largest_factors"][0]["fitted"] - 1) * 100)
    assert left["line"].startswith(f"left to fit: median |deviation| {left['median_abs_dev_node_model_pct']:.1f} % "
                                   f"with the node model alone, {left['median_abs_dev_with_factors_pct']:.1f} % "
                                   f"with the factors (24 runs); furthest from 1: {left['largest_factors'][0]['name']}")
    # every scenario predicted by the fit of the other two: nearer the truth than ECM alone
    assert len(res["cross_validation"]) == 3
    for row in res["cross_validation"]:
        assert row["runs"] == 8 and row["fitted_on"] == 2
        assert row["median_abs_dev_after_pct"] < row["median_abs_dev_before_pct"]
    assert "cross-validation [3/3]" in err
    # the file now carries them, with what they rest on; the node part is untouched
    m = load_machine(str(path))
    moved = {p: v for p, v in fitted.items() if abs(v - 1) > 1e-4}      # a factor left at 1 is not written
    assert m.learned.runs == 24 and m.learned.factors == pytest.approx(moved, rel=1e-5)
    assert m.kerncraft_digest == m.learned.node_digest
    # rank marks its predictions; --model ecm gives the very bytes of before
    code, out, _ = run_cli(capsys, "rank", "--ivp", "heat2d", "--nodes", "8", "--machine", path, "--store", store,
                           "--format", "json")
    d = json.loads(out)
    assert d["model"] == "ecm+learned (24 runs)" and any("ecm+learned" in n for n in d["notes"])
    assert d["variants"][0]["predicted_s"] != json.loads(before_rank)["variants"][0]["predicted_s"]
    again = run_cli(capsys, "rank", "--ivp", "heat2d", "--nodes", "8", "--machine", path, "--store", store,
                    "--format", "json", "--model", "ecm")[1]
    # the same bytes but the meta's line (its time, and the digest of the file, which now holds the factors)
    assert again.split("\n", 2)[2] == before_rank.split("\n", 2)[2] and '"meta"' in again.split("\n", 2)[1]
    table = run_cli(capsys, "rank", "--ivp", "heat2d", "--nodes", "8", "--machine", path, "--store", store)[1]
    assert "model ecm+learned (24 runs)" in table.splitlines()[0]
    # explain shows each part with the factors and by ECM alone
    e = autotune.explain("heat2d", nodes=8, variant="lc=jil,comm=neighbour", machine=str(path), store=store)
    rows = e.to_dict()["kernels"]
    assert all("ecm_s" in k for k in rows) and any(k["ecm_s"] != k["seconds"] for k in rows)
    alone = autotune.explain("heat2d", nodes=8, variant="lc=jil,comm=neighbour", machine=str(path), store=store,
                             model="ecm")
    assert [k["seconds"] for k in alone.to_dict()["kernels"]] == [k["ecm_s"] for k in rows]
    assert "ECM alone" in run_cli(capsys, "explain", "--ivp", "heat2d", "--nodes", "8", "--variant",
                                  "lc=jil,comm=neighbour", "--machine", path, "--store", store)[1]


def test_folds_holdout_dry_run_and_refusals(measured, capsys):
    path, store = measured
    text = path.read_text()
    code, out, err = run_cli(capsys, "calibrate", "--machine", path, "--from-runs", "--store", store, "--folds",
                             "ivp", "--holdout", "inverterchain", "--dry-run")
    assert code == 0, err
    assert "one ivp left out" in out and "held-out IVPs" in out and "inverterchain 8x8" in out
    assert "dry run: nothing written" in out and path.read_text() == text
    assert sum(line.startswith("left to fit: median |deviation| ") for line in out.splitlines()) == 1
    # the same from Python: one row per fold and held-out scenario
    res = autotune.learn(str(path), store=store, folds="size", holdout="inverterchain", dry_run=True)
    df = res.to_frame()
    assert list(df["kind"]) == ["cv", "held-out"] and df["runs"].tolist() == [16, 8]
    assert res.cross_validation[0].label == "n ~ 3.6e+07" and path.read_text() == text
    with pytest.raises(autotune.InputError) as e:
        autotune.learn(str(path), store=store, folds="nodes")
    assert e.value.field == "folds"
    # bad input: one line, exit 2
    code, _, err = run_cli(capsys, "calibrate", "--machine", path, "--from-runs", "--store", store,
                           "--holdout", "nosuch")
    assert code == 2 and "--holdout nosuch: unknown IVP" in err and len(err.strip().splitlines()) == 1
    code, _, err = run_cli(capsys, "calibrate", "--machine", path, "--holdout", "heat2d")
    assert code == 2 and "--holdout heat2d: only with --from-runs" in err
    code, _, err = run_cli(capsys, "calibrate", "--machine", "zen4-epyc-vm-2core", "--from-runs", "--store", store)
    assert code == 2 and "holds no measured runs of machine zen4-epyc-vm-2core" in err
    assert run_cli(capsys, "calibrate", "--machine", path, "--from-runs", "--store", store)[0] == 0
    # a fit on another kerncraft's analyses, or for another node part, is refused
    written = path.read_text()
    installed = package_version("kerncraft")
    assert f"\n    kerncraft: {installed}\n" in written
    path.write_text(written.replace(f"\n    kerncraft: {installed}\n", "\n    kerncraft: 0.0.1\n"))
    code, _, err = run_cli(capsys, "rank", "--ivp", "heat2d", "--nodes", "8", "--machine", path, "--store", store)
    assert code == 2 and "fitted on kerncraft 0.0.1's analyses" in err and "--model ecm" in err
    path.write_text(written.replace("clock: 2.4 GHz", "clock: 2.5 GHz", 1))
    assert "clock: 2.5 GHz" in path.read_text()
    code, _, err = run_cli(capsys, "rank", "--ivp", "heat2d", "--nodes", "8", "--machine", path, "--store", store)
    assert code == 2 and "fitted for another node part" in err and "--from-runs" in err


def test_fused_sweeps_are_observed_one_kind_at_a_time():
    """The solver times each fused sweep; the fit observes the predictor's, the correctors'
    (together) and the final sweep apart, each with the parts it runs, instead of one RHS phase
    in which the final sweep's own memory term could not be told from the correctors'."""
    from autotune.pipeline.learn import SWEEP_PHASES, sweep_seconds
    assert SWEEP_PHASES == ("sweep.pred", "sweep.corr", "sweep.final")
    phases = {"RHS": 0.05, "COMM": 0.001, "sweep.pred": 0.004, "sweep.corr1": 0.009, "sweep.corr2": 0.008,
              "sweep.corr3": 0.0095, "sweep.final": 0.006}
    got = sweep_seconds(phases)
    assert got == {"sweep.pred": 0.004, "sweep.corr": pytest.approx(0.0265), "sweep.final": 0.006}
    assert sweep_seconds({"RHS": 0.05, "LC": 0.02}) == {}


def test_the_fit_sees_each_kind_of_fused_sweep(measured):
    """On runs whose phases carry the sweep timers, each kind of fused sweep is an observation of
    its own, with only its own kernel group's parts as its work."""
    from autotune.pipeline.learn import price_groups, stored_runs
    from autotune.progress import SILENT
    from autotune.specs.step import SWEEP_TIMER
    path, store_path = measured
    machine = load_machine(str(path), "ecm")
    store = Store(store_path)
    runs, _ = stored_runs(store, machine)
    _, observed, _ = price_groups(runs, machine, store, SILENT)
    store.close()
    kinds = {o.phase for o in observed.obs}
    fused = [o for o in observed.obs if o.phase.startswith("sweep.")]
    assert fused and {"sweep.pred", "sweep.corr", "sweep.final"} <= kinds
    for o in fused:
        groups = {observed.units[k].kernel for k, _ in o.work}
        assert groups == {g for g, kind in SWEEP_TIMER.items() if o.phase == f"sweep.{kind}"}
    # a fused variant's RHS is observed through its sweeps only
    names = {o.variant for o in fused}
    assert not any(o.phase == "RHS" and o.variant in names for o in observed.obs)


def test_the_factors_furthest_from_one_come_first():
    from autotune.model.learnfit import largest
    got = largest({"RHS/core": 0.8, "LC/L2-L3": 1.3, "LC/L3-MEM:copy": 0.5, "clock": 1.0, "COPY/core": 1.1}, 3)
    assert got == [("LC/L3-MEM:copy", 0.5), ("LC/L2-L3", 1.3), ("RHS/core", 0.8)]    # 0.5 is as far as 2
    assert largest({"clock": 1.0}) == []


def test_a_run_with_a_measured_state_is_fitted_at_the_files_state():
    """tune priced the variant at its rounds' state; the fit sees its seconds brought to the file's."""
    from autotune.pipeline.learn import Run, at_file_state, runs_of_tune
    run = Run(("heat2d", "radauIIA7", 100, 1, 2), "v", 2.0, {"RHS": 1.5, "COMM": 0.5})
    got = at_file_state(run, {"total": 0.8, "phases": {"RHS": 0.75}})
    assert got.measured_s == pytest.approx(1.6) and got.phases == pytest.approx({"RHS": 1.125, "COMM": 0.4})
    assert at_file_state(run, None) is run
    tuned = {"ivp": "heat2d", "method": "radauIIA7", "n": 100, "nodes": 1, "threads": 2, "variants": [
        {"name": "v", "measured_s": 2.0, "phases": {"RHS": {"measured_s": 1.5}}, "state_factor": {"total": 0.5}},
        {"name": "w", "measured_s": 3.0, "phases": {}}]}
    assert [(r.variant, r.measured_s, r.phases) for r in runs_of_tune(tuned)] == [
        ("v", 1.0, {"RHS": 0.75}), ("w", 3.0, {})]

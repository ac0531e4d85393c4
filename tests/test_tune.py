"""`autotune tune` end to end: predictions from the session store, real builds and mpiexec runs."""
import json
import math

import pytest
from scipy.stats import kendalltau, spearmanr

from .conftest import ranked_size, run_cli


@pytest.fixture(autouse=True)
def _private_builds(private_builds):
    """Every test here builds and runs solvers."""


def test_tune_runs_the_preselection_and_compares(replay_store, tmp_path, capsys):
    code, out, err = run_cli(capsys, "tune", "--ivp", "heat2d", "--nodes", "2", "--threads", "1",
                             "--n", 1200 ** 2, "--top", "4", "--steps", "3", "--warmup", "1", "--reps", "2",
                             "--format", "json", "--store", replay_store, "--plot", tmp_path / "t.png")
    assert code == 0, err
    res = json.loads(out)
    assert (res["ivp"], res["n"], res["nodes"], res["threads"], res["reps"]) == ("heat2d", 1440000, 2, 1, 2)
    assert res["model"] == "ecm"        # the reference machine has no learned factors
    # every stored run says which scenario it measured, method included (calibrate --from-runs reads it)
    from autotune.storage.store import Store
    stored = [r for _, _, _, r in Store(replay_store).measured_runs("haswell-ep-e5-2630v3") if r["n"] == 1440000]
    assert stored and all(r["method"] == "radauIIA7" and r["model"] == "ecm" and r["phases"] for r in stored)
    rows = res["variants"]
    assert len(rows) == 4 and all(r["preselected"] for r in rows)
    for r in rows:
        assert r["measured_s"] > 0 and r["predicted_s"] > 0 and len(r["runs_s"]) == 2
        ph = r["phases"]   # the solver's phase timers against the model's kernel groups
        # a variant without the predictor's copy (pred=direct) has no COPY phase; a fused one's
        # sweeps are timed as RHS (the LC and the update ride in them), and each on its own: the
        # predictor's, the m - 1 corrector sweeps, the final one, against the parts it runs
        sweeps = {k: q for k, q in ph.items() if k.startswith("sweep.")}
        if "pipe=wavefront" in r["name"]:     # one sweep per thread runs every level: timed as RHS
            assert not sweeps and set(ph) == {"RHS", "COMM"}
        elif "fuse=rhs-lc" in r["name"]:
            assert list(sweeps) == ["sweep.pred"] + [f"sweep.corr{i}" for i in range(1, 6)] + ["sweep.final"]
            assert set(ph) - set(sweeps) == {"RHS", "COMM"}
            for key in ("measured_s", "predicted_s"):
                assert sum(q[key] for q in sweeps.values()) == pytest.approx(ph["RHS"][key], rel=1e-4)
            assert len({q["predicted_s"] for k, q in sweeps.items() if "corr" in k}) == 1
        else:
            assert not sweeps
            assert set(ph) == {"RHS", "LC", "COMM", "APPROX+UPDATE"} | ({"COPY"} if "pred=direct" not in r["name"] else set())
        # (an overlapped exchange may hide all of the predicted communication: COMM predicted 0)
        assert all(q["predicted_s"] >= 0 and q["measured_s"] > 0 for q in ph.values())
        assert sum(q["measured_s"] for k, q in ph.items() if k not in sweeps) <= 1.5 * r["measured_s"]
        assert r["deviation_pct"] == pytest.approx(100 * (r["predicted_s"] - r["measured_s"]) / r["measured_s"])
    s = res["summary"]
    # (a 2D grid's sweeps have no strips: they are not ranked)
    assert s["measured"] == 4 and s["skipped"] == ranked_size(excluded=("pipe=none+traversal=strips",)) - 4 and s[
        "skipped_predicted_cost_s"] > 0
    # the summary's statistics recomputed from the rows: correlation over four measured variants,
    # and the tie-aware top-1 loss (the mean loss over the variants tied for the predicted best)
    pred, meas = [r["predicted_s"] for r in rows], [r["measured_s"] for r in rows]
    rho = spearmanr(pred, meas).statistic
    assert s["spearman"] == (None if math.isnan(rho) else pytest.approx(rho))
    assert s["kendall"] == (None if math.isnan(rho) else pytest.approx(kendalltau(pred, meas).statistic))
    tied = [m for p, m in zip(pred, meas) if p <= min(pred) * (1 + 1e-9)]
    loss = sum(100 * (m - min(meas)) / min(meas) for m in tied) / len(tied)
    assert s["top1_loss_pct"] == pytest.approx(loss) and s["measured_best"] == rows[meas.index(min(meas))]["name"]
    assert sorted(r["rank_measured"] for r in rows) == [1, 2, 3, 4]
    assert set(s["phase_ratio"]) >= {"RHS", "COMM"}
    assert (tmp_path / "t.png").stat().st_size > 1000 and "build" in err and "run 2/2" in err
    # the reference machine's file was not made on this host: its figures are no reference for the state
    assert "machine state: not measured" in err and s["state"] is None and s["median_abs_deviation_state_pct"] is None
    # the replay runner: the same command reports the stored repetitions, builds, runs and stores nothing
    argv = ["tune", "--ivp", "heat2d", "--nodes", "2", "--threads", "1", "--n", 1200 ** 2, "--top", "4",
            "--steps", "3", "--warmup", "1", "--reps", "2", "--format", "json", "--store", replay_store]
    before = len(Store(replay_store).measured_runs("haswell-ep-e5-2630v3"))
    code, out, err = run_cli(capsys, *argv, "--replay")
    assert code == 0, err
    again = json.loads(out)
    assert [(r["name"], r["runs_s"], r["measured_s"]) for r in again["variants"]] == [
        (r["name"], r["runs_s"], r["measured_s"]) for r in rows]
    assert [{ph: q["measured_s"] for ph, q in r["phases"].items()} for r in again["variants"]] == [
        {ph: q["measured_s"] for ph, q in r["phases"].items()} for r in rows]
    assert again["summary"]["spearman"] == s["spearman"] and "build" not in err and "replay" in err
    assert len(Store(replay_store).measured_runs("haswell-ep-e5-2630v3")) == before
    # a variant the store does not hold, or more repetitions than it holds: refused in one line
    code, _, err = run_cli(capsys, *argv[:9], "--variants", "lc=lji,comm=neighbour", *argv[11:], "--replay")
    assert code == 2 and "--replay" in err and "lc=lji,comm=neighbour" in err and len(err.splitlines()) == 1
    code, _, err = run_cli(capsys, *argv[:16], "3", *argv[17:], "--replay")
    assert code == 2 and "holds 2 repetitions" in err and "--reps asks for 3" in err


def test_tune_reports_failures_per_variant(replay_store, capsys):
    """Every variant failed to build: the report says why per variant, and the exit status is 1
    (a tune that measured nothing must not pass for one in a script)."""
    code, out, _ = run_cli(capsys, "tune", "--ivp", "heat2d", "--nodes", "2", "--threads", "1", "--n", 1200 ** 2,
                           "--variants", "lc=jli,comm=neighbour;lc=ijl,comm=neighbour", "--steps", "2", "--warmup",
                           "0", "--reps", "1", "--flags", "-O3 -fno-such-flag-at-all", "--format", "json",
                           "--store", replay_store)
    res = json.loads(out)
    assert code == 1 and [r["measured_s"] for r in res["variants"]] == [None, None]
    assert all("compiling" in r["error"] and "log:" in r["error"] for r in res["variants"])
    assert res["summary"]["failed"] == 2 and res["summary"]["spearman"] is None


def test_tune_bad_input(capsys, tmp_path):
    code, _, err = run_cli(capsys, "tune", "--ivp", "heat2d", "--steps", "2", "--warmup", "2",
                           "--store", tmp_path / "s")
    assert code == 2 and "--warmup" in err


def test_tune_baseline_runs_the_papers_forms_beside_the_check(replay_store, capsys):
    """--baseline: the paper's twelve forms measured beside the pre-selection and the sample, marked
    as such, kept out of the sample's check; the best paper form is the fastest of them."""
    code, out, err = run_cli(capsys, "tune", "--ivp", "heat2d", "--nodes", "1", "--threads", "1",
                             "--n", 100 ** 2, "--top", "1", "--sample", "2", "--baseline", "--steps", "1",
                             "--warmup", "0", "--reps", "1", "--format", "json", "--store", replay_store)
    assert code == 0, err
    res = json.loads(out)
    rows = res["variants"]
    pre = [r for r in rows if r["preselected"]]
    sampled = [r for r in rows if r["sampled"]]
    paper = [r for r in rows if r["baseline"]]
    assert len(pre) == 1 and len(sampled) == 2 and not any(r["baseline"] for r in pre + sampled)
    names = {r["name"] for r in rows}
    forms = {f"lc={lc},comm={c}" for lc in ("ijl", "ilj", "jil", "jli", "lij", "lji")
             for c in ("allgather", "neighbour")}
    assert forms <= names and {r["name"] for r in paper} == forms - {r["name"] for r in pre + sampled}
    assert len(rows) == len(names) == 3 + len(paper)
    assert all(r["measured_s"] > 0 for r in rows)
    s = res["summary"]
    best = min((r for r in rows if r["name"] in forms), key=lambda r: r["measured_s"])
    assert s["best_paper_form"] == best["name"]
    assert s["check"]["preselected"] == 1 and s["check"]["sampled"] == 2    # the baseline is no part of it
    code, _, err = run_cli(capsys, "tune", "--plan", "p.json", "--baseline")
    assert code == 2 and "--baseline" in err and len(err.splitlines()) == 1

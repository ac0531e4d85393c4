"""tune's rounds on a shared machine: racing the repetitions (--reps auto), each variant priced
again at the state its rounds measured, noisy rounds set aside, the reference kernels for real."""
import json

import pytest

from autotune.progress import Callbacks, SILENT
from autotune.pipeline.runners import run_key_of
from autotune.pipeline.tunerounds import run_rounds
from autotune.request.run import RunOptions
from autotune.results.tune import TuneRow
from autotune.specs.runstate import Reference
from autotune.storage.store import Store

from .conftest import run_cli

# the step of sweeps' forms: memory-bound, so that a run at half the bandwidth prices them slower
# (the pipelined ones are ahead here, their data in cache)
SCENARIO = ["--ivp", "heat2d", "--nodes", "2", "--threads", "1", "--n", 1200 ** 2, "--top", "4",
            "--variant-filter", "pipe=none"]
RUNS = [1.00, 1.02, 0.99, 1.01, 1.00, 0.98, 1.03]        # seconds per step over 7 repetitions, times a speed


def _store_runs(store_path, speeds: dict[str, float], bandwidth_Bps: float, clock_hz: float) -> None:
    """Seven stored repetitions of each variant of the scenario, each with the state it ran in."""
    from autotune.specs.machine import load_machine
    machine = load_machine("haswell-ep-e5-2630v3")
    flags = RunOptions().plan(1.0, machine.isa_flags).flags
    store = Store(store_path)
    for i, (name, speed) in enumerate(speeds.items()):
        runs = [round(speed * t * 1e-2, 9) for t in RUNS[i:] + RUNS[:i]]    # each its own noise
        key = run_key_of(machine.name, "heat2d", "radauIIA7", 1440000, 2, 1, name, flags)
        store.put_run(key, machine.name, "heat2d", name, sorted(runs)[3], {
            "name": name, "runs_s": runs, "measured_s": sorted(runs)[3], "n": 1440000, "nodes": 2, "threads": 1,
            "runs_state": [{"bandwidth_Bps": bandwidth_Bps, "clock_hz": clock_hz}] * len(runs)})


def _top4(store) -> list[str]:
    code, out, err = run_cli_plain("rank", *SCENARIO, "--format", "json", "--store", store)
    return [v["name"] for v in json.loads(out)["variants"]][:4]


def run_cli_plain(*argv):
    import contextlib
    import io

    from autotune.cli.main import main
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def test_racing_drops_the_slower_variants_and_prices_each_at_its_state(own_replay_store, capsys):
    names = _top4(own_replay_store)
    # two clearly slower, and a near tie of the leader; the runs measured half the file's bandwidth
    from autotune.specs.machine import load_machine
    ref_bw = 8.54e9      # the reference file's triad in memory on one core
    clock = load_machine("haswell-ep-e5-2630v3").clock_hz
    _store_runs(own_replay_store, dict(zip(names, (1.0, 1.3, 1.6, 1.005))), ref_bw / 2, clock)
    code, out, err = run_cli(capsys, "tune", *SCENARIO, "--steps", "10", "--warmup", "2", "--reps", "auto",
                             "--replay", "--format", "json", "--store", own_replay_store)
    assert code == 0, err
    res = json.loads(out)
    rows = {r["name"]: r for r in res["variants"]}
    assert res["design"] == "auto"
    for slow in names[1:3]:
        assert rows[slow]["race"]["out"] == "slower" and rows[slow]["race"]["rounds"] == 3
        assert len(rows[slow]["runs_s"]) == 3 and rows[slow]["race"]["low"] > 1.0
    race = res["summary"]["race"]
    # the default budget is 3.5 runs a variant, 14: 12 runs in 3 rounds, then one more round of the two left
    assert race["best"] == names[0] and race["runs"] == 14 and race["stop"] == "the budget of 14 runs"
    assert not race["separated"] and sorted(race["left_in_race"]) == sorted([names[0], names[3]])
    low, high = race["best_interval_s"]
    assert low <= rows[names[0]]["measured_s"] <= high
    assert len(rows[names[0]]["runs_s"]) == len(rows[names[3]]["runs_s"]) == 4
    # each variant priced again at half the file's bandwidth: slower where memory-bound, never faster
    for r in rows.values():
        assert r["state"]["bandwidth_gbs"] == pytest.approx(ref_bw / 2e9)
        assert r["predicted_state_s"] >= r["predicted_s"]
        assert r["deviation_state_pct"] == pytest.approx(100 * (r["predicted_state_s"] - r["measured_s"]) / r["measured_s"])
        assert r["state_factor"]["total"] == pytest.approx(r["predicted_s"] / r["predicted_state_s"])
    assert any(r["predicted_state_s"] > 1.2 * r["predicted_s"] for r in rows.values())
    s = res["summary"]
    assert s["state"]["file_bandwidth_gbs"] == pytest.approx(ref_bw / 1e9) and s["bound_state_s"] >= s["bound_s"]
    assert s["state"]["file_spread_pct"] is None      # a file kerncraft's benchmark wrote keeps no spreads
    assert s["median_abs_deviation_state_pct"] is not None and s["intervals"]["top1_loss_pct"] is not None
    code, table, _ = run_cli(capsys, "tune", *SCENARIO, "--steps", "10", "--warmup", "2", "--reps", "auto",
                             "--replay", "--store", own_replay_store)
    assert "stopped after 4 rounds and 14 runs: the budget of 14 runs" in table and "state-adjusted" in table
    # a fixed design replays the stored repetitions as before
    code, out, _ = run_cli(capsys, "tune", *SCENARIO, "--steps", "10", "--warmup", "2", "--reps", "7", "--replay",
                           "--format", "json", "--store", own_replay_store)
    assert all(len(r["runs_s"]) == 7 for r in json.loads(out)["variants"])
    assert json.loads(out)["summary"]["race"] is None


class _Runs:
    """Scripted solver seconds per (variant, round): the logic of the rounds alone."""
    kind, stores, compiler = "replay", False, None

    def __init__(self, seconds):
        self.seconds, self.calls = seconds, []

    def run(self, name, rep):
        self.calls.append((name, rep))
        return {"median_step_s": self.seconds[name], "phases_s": {"RHS": self.seconds[name] / 2}}

    def available(self, name):
        return 1 << 30


class _Probes:
    """Scripted reference kernels: GB/s of each probe in turn."""

    def __init__(self, gbs):
        self.ref, self.gbs = Reference(1, 40e9, 1 << 26, 3e9), list(gbs)

    def measure(self):
        return {"bandwidth_Bps": self.gbs.pop(0) * 1e9, "clock_hz": 3e9, "seconds": 0.01}


def test_a_noisy_round_is_set_aside_and_taken_again_within_the_limit():
    from autotune.request.run import RunPlan
    from autotune.tools.launcher import parse_launcher
    plan = RunPlan(10, 2, 3, 1e-3, (), parse_launcher(None), 60.0)
    rows = {n: TuneRow(n) for n in ("a", "b")}
    phases = {"a": {}, "b": {}}
    done, runner = [], _Runs({"a": 1.0, "b": 2.0})
    # two before round 1, after it, after round 2 (strays), before and after its retake, after round 3
    log = run_rounds(["a", "b"], rows, phases, runner, plan, SILENT,
                     _Probes([40, 40.5, 41, 60, 40, 40, 39]), done.append, lambda _: None)
    assert log.noisy == [{"round": 1, "why": "bandwidth +47 %", "retaken": True}] and log.rounds == 3
    assert runner.calls == [("a", 0), ("b", 0), ("a", 1), ("b", 1), ("a", 1), ("b", 1), ("a", 2), ("b", 2)]
    assert rows["a"].runs_s == [1.0, 1.0, 1.0] and rows["a"].noisy_runs_s == [1.0]
    assert rows["a"].runs_round == [0, 1, 2] and len(phases["a"]["RHS"]) == 3
    # each run's state: the median of the probes around its round
    assert [s["bandwidth_Bps"] for s in rows["b"].runs_state] == [40.75e9, 40e9, 39.5e9]
    assert sorted(done) == ["a", "b"] and log.probe_s == pytest.approx(0.07)
    # with no retake left, a noisy round is kept and marked
    rows = {"a": TuneRow("a")}
    log = run_rounds(["a"], rows, {"a": {}}, _Runs({"a": 1.0}), plan, SILENT,
                     _Probes([40, 41, 40.5, 60, 40, 60, 40]), lambda _: None, lambda _: None)
    assert [n["retaken"] for n in log.noisy] == [True, False] and len(rows["a"].runs_s) == 3


def test_the_reference_kernels_measure_this_host(compiler):
    from autotune.pipeline.tunestate import Probe, state_of
    probe = Probe(Reference(1, 10e9, 1 << 24, 3e9), [], cc=compiler)
    try:
        got = [probe.measure() for _ in range(3)]
    finally:
        probe.close()
    assert all(1e9 < p["bandwidth_Bps"] < 2e12 and 0.3e9 < p["clock_hz"] < 8e9 and p["seconds"] < 30 for p in got)
    st = state_of(probe.ref, got)
    assert st.file_bandwidth_Bps == 10e9 and min(p["clock_hz"] for p in got) <= st.clock_hz <= max(
        p["clock_hz"] for p in got)
    assert probe.seconds == pytest.approx(sum(p["seconds"] for p in got))


def test_racing_options_are_checked_before_anything_runs(capsys):
    code, _, err = run_cli(capsys, "tune", *SCENARIO, "--reps", "7", "--budget", "40")
    assert code == 2 and "--budget" in err and "--reps auto" in err and len(err.strip().splitlines()) == 1
    code, _, err = run_cli(capsys, "tune", *SCENARIO, "--reps", "auto", "--budget", "soon")
    assert code == 2 and "soon" in err and "90s" in err
    with pytest.raises(SystemExit) as e:          # argparse's own
        run_cli(capsys, "tune", *SCENARIO, "--reps", "fast")
    assert e.value.code == 2 and "expected an integer or 'auto', got 'fast'" in capsys.readouterr().err
    assert RunOptions(reps="auto", budget="90s").plan(1.0).race.budget_s == 90.0
    assert RunOptions(reps="auto", budget=40).plan(1.0).race.budget_runs == 40


def test_a_failing_probe_ends_the_probing_not_the_run():
    from autotune.errors import ToolError
    from autotune.request.run import RunPlan
    from autotune.tools.launcher import parse_launcher

    class Failing(_Probes):
        def measure(self):
            if len(self.gbs) < 3:
                raise ToolError("reference kernel stream failed: killed")
            return super().measure()

    said = []
    rows = {"a": TuneRow("a")}
    log = run_rounds(["a"], rows, {"a": {}}, _Runs({"a": 1.0}), RunPlan(10, 2, 3, 1e-3, (), parse_launcher(None), 60.0),
                     Callbacks(say=said.append), Failing([40, 40, 40, 40, 40]), lambda _: None, lambda _: None)
    assert rows["a"].runs_s == [1.0, 1.0, 1.0] and len(log.probes) == 3
    assert rows["a"].runs_state[0]["bandwidth_Bps"] == 40e9 and rows["a"].runs_state[1:] == [None, None]
    assert sum("reference kernels failed" in line for line in said) == 1


class _Stolen(_Runs):
    """Scripted runs with the host's steal share of each run in turn."""

    def __init__(self, seconds, steal):
        super().__init__(seconds)
        self.steal = list(steal)

    def run(self, name, rep):
        return dict(super().run(name, rep), steal_pct=self.steal.pop(0), wall_over_cpu=1.02)


def test_a_run_that_lost_its_cpu_to_steal_is_run_again():
    """A run whose share of the host's CPU time taken by the hypervisor is above STEAL_MAX_PCT is
    set aside and run again at once (the round's other runs stand), within the run's retakes; the
    steal of every run kept is in its row and in the summary."""
    from autotune.model.state import STEAL_MAX_PCT
    from autotune.pipeline.tunesummary import _steal
    from autotune.request.run import RunPlan
    from autotune.tools.launcher import parse_launcher
    plan = RunPlan(10, 2, 3, 1e-3, (), parse_launcher(None), 60.0)
    rows = {n: TuneRow(n) for n in ("a", "b")}
    done, said = [], []
    runner = _Stolen({"a": 1.0, "b": 2.0}, [0.1, 0.2, 0.0, STEAL_MAX_PCT + 3, 0.3, 0.1, 0.2])
    log = run_rounds(["a", "b"], rows, {"a": {}, "b": {}}, runner, plan, Callbacks(say=said.append), None,
                     done.append, lambda _: None)
    assert runner.calls == [("a", 0), ("b", 0), ("a", 1), ("b", 1), ("b", 1), ("a", 2), ("b", 2)]
    assert log.noisy == [{"round": 1, "why": "steal 8.0 % of the host's CPU time", "retaken": True, "variant": "b"}]
    assert rows["b"].runs_steal_pct == [0.2, 0.3, 0.2] and rows["b"].noisy_runs_s == [2.0]
    assert rows["a"].runs_steal_pct == [0.1, 0.0, 0.1] and rows["a"].runs_wall_over_cpu == [1.02] * 3
    assert sorted(done) == ["a", "b"] and any("b: steal 8.0 %" in line for line in said)
    got = _steal(list(rows.values()), log)
    assert got["runs"] == 6 and got["max_pct"] == 0.3 and got["runs_set_aside"] == 1 and got["runs_kept_over"] == 0
    # no retake left (one in three of 3 rounds): kept, and marked
    rows = {"a": TuneRow("a")}
    log = run_rounds(["a"], rows, {"a": {}}, _Stolen({"a": 1.0}, [20.0, 20.0, 0.0, 0.0]), plan, SILENT, None,
                     lambda _: None, lambda _: None)
    assert [n["retaken"] for n in log.noisy] == [True, False] and rows["a"].runs_steal_pct == [20.0, 0.0, 0.0]


def test_the_steal_of_a_run_on_this_host():
    """/proc/stat's steal and the children's CPU time around a real child process."""
    import subprocess
    import sys
    from autotune.tools import cpustat
    a = cpustat.sample()
    subprocess.run([sys.executable, "-c", "x = 0\nfor i in range(3_000_000): x += i"], check=True)
    got = cpustat.between(a, cpustat.sample(), 1)
    if a.ticks is None:
        assert got["steal_pct"] is None
    else:
        assert 0.0 <= got["steal_pct"] <= 100.0
    assert 0.5 < got["wall_over_cpu"] < 5.0      # one busy core: its wall time about its CPU time

"""Step-size control (specs.control, docs/method.md "Step-size control"): the generated solvers
with an error estimate and a controller take the same steps in every form, on 1 to 3 ranks and
threads (compiled and run); the tolerances and methods it refuses; the fixed step unchanged."""
import json

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from autotune.codegen.solver import solver_source
from autotune.errors import InputError
from autotune.request.run import RunOptions
from autotune.specs.control import Control, control_of, estimate_order, render_context
from autotune.specs.ivp import load_ivp
from autotune.specs.machine import load_machine
from autotune.specs.method import load_method
from autotune.specs.numpyrhs import numpy_rhs
from autotune.specs.variants import fixed_twin, parse_variant, spaces
from autotune.tools.build import build, run
from autotune.tools.launcher import parse_launcher

LAUNCHER = parse_launcher(None)
FLAGS = RunOptions().plan(1.0).flags
METHOD = load_method("radauIIA7")
CONTROL = Control(1e-6, 1e-6)
FAST = "lc=jl-onepass,comm={},au=fused,pred=direct,buf=ghost,rhs=onepass"
FORMS = [    # each with the norm where it is summed and the reduction (docs/method.md, "Step-size control")
    "lc=ijl,comm=allgather,norm=sweep,reduce=blocking",                     # the paper's form
    "lc=jli,comm=neighbour,buf=pack,norm=fused,reduce=nonblocking",         # APPROX, then UPDATE with the norm
    FAST.format("neighbour") + ",overlap=halo,norm=fused,reduce=blocking",  # APPROX+UPDATE with the norm
    FAST.format("allgather") + ",fuse=rhs-lc,block=l1,store=nt,norm=fused,reduce=nonblocking",   # the fused sweeps
    FAST.format("neighbour") + ",fuse=rhs-lc,block=l1,overlap=halo,norm=sweep,reduce=nonblocking",
    FAST.format("neighbour") + ",fuse=rhs-lc,block=l2,pipe=wavefront,norm=fused,reduce=blocking",   # pipelined
]




def _controlled(ivp, variant, n, steps, h, procs, threads, path, t_end, machine=None, exe=None, control=CONTROL):
    exe = exe or build(solver_source(ivp, METHOD, variant, n, machine, control=control), FLAGS)
    res = run(exe, LAUNCHER, procs, threads, n, ivp.size_value(n), steps, h, 0, path, t_end=t_end)
    return res, np.fromfile(path)


@pytest.fixture(autouse=True)
def _private_builds(private_builds):
    """The tests that build solvers build their own."""


def _same_steps(ivp, forms, n, h, t_end, tmp_path, machine=None, configs=((1, 1), (1, 2), (2, 1), (3, 1))):
    runs = {}
    for form in forms:
        v = parse_variant(form, spaces(ivp, True))
        exe = build(solver_source(ivp, METHOD, v, n, machine, control=CONTROL), FLAGS)
        for procs, threads in configs:
            runs[(form, procs, threads)] = _controlled(ivp, v, n, 10000, h, procs, threads,
                                                       tmp_path / "y.bin", t_end, machine, exe)
    (ref, yref), = [r for k, r in runs.items() if k[1:] == (1, 1) and k[0] == forms[0]]
    c = ref["control"]
    assert c["accepted"] > 10 and c["rejected"] >= 1 and ref["t"] == t_end, c   # the controller was at work
    assert c["h_min"] < c["h_max"]
    for key, (res, y) in runs.items():
        got = res["control"]
        assert (got["accepted"], got["rejected"], res["t"]) == (c["accepted"], c["rejected"], t_end), key
        # h to rounding: the estimate is the difference of two vectors that agree to about the
        # tolerance, so the forms' orders of summation show in it (and in h) at about 1e-9
        for k in ("h_min", "h_median", "h_max", "h_next"):
            assert got[k] == pytest.approx(c[k], rel=1e-7), (key, k)
        assert np.max(np.abs(y - yref)) <= 1e-10 * np.max(np.abs(yref)), key


def test_the_forms_cover_every_value_of_the_control():
    """The forms below take every value of each step-control dimension (norm, reduce)."""
    from autotune.specs.variants import DIMENSIONS
    ivp = load_ivp("heat2d")
    taken = {(k, getattr(parse_variant(f, spaces(ivp, True)), k)) for f in FORMS for k in DIMENSIONS}
    assert {(k, x) for k, d in DIMENSIONS.items() if d.control for x in d.values_for(True)} <= taken


def test_every_form_takes_the_paper_forms_steps(tmp_path):
    """The paper's form, packed and overlapped exchanges, the fused sweeps with streamed stores and
    the pipelined step (whose last level sums the error), the norm in a sweep of its own or in the
    sweep that writes the new y, reduced blocking or not: the same accepted steps, the same
    rejections, the same h to rounding and the same solution at 1 x 1, 1 x 2, 2 x 1 and 3 x 1."""
    _same_steps(load_ivp("heat2d"), FORMS, 1024, 1e-7, 1e-2, tmp_path)


def test_the_pipelined_step_over_strips_and_a_stored_ivp_take_the_same_steps(tmp_path):
    """traversal=strips (the Haswell file's strips of heat2d at n = 40000) and string-row stored
    interleaved: each its forms' steps."""
    haswell = load_machine("haswell-ep-e5-2630v3")
    strips = FAST.format("neighbour") + ",fuse=rhs-lc,block=l2,pipe=wavefront,traversal=strips"
    _same_steps(load_ivp("heat2d"), [FORMS[0], strips], 40000, 1e-8, 1e-4, tmp_path, haswell,
                configs=((1, 1), (1, 2), (2, 1)))
    _same_steps(load_ivp("string-row"), ["lc=ijl,comm=allgather", "lc=ijl,comm=allgather,blocks=interleaved,norm=fused"],
                200, 1e-6, 0.5, tmp_path, configs=((1, 1), (2, 1), (3, 1)))


def test_the_error_at_the_end_follows_the_tolerance(tmp_path):
    """inverterchain to t = 2 against scipy's Radau at rtol 1e-12: the end-time error within 10x
    the tolerance at 1e-5 and 1e-8, the tighter one taking more steps and reaching a smaller error."""
    ivp, n, t_end = load_ivp("inverterchain"), 40, 2.0
    v = parse_variant("lc=ijl,comm=allgather", spaces(ivp, True))
    y0 = _controlled(ivp, v, n, 0, 0.01, 1, 1, tmp_path / "y0.bin", t_end)[1]
    ref = solve_ivp(lambda t, y: numpy_rhs(ivp, n, y), (0, t_end), y0, method="Radau", rtol=1e-12, atol=1e-12).y[:, -1]
    seen = []
    for tol in (1e-5, 1e-8):
        res, y = _controlled(ivp, v, n, 100000, 1e-3, 1, 1, tmp_path / "y.bin", t_end, control=Control(tol, tol))
        err = np.sqrt(np.mean(((y - ref) / (tol + tol * np.abs(ref))) ** 2))
        seen.append((tol, err, res["control"]["accepted"]))
        assert res["t"] == t_end and err <= 10, seen
    assert seen[1][2] > seen[0][2] and seen[1][1] * 1e-8 < seen[0][1] * 1e-5, seen


def test_control_refuses_what_it_cannot_control():
    assert control_of(None, None) is None
    assert control_of(1e-6, None) == Control(1e-6, 1e-6) and control_of(None, 1e-9) == Control(1e-9, 1e-9)
    for bad in (0.0, -1e-6, 1.0, float("nan"), True, "1e-6"):
        with pytest.raises(InputError, match="tolerance"):
            Control(bad, 1e-6)
    assert estimate_order(METHOD) == METHOD.iterations == 6
    assert estimate_order(load_method("lobattoIIIC6")) == 5
    with pytest.raises(InputError, match="stiffly accurate"):
        estimate_order(load_method("gauss6"))
    ctx = render_context(CONTROL, METHOD)
    assert ctx["exponent"] == 7 and float(ctx["rtol"]) == 1e-6 and render_context(None, METHOD) is None


def test_a_fixed_step_solver_has_no_control_code():
    """Without tolerances nothing of the control is in the source (the fixed-step solvers are the
    ones they were: docs/method.md)."""
    ivp = load_ivp("heat2d")
    for form in FORMS:
        v = parse_variant(form, spaces(ivp, True))
        twin = fixed_twin(v)
        fixed, controlled = solver_source(ivp, METHOD, twin, 1024), solver_source(ivp, METHOD, v, 1024, control=CONTROL)
        assert not any(word in fixed for word in ("RTOL", "v_err", "ctl_", "CTL_", "control"))
        assert "v_err" in controlled and "ctl_step" in controlled
        lines = controlled.replace(v.name, twin.name).splitlines()
        missing = [ln for ln in fixed.splitlines() if ln not in lines and ln.strip() not in ("else", "")]
        # what the control replaces: the module's table (v_err added), the usage line, the output
        # file, the step's call and time, the count of timed steps; where the norm is fused, the
        # sweeps that write the new y (their body, APPROX+UPDATE's arguments, their calls)
        assert len(missing) <= 6 + (4 if "norm=fused" in form else 0), missing


def test_tune_and_the_online_solver_run_controlled(own_replay_store, capsys):
    """tune --rtol builds the controlled solvers, reports per accepted step and per unit of
    simulated time, and adds its runs' steps to the store, where the next ranking reads the rate;
    the online solver's trial compares its candidates per accepted step and reports its steps."""
    from autotune.pipeline.controlrate import counts
    from autotune.request.scenario import ScenarioRequest
    from autotune.storage.store import Store

    from .conftest import run_cli
    args = ["--ivp", "heat2d", "--nodes", "2", "--threads", "1", "--n", 1200 ** 2, "--steps", "6", "--warmup", "1",
            "--h", "1e-9", "--rtol", "1e-6", "--store", own_replay_store]
    code, out, err = run_cli(capsys, "tune", *args, "--top", "2", "--reps", "2", "--format", "json")
    assert code == 0, err
    rows = json.loads(out)["variants"]
    assert len(rows) == 2
    for r in rows:
        c = r["control"]
        assert c["accepted"] == 2 * 6 and c["rejected"] >= 0 and len(c["runs_s_per_time"]) == 2
        assert c["s_per_time"] > r["measured_s"] / 1e-6     # every step is shorter than a unit's millionth
    sc = ScenarioRequest("heat2d", n=1200 ** 2, nodes=2, threads=1, rtol=1e-6).scenario()
    store = Store(own_replay_store)
    try:
        accepted, rejected = counts(sc, store)
    finally:
        store.close()
    # the rate's counts are the timed steps' (after the warm-up step, as the controller finds its h)
    assert all(r["control"]["timed_accepted"] == 2 * 5 for r in rows)
    assert accepted == 2 * 2 * 5 and rejected == sum(r["control"]["timed_rejected"] for r in rows)
    code, out, err = run_cli(capsys, "tune", *args, "--top", "2", "--online", "--format", "json")
    assert code == 0, err
    res = json.loads(out)
    c = res["control"]
    assert c["accepted"] == 6 and c["rtol"] == 1e-6 and c["h_min"] == 1e-9 and c["t"] > 6e-9


def test_a_plan_carries_the_tolerances_to_its_runs(own_replay_store, tmp_path, capsys):
    """A plan's scenario with rtol: planned at seconds per accepted step, run controlled (the rows'
    steps), and resumed from the store under its tolerances."""
    from .conftest import run_cli
    (tmp_path / "s.yaml").write_text("scenarios:\n  - {ivp: heat2d, n: 1440000, nodes: 2, threads: 1, top: 1, "
                                     "steps: 4, h: 1.0e-9, rtol: 1.0e-6}\n"
                                     "  - {ivp: heat2d, n: 1440000, nodes: 2, threads: 1, top: 1}\n")
    plan_file = tmp_path / "plan.json"
    code, _, err = run_cli(capsys, "plan", tmp_path / "s.yaml", "--out", plan_file, "--store", own_replay_store)
    assert code == 0, err
    ctl, fixed = json.loads(plan_file.read_text())["scenarios"]
    assert ctl["control"] == {"rtol": 1e-6, "atol": 1e-6} and fixed["control"] is None
    assert ctl["variants"][0]["predicted_s"] > fixed["variants"][0]["predicted_s"]   # the control's work
    code, out, err = run_cli(capsys, "tune", "--plan", plan_file, "--format", "json", "--store", own_replay_store)
    assert code == 0, err
    ran = json.loads(out)["scenarios"]
    row = ran[0]["variants"][0]
    assert row["control"]["accepted"] == 4 * len(row["runs_s"]) and ran[1]["variants"][0]["control"] is None
    code, out, err = run_cli(capsys, "tune", "--plan", plan_file, "--format", "json", "--store", own_replay_store)
    assert json.loads(out)["totals"]["reused"] == 2      # each found under its own key
    bad = tmp_path / "bad.yaml"
    bad.write_text("scenarios:\n  - {ivp: heat2d, nodes: 2, rtol: 2}\n")
    code, _, err = run_cli(capsys, "plan", bad, "--out", tmp_path / "p.json")
    assert code == 2 and "rtol" in err and "between 0 and 1" in err

"""The learned node model: factors on kerncraft's ECM terms (model.learned), their fit to
measured phases (model.learnfit), and how a machine file carries them (specs.learned)."""
import json
import math
from pathlib import Path

import pytest

from autotune.errors import InputError
from autotune.model.learned import adjust, parameters_of, scaling, term_parameter, term_parameters
from autotune.model.learnfit import Observation, Pricer, Unit, fit
from autotune.specs.learned import valid_parameter
from autotune.specs.loading import parse_yaml
from autotune.specs.machine import load_machine, parse_machine

RECORDED = json.loads((Path(__file__).with_name("data") / "ecm_results.json").read_text())
CORES = {"haswell-ep-e5-2630v3": 8, "zen4-epyc-vm-2core": 2, "localhost": 2}


def _ok(machine=None):
    return [r for r in RECORDED if r["result"].get("ok") and r["result"].get("terms")
            and (machine is None or r["machine"] == machine)]


def test_factors_of_one_give_every_recorded_kerncraft_result_back():
    """kerncraft's combination (max of the overlapping terms and the sum of the others) and its
    saturation rule, rebuilt from the stored terms, reproduce all its recorded results."""
    checked = 0
    for rec in _ok():
        r = rec["result"]
        a = adjust(r, "RHS", {}, CORES[rec["machine"]], len(r["scaling_cy_per_cl"]))
        assert a["cy_per_cl"] == pytest.approx(r["cy_per_cl"], rel=1e-12), rec["part"]
        assert a["scaling_cy_per_cl"] == pytest.approx(r["scaling_cy_per_cl"], rel=1e-12), rec["part"]
        assert a["saturation_cores"] == float(r["saturation_cores"])
        checked += 1
    assert checked > 250


def test_a_factor_scales_its_term_and_the_structure_recombines():
    # a non-overlapping (Haswell) memory-bound part: T = T_RegL1 + T_L1L2 + T_L2L3 + T_L3MEM
    rec = next(r for r in _ok("haswell-ep-e5-2630v3") if r["regime"] == "MEM" and r["result"]["terms"]["T_L3MEM"] > 0)
    r = rec["result"]
    t = r["terms"]
    bw = r["memory_bandwidth_kernel"]
    a = adjust(r, "LC", {f"LC/L3-MEM:{bw}": 0.5, "LC/core": 2.0}, 8, 8)
    serial = t["T_RegL1"] * 2.0 + t["T_L1L2"] + t["T_L2L3"] + t["T_L3MEM"] * 0.5
    assert a["terms"]["T_L3MEM"] == t["T_L3MEM"] * 0.5
    assert a["cy_per_cl"] == pytest.approx(max(serial, t["T_comp (overlapping)"] * 2.0))
    assert a["t_comp"] == r["t_comp"] * 2.0
    # the clock: every term counted in core cycles, not the memory transfer
    c = adjust(r, "LC", {"clock": 0.5}, 8, 8)["terms"]
    assert c["T_L3MEM"] == t["T_L3MEM"] and c["T_L2L3"] == t["T_L2L3"] * 0.5 and c["T_RegL1"] == t["T_RegL1"] * 0.5
    # another kernel's memory factor, or another class's in-core factor, changes nothing
    same = adjust(r, "LC", {"LC/L3-MEM:nokernel": 0.5, f"RHS/L3-MEM:{bw}": 0.5, "RHS/core": 3.0}, 8, 8)
    assert same["cy_per_cl"] == pytest.approx(r["cy_per_cl"], rel=1e-12)


def test_kerncraft_saturation_rule_by_hand():
    # T_ECM 10, T_MEM 4: core c demands c * 4 against 10 + u(c-1) (c-1) 4 / 2; utilisation
    # 0.4, 8 / 10.8, 12 / 12.96, and at 4 cores 16 > 15.56: saturated
    sat, curve = scaling(10.0, 4.0, 4, 5)
    u2 = 8 / 10.8
    u3 = 12 / (10 + u2 * 2 * 4 / 2)
    assert sat == 4
    assert curve[:4] == pytest.approx([10.0, 4.0 / u2, 4.0 / u3, 4.0])
    assert curve[4] == pytest.approx(4.0 * 4 / 5)      # beyond the NUMA domain: its cores' share
    # in-cache: no memory term, perfect scaling
    sat, curve = scaling(6.0, 0.0, 2, 3)
    assert math.isinf(sat) and curve == [6.0, 3.0, 2.0]


def test_parameter_names():
    assert term_parameter("T_comp (overlapping)", "RHSLC") == "RHS/core"
    assert term_parameter("T_RegL1", "UPDATE") == "APPROX+UPDATE/core"
    assert term_parameter("T_L2L3 (overlapping)", "LC") == "LC/L2-L3"
    assert term_parameter("T_L3MEM", "PACK", "triad") == "COPY/L3-MEM:triad"
    assert term_parameter("T_L3MEM", "LC") == "LC/L3-MEM"
    assert term_parameter("T_penalty", "LC") is None
    # the clock scales what is counted in core cycles, not the memory transfer
    assert term_parameters("T_L2L3 (overlapping)", "LC") == ("LC/L2-L3", "clock")
    assert term_parameters("T_comp (overlapping)", "RHS") == ("RHS/core", "clock")
    assert term_parameters("T_L3MEM", "LC", "copy") == ("LC/L3-MEM:copy",)
    assert term_parameters("T_penalty", "LC") == ()
    for good in ("LC/L1-L2", "RHS/L3-MEM", "LC/L3-MEM:copy", "RHS/core", "COPY/core", "clock"):
        assert valid_parameter(good)
    for bad in ("L3-MEM", "LC/L3MEM", "FOO/core", "RHS/MEM", "LC/L3-MEM:", "core:RHS", ""):
        assert not valid_parameter(bad)


def _units(machine="haswell-ep-e5-2630v3"):
    """Units over the recorded memory-bound results of one machine, as LC parts at 1 and 4 threads."""
    recs = [r for r in _ok(machine) if r["regime"] == "MEM"]
    units = []
    for rec in recs:
        for threads in (1, 4):
            units.append(Unit(rec["result"], "LC" if rec["part"].startswith("lc") else "RHS", 2.4e9, threads, 1, 8, 8))
    return units


def _observations(pricer, truth, noise=None):
    """One observation per unit, measured as the model with `truth` prices it."""
    obs = []
    for k in range(len(pricer.units)):
        o = Observation(f"s{k % 3}", f"v{k}", "LC", 1.0, ((k, 1e6),))
        m = pricer.predict([o], truth)[0] * (noise(k) if noise else 1.0)
        obs.append(Observation(o.group, o.variant, o.phase, m, o.work))
    return obs


def test_fit_recovers_the_factors_that_made_the_measurements():
    pricer = Pricer(_units())
    truth = {p: 0.7 for u in pricer.units for p in parameters_of(u.result, u.kernel) if "/L3-MEM:" in p}
    truth["RHS/core"] = 1.3
    obs = _observations(pricer, truth)
    # without shrinkage the fit finds the truth exactly: every term scaled as the truth scales it
    # (the clock and a class's in-core factor act on the same terms; only their product shows)
    exact = fit(obs, pricer, prior_runs=1e-3)
    assert exact.residual_after_pct < 0.1 < 10 < exact.residual_before_pct
    for u in pricer.units:
        want = adjust(u.result, u.kernel, truth, 8, 8)["terms"]
        got = adjust(u.result, u.kernel, exact.factors, 8, 8)["terms"]
        for term, value in want.items():
            if value > 0.05 * max(want.values()):       # a term too small to show is not determined
                assert got[term] == pytest.approx(value, rel=0.02), term
    # with it, the well-observed parameters still land near the truth, the rest stay nearer 1
    f = fit(obs, pricer)
    assert f.residual_after_pct < f.residual_before_pct / 3
    for p in ("LC/L3-MEM:copy", "RHS/core"):      # more than half of the way, in log space
        assert 0.5 < math.log(f.factors[p]) / math.log(truth[p]) <= 1.0, p
    assert all(abs(math.log(f.factors[p])) <= abs(math.log(v)) + 1e-9 for p, v in truth.items())


def test_few_runs_move_a_factor_little_and_outliers_do_not_pull_it():
    # a part whose time is its memory term, far above the others (overlapping model: the max):
    # its log time moves one for one with the factor's
    terms = {"T_comp (overlapping)": 1.0, "T_RegL1 (overlapping)": 1.0, "T_L1L2 (overlapping)": 1.0,
             "T_L2L3 (overlapping)": 1.0, "T_L3MEM": 10.0}
    result = {"ok": True, "terms": terms, "cy_per_cl": 10.0, "scaling_cy_per_cl": [10.0, 10.0],
              "saturation_cores": 1.0, "memory_bandwidth_kernel": "copy", "t_comp": 1.0}
    pricer = Pricer([Unit(result, "LC", 2e9, 1, 1, 2, 2)])
    param, k = "LC/L3-MEM:copy", 0
    truth = {param: 0.5}
    obs = _observations(pricer, truth)
    one = fit(obs, pricer)
    # one run moves it k / (k + PRIOR_RUNS) of the way in log space: 1 / 5
    assert one.factors[param] == pytest.approx(0.5 ** (1 / 5), rel=0.02)
    assert fit(obs, pricer, prior_runs=1e-3).factors[param] == pytest.approx(0.5, rel=0.01)
    assert fit(obs * 40, pricer).factors[param] == pytest.approx(0.5 ** (40 / 44), rel=0.02)
    # a quarter of the runs disturbed 3x (a shared machine): the robust fit stays near the clean one
    pricer = Pricer(_units())
    truth = {p: 0.7 for u in pricer.units for p in parameters_of(u.result, u.kernel) if "/L3-MEM:" in p}
    clean = fit(_observations(pricer, truth), pricer)
    noisy = fit(_observations(pricer, truth, lambda k: 3.0 if k % 4 == 0 else 1.0), pricer)
    plain = fit(_observations(pricer, truth, lambda k: 3.0 if k % 4 == 0 else 1.0), pricer, rounds=1)
    off = lambda f: sum(abs(math.log(f.factors[p] / clean.factors[p])) for p in clean.factors)  # noqa: E731
    assert off(noisy) < off(plain) / 2
    for p in clean.factors:
        assert noisy.factors[p] == pytest.approx(clean.factors[p], rel=0.2), p


def _machine_text(learned: str) -> str:
    text = Path(load_machine("zen4-epyc-vm-2core").path).read_text()
    return text.replace("  barrier:\n", learned + "  barrier:\n", 1)


def test_a_machine_file_carries_learned_factors_and_refuses_stale_ones(tmp_path):
    base = load_machine("zen4-epyc-vm-2core")
    good = (f"  learned:\n    factors: {{LC/L3-MEM:copy: 0.8, RHS/core: 0.6}}\n    runs: 30\n    scenarios: 2\n"
            f"    kerncraft: '0.8.18'\n    node_digest: {base.kerncraft_digest}\n    date: '2026-11-25'\n")
    m = parse_machine(parse_yaml(_machine_text(good), "m.yaml"), "m.yaml", "m")
    assert m.learned.factors == {"LC/L3-MEM:copy": 0.8, "RHS/core": 0.6}
    assert m.model_label == "ecm+learned (30 runs)" and m.numa_cores == 2
    assert parse_machine(parse_yaml(_machine_text(good), "m.yaml"), "m.yaml", "m", "ecm").learned is None
    stale = good.replace(base.kerncraft_digest, "f" * 64)
    with pytest.raises(InputError, match=r"cluster.learned': fitted for another node part.*--from-runs.*--model ecm"):
        parse_machine(parse_yaml(_machine_text(stale), "m.yaml"), "m.yaml", "m")
    bad = good.replace("RHS/core", "FOO/core")
    with pytest.raises(InputError, match=r"cluster.learned.factors.FOO/core': unknown parameter"):
        parse_machine(parse_yaml(_machine_text(bad), "m.yaml"), "m.yaml", "m")
    negative = good.replace("0.8,", "-0.8,")
    with pytest.raises(InputError, match="learned.factors"):
        parse_machine(parse_yaml(_machine_text(negative), "m.yaml"), "m.yaml", "m")

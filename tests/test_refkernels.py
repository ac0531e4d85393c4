"""The reference kernels: how a machine file composes transfers, settled against what its
streaming benchmark measured."""
import json
import math
import re
from pathlib import Path

import pytest

from autotune.progress import Callbacks
from autotune.model import reffit as rf
from autotune.model import refkernels as rk
from autotune.model import refreport as rr
from autotune.report.render import render
from autotune.results.calibrate import HostMachineResult
from autotune.specs.hostmachine import KERNELS

SHIPPED = Path(__file__).parents[1] / "machines" / "zen4-epyc-vm-2core.yaml"
LEVELS = ("L1", "L2", "L3")


def _terms(t_comp, t_regl1, l2, l3, mem):
    return rk.EcmTerms(t_comp, t_regl1, (("L2", l2), ("L3", l3), ("MEM", mem)))


# made-up kernels: (T_comp, T_RegL1, T_L1L2, T_L2L3, T_L3MEM) with the data in each level
MADE_UP = {
    "copy": {"L1": _terms(2, 1, 0, 0, 0), "L2": _terms(2, 1, 3, 0, 0), "L3": _terms(2, 1, 3, 8, 0),
             "MEM": _terms(2, 1, 3, 8, 12)},
    "triad": {"L1": _terms(2.5, 3, 0, 0, 0), "L2": _terms(2.5, 3, 5, 0, 0), "L3": _terms(2.5, 3, 5, 16, 0),
              "MEM": _terms(2.5, 3, 5, 16, 20)},
}


def _refs(measured_by: rk.Rule, skip=(), off=None):
    """References whose measurements are what `measured_by` predicts; levels in skip measured
    nothing; off: {(kernel, level): factor} measured that much off."""
    return [rk.Reference(k, lv, None if lv in skip else (off or {}).get((k, lv), 1.0) * rk.compose(t, measured_by), t)
            for k, levels in MADE_UP.items() for lv, t in levels.items()]


def test_a_bandwidth_is_cycles_per_line_of_work_without_write_allocate():
    # triad names 32 B per iteration; 8 iterations per 64 B line at 32 GB/s take 8 ns: 16 cy at 2 GHz
    assert rk.measured_cy_per_cl(32, 32.0, 2e9) == pytest.approx(16.0)
    assert rk.measured_cy_per_cl(8, 64.0, 3e9, line=128) == pytest.approx(16 * 8 / 64 * 3)


def test_compose_is_kerncrafts_rule():
    t = _terms(2, 1, 3, 8, 12)
    assert rk.compose(t, rk.Rule(LEVELS, 3)) == 12                 # max(2, 1, 3, 8, 12)
    assert rk.compose(t, rk.Rule(LEVELS, 0)) == 1 + 3 + 8 + 12     # max(2, sum)
    assert rk.compose(t, rk.Rule(LEVELS, 1)) == 3 + 8 + 12          # T_RegL1 overlaps
    assert rk.compose(t, rk.Rule(LEVELS, 2)) == 8 + 12
    # in L2 only whether L1 overlaps matters: one non-overlapping term is its own sum
    t2 = _terms(2, 1, 3, 0, 0)
    assert rk.compose(t2, rk.Rule(LEVELS, 1)) == rk.compose(t2, rk.Rule(LEVELS, 3)) == 3
    assert rk.compose(t2, rk.Rule(LEVELS, 0)) == 4


@pytest.mark.parametrize("truth", range(4))
def test_the_rule_that_fits_wins(truth):
    rule = rk.Rule(LEVELS, truth)
    # kernels in L1 far off (the in-core model's miss, not the rule's): every rule alike
    off = {("copy", "L1"): 3.0, ("triad", "L1"): 0.5}
    for written in range(4):
        choice = rf.fit_model(_refs(rule, off=off), rk.Rule(LEVELS, written))
        assert choice.rule == rule and choice.compared == 8
        assert choice.error_of(rule) == pytest.approx((math.log(3.0) + math.log(2.0)) / 8)
        assert all(e > choice.error_of(rule) for r, e in choice.errors if r != rule)


def test_the_rules_compare_on_the_references_that_tell_them_apart():
    # "overlapping" and "overlap L1-L2" differ in memory alone (2 of 8 references): a median
    # would tie them, the mean does not
    refs = _refs(rk.Rule(LEVELS, 3))
    e = dict(rf.fit_model(refs, rk.Rule(LEVELS, 2)).errors)
    assert e[rk.Rule(LEVELS, 3)] == 0 < e[rk.Rule(LEVELS, 2)]
    assert e[rk.Rule(LEVELS, 2)] == pytest.approx((math.log(20 / 12) + math.log(36 / 20)) / 8)


def test_a_tie_keeps_the_file_as_written():
    # data in L1 alone cannot tell any rule from another
    only_l1 = [r for r in _refs(rk.Rule(LEVELS, 0)) if r.level == "L1"]
    for written in range(4):
        assert rf.fit_model(only_l1, rk.Rule(LEVELS, written)).rule == rk.Rule(LEVELS, written)
    # without L3 and memory, "overlap L1" and "overlap L1-L2" tie with "overlapping": the nearest
    # to the file as written wins
    upto_l2 = _refs(rk.Rule(LEVELS, 3), skip=("L3", "MEM"))
    assert rf.fit_model(upto_l2, rk.Rule(LEVELS, 0)).rule == rk.Rule(LEVELS, 1)
    assert rf.fit_model(upto_l2, rk.Rule(LEVELS, 2)).rule == rk.Rule(LEVELS, 2)


def test_a_level_with_no_measurement_is_left_out():
    truth = rk.Rule(LEVELS, 1)
    refs = _refs(truth, skip=("MEM",))
    choice = rf.fit_model(refs, rk.Rule(LEVELS, 3))
    assert choice.compared == 6 and choice.rule == truth
    rows = rr.table_rows(refs, choice)
    mem = [r for r in rows if r["level"] == "MEM"]
    assert len(mem) == 2 and all(r["measured_cy_cl"] is None and r["ratio"] is None for r in mem)
    assert all(r["predicted_cy_cl"] > 0 for r in mem)
    # nothing measured anywhere: the file stays as written, and says it is assumed
    nothing = rf.fit_model(_refs(truth, skip=("L1", "L2", "L3", "MEM")), rk.Rule(LEVELS, 0))
    assert nothing.rule == rk.Rule(LEVELS, 0) and nothing.compared == 0
    assert all(e is None for _, e in nothing.errors) and "assumed" in rr.provenance(nothing)["overlap"]


# five made-up kernels analysed at the design's rates (64 B/cy into L2, 32 into L3): in-core terms
# (T_comp, T_RegL1) and the lines each moves across L1-L2 and L2-L3 (cycles at the design's rate)
DESIGN = {"L2": (64.0, "half-duplex"), "L3": (32.0, "full-duplex")}
FIVE = {"load": (1.0, 0.5, 1.0, 2.0), "copy": (1.0, 1.0, 3.0, 4.0), "update": (2.0, 1.0, 2.0, 4.0),
        "triad": (2.5, 3.0, 5.0, 8.0), "daxpy": (1.5, 1.5, 3.0, 6.0)}
MEM = 10.0


def _five(level, t_comp, t_regl1, l2, l3):
    return _terms(t_comp, t_regl1, l2 if level != "L1" else 0, l3 if level in ("L3", "MEM") else 0,
                  MEM if level == "MEM" else 0)


def _measured_five(rule, rates, incore=1.0, skip=()):
    """References of FIVE whose measurements are what `rule` at `rates` (B/cy) and in-core times
    `incore` times the port model's predict."""
    analysed = {lv: r for lv, (r, _) in DESIGN.items()}
    out = []
    for k, (c, r1, l2, l3) in FIVE.items():
        for lv in ("L1", "L2", "L3", "MEM"):
            t = _five(lv, c, r1, l2, l3)
            meas = rk.compose(t.priced(rates, analysed, incore), rule)
            out.append(rk.Reference(k, lv, None if (k, lv) in skip else meas, t))
    return out


def test_a_transfer_is_lines_over_the_rate():
    t = _terms(2, 1, 3, 8, 12)
    p = t.priced({"L2": 32.0, "L3": 64.0}, {"L2": 64.0, "L3": 32.0}, 1.5)
    assert (p.t_comp, p.t_regl1) == (3.0, 1.5)
    assert p.transfers == (("L2", 6.0), ("L3", 4.0), ("MEM", 12.0))       # memory's is a bandwidth: as is


@pytest.mark.parametrize("truth", range(4))
def test_the_fit_recovers_each_levels_rate(truth):
    rule = rk.Rule(LEVELS, truth)
    rates = {"L2": 40.0, "L3": 20.5}
    refs = _measured_five(rule, rates)
    fit = rf.fit_model(refs, rk.Rule(LEVELS, 3), DESIGN)
    assert fit.rule == rule and fit.fitted_rates() == rates and fit.error == pytest.approx(0, abs=1e-12)
    assert [(r.level, r.design, r.duplex, r.kernels) for r in fit.rates] == \
        [("L2", 64.0, "half-duplex", 5), ("L3", 32.0, "full-duplex", 5)]
    assert fit.as_designed > 0.05 and fit.incore_measured == fit.as_designed    # no in-core measured
    # every row at the fitted rates matches, the design's prediction is kept beside it
    rows = rr.table_rows(refs, fit)
    assert all(r["ratio"] == pytest.approx(1.0) for r in rows)
    assert any(abs(r["designed_ratio"] - 1) > 0.2 for r in rows if r["level"] == "L2")
    assert rows[1]["terms"]["T_L1L2"] == pytest.approx(FIVE["load"][2] * 64 / 40)


def test_a_rate_the_data_cannot_move_stays_the_designs():
    # with the data of the made-up kernels in L1 and L2 only, L3's rate is unknown: the design's
    refs = _measured_five(rk.Rule(LEVELS, 1), {"L2": 40.0, "L3": 20.0},
                          skip={(k, lv) for k in FIVE for lv in ("L3", "MEM")})
    fit = rf.fit_model(refs, rk.Rule(LEVELS, 1), DESIGN)
    assert fit.fitted_rates() == {"L2": 40.0}
    l3 = fit.rates[1]
    assert (l3.fitted, l3.rate, l3.kernels) == (False, 32.0, 0) and "fewer than 3" in l3.why
    # two kernels measured in L3 are still too few
    refs = _measured_five(rk.Rule(LEVELS, 1), {"L2": 40.0, "L3": 20.0},
                          skip={(k, "L3") for k in ("load", "copy", "update")})
    assert rf.fit_model(refs, rk.Rule(LEVELS, 1), DESIGN).fitted_rates() == {"L2": 40.0}
    # a rate beyond the grid is fitted to its bound, and says so
    refs = _measured_five(rk.Rule(LEVELS, 3), {"L2": 2.0, "L3": 20.0})
    fit = rf.fit_model(refs, rk.Rule(LEVELS, 3), DESIGN)
    assert fit.rates[0].rate == rf.RATE_GRID[0] == 4 and fit.rates[0].bound
    assert "at the bound" in rr.describe_rates(fit.rates)


def test_the_measured_in_core_time_prices_every_level():
    """Measured 1.5 x the port model's in-core time: with the file's in-core measured, the L1 rows
    are the measurement and the other levels' terms carry it (so the additive rule's rates come
    out right); without, the rates absorb what the in-core time misses."""
    rule, rates = rk.Rule(LEVELS, 0), {"L2": 40.0, "L3": 20.0}
    refs = _measured_five(rule, rates, incore=1.5)
    fit = rf.fit_model(refs, rule, DESIGN, when="always")
    assert fit.fitted_rates() == rates and fit.rule == rule and fit.error == pytest.approx(0, abs=1e-12)
    assert all(i.source == "measured" and i.factor == pytest.approx(1.5) for i in fit.incore)
    assert fit.incore_measured < fit.as_designed
    # the factor is model.incore's: both terms scaled so that the L1 time is the measured one
    from autotune.model import incore
    assert incore.factor(1.0, 3.0, 4.5) == 1.5 and incore.factor(0.0, 0.0, 2.0) == 1.0
    res = incore.with_measured({"ok": True, "t_comp": 2.0, "t_regl1": 1.0,
                                "terms": {"T_comp (overlapping)": 2.0, "T_RegL1": 1.0, "T_L1L2": 3.0}}, 3.0, 1, 1)
    ref = rk.Reference("copy", "L2", None, _terms(2.0, 1.0, 3.0, 0, 0))
    assert rk.predict(ref, rk.Model(rule, (), (("copy", incore.factor(2.0, 1.0, 3.0)),)), {}) == res["cy_per_cl"]
    # the port model's where the file measures none
    plain = rf.fit_model(refs, rule, DESIGN, when=None)
    assert all(i.source == "port model" for i in plain.incore) and plain.error > 0.01
    # disagree: measured only where more than the tolerance off
    near = _measured_five(rule, rates, incore=1.1)
    fit = rf.fit_model(near, rule, DESIGN, when="disagree", incore_tolerance=0.15)
    assert all(i.source == "port model" and i.factor == 1.0 for i in fit.incore)
    assert rf.fit_model(near, rule, DESIGN, when="disagree", incore_tolerance=0.05).error == \
        pytest.approx(0, abs=1e-12)


def test_the_provenance_says_what_was_fitted():
    refs = _measured_five(rk.Rule(LEVELS, 1), {"L2": 40.0, "L3": 20.0}, incore=1.5)
    fit = rf.fit_model(refs, rk.Rule(LEVELS, 3), DESIGN, when="always")
    prov = rr.provenance(fit, "the amd-zen3 design (kerncraft Zen2_EPYC-7452.yml)")
    assert "instead of the design's overlapping" in prov["overlap"]
    assert prov["rates"].startswith("L2 40.00 B/cy half-duplex (design 64.00), L3 20.00 B/cy full-duplex "
                                    "(design 32.00): ")
    assert "measured for load 1.50 cy/CL (port model 1.00)" in prov["in-core"]
    assert re.search(r"over 20 kernel-levels: 0\.\d{3} as designed .* 0\.000 with the rule and rates fitted",
                     prov["error"])
    written = "cache transfer rates of the amd-zen3 design (kerncraft Zen2_EPYC-7452.yml); network and barrier " \
              "until calibrated"
    assert rr.assumed_after(written, fit) == ("network and barrier until calibrated",
                                              "the amd-zen3 design (kerncraft Zen2_EPYC-7452.yml)")
    kept = rf.fit_model(_measured_five(rk.Rule(LEVELS, 1), {"L2": 40.0, "L3": 20.0},
                                       skip={(k, "L3") for k in FIVE}), rk.Rule(LEVELS, 1), DESIGN)
    assert rr.assumed_after(written, kept)[0].startswith("L3 cache transfer rate of the amd-zen3 design")
    assert rr.assumed_after("network and barrier until calibrated", fit) == \
        ("network and barrier until calibrated", "")


def test_the_file_gets_the_rates():
    from autotune.storage.yamlfile import round_trip_yaml
    data = round_trip_yaml().load(SHIPPED.read_text())
    assert rf.design_rates(data) == {"L2": (64.0, "half-duplex"), "L3": (32.0, "half-duplex")}
    rf.with_rates(data, {"L2": 40.25})
    assert rf.design_rates(data) == {"L2": (40.25, "half-duplex"), "L3": (32.0, "half-duplex")}
    assert list(data["memory hierarchy"][1]["upstream throughput"]) == ["40.25 B/cy", "half-duplex"]


def test_the_file_read_and_written():
    from autotune.storage.yamlfile import round_trip_yaml
    data = round_trip_yaml().load(SHIPPED.read_text())
    assert rk.cache_levels(data) == list(LEVELS) and rk.rule_of(data) == rk.Rule(LEVELS, 3)
    assert rk.clock_hz(data) == 2.6e9 and rk.line_bytes(data) == 64
    one = rk.one_thread(data)
    assert list(one) == ["L1", "L2", "L3", "MEM"]
    assert one["L1"]["working_set"] == 21120 and one["L2"]["gbs"]["load"] == pytest.approx(106.07)
    rk.with_rule(data, rk.Rule(LEVELS, 1))
    assert [lv["transfers overlap"] for lv in data["memory hierarchy"]] == [True, False, False, False]
    assert rk.rule_of(data) == rk.Rule(LEVELS, 1)
    del data["benchmarks"]["measurements"]["L2"][1]["threads"][0]     # no one-thread run in L2
    assert "L2" not in rk.one_thread(data)


def test_the_reference_kernels_are_the_benchmarks():
    """Names, arrays and bytes per iteration as the benchmark runs and counts them, which the
    machine file's kernel section states as streams: a read+write stream is one array, read and
    written."""
    from autotune.storage.yamlfile import round_trip_yaml
    kernels = round_trip_yaml().load(SHIPPED.read_text())["benchmarks"]["kernels"]
    assert sorted(k.name for k in rk.REFERENCE_KERNELS) == sorted(KERNELS) == sorted(kernels)
    for k in rk.REFERENCE_KERNELS:
        streams = {s: kernels[k.name][f"{s} streams"]["streams"] for s in ("read", "read+write", "write")}
        assert k.arrays == streams["read"] + streams["write"] - streams["read+write"], k.name
        assert k.bytes_per_iteration == 8 * (streams["read"] + streams["write"]), k.name
    assert rk.REFERENCE_KERNELS[0].elements(16384) == 2048 and rk.REFERENCE_KERNELS[3].elements(1024) == 64


def test_the_report_has_the_table():
    refs = _refs(rk.Rule(LEVELS, 1), skip=("MEM",))
    choice = rf.fit_model(refs, rk.Rule(LEVELS, 0))
    summary = rr.summary(choice, refs, 2.6e9, 1.5)
    res = HostMachineResult("m", "m.yaml", {"name": "Zen 4", "uarch": "zen4"}, [], 2, 2.6, 1, 3.0, False,
                            {}, {}, reference_kernels=summary)
    text = render(res, "table")
    assert "transfers overlap L1 (written additive, changed)" in text
    assert re.search(r"triad\s+L3\s+\d+\.\d\d\s+\d+\.\d\d\s+1\.00", text)
    assert re.search(r"copy\s+MEM\s+-\s+\d+\.\d\d\s+-", text)
    assert "overlap L1 0.000 (chosen)" in text and re.search(r"additive 0\.\d{3}", text)
    back = json.loads(render(res, "json"))["reference_kernels"]
    assert back["rule"] == "overlap L1" and len(back["rows"]) == 8
    assert back["overlap"] == {"L1": True, "L2": False, "L3": False}
    # with the rates fitted and the in-core time measured: a line for each, the errors before and after
    refs = _measured_five(rk.Rule(LEVELS, 3), {"L2": 40.0, "L3": 20.0}, incore=1.5,
                          skip={("copy", "L1")})
    fit = rf.fit_model(refs, rk.Rule(LEVELS, 3), DESIGN, when="always")
    res.reference_kernels = rr.summary(fit, refs, 2.6e9, 1.5)
    text = render(res, "table")
    assert "cache transfer rates: L2 40.00 B/cy (design 64.00), L3 20.00 B/cy (design 32.00)" in text
    assert "in-core time: measured for load, update, triad, daxpy; the port model's for copy (the measured " \
           "time always" in text
    assert re.search(r"load\s+L2\s+\d+\.\d\d\s+\d+\.\d\d\s+1\.00\s+0\.\d\d", text)
    assert re.search(r"as designed 0\.\d{3}, with the in-core time 0\.\d{3}, fitted 0\.\d{3}", text)
    back = json.loads(render(res, "json"))["reference_kernels"]
    assert back["rates"]["L2"] == {"design": 64.0, "rate": 40.0, "duplex": "half-duplex", "fitted": True,
                                   "kernels": 5}
    assert back["incore"]["copy"]["source"] == "port model" and back["incore"]["load"]["factor"] == 1.5


@pytest.fixture(scope="module")
def shipped_analyses():
    from autotune.storage.yamlfile import round_trip_yaml
    from autotune.tools import refkernels_ecm
    one = rk.one_thread(round_trip_yaml().load(SHIPPED.read_text()))
    return refkernels_ecm.analyse(SHIPPED, {lv: m["working_set"] for lv, m in one.items()})


@pytest.mark.kerncraft
def test_the_reference_kernels_analyse_on_the_shipped_machine(shipped_analyses, compiler):
    analyses, rule = shipped_analyses
    assert rule == rk.Rule(LEVELS, 3)
    assert sorted(analyses) == sorted(KERNELS)
    for kernel, levels in analyses.items():
        assert list(levels) == ["L1", "L2", "L3", "MEM"]
        for level, a in levels.items():
            assert "terms" in a, (kernel, level, a.get("error"))
            assert a["as_written"] > 0 and a["flipped"] > 0
            assert a["as_written"] <= a["flipped"]        # overlapping never above additive
        # the data moves further each level: memory's term only where the data is in memory
        assert levels["L1"]["terms"]["transfers"][0][1] == 0 < levels["MEM"]["terms"]["transfers"][-1][1]
    assert rk.disagreements(analyses, rule) == []          # compose() is kerncraft's own rule
    # the load kernel streams (32 partial sums), not bound by one chain of adds
    assert analyses["load"]["L1"]["terms"]["t_comp"] <= 2


@pytest.mark.kerncraft
def test_a_fitted_rate_prices_as_kerncraft_analyses_it(shipped_analyses, tmp_path, compiler):
    """The fit rescales the transfer terms analysed at the design's rates; kerncraft analysing a
    file with other rates (and another rule) gives the same totals."""
    from autotune.storage.yamlfile import dump_text, round_trip_yaml
    from autotune.tools import refkernels_ecm
    analyses, _ = shipped_analyses
    yaml = round_trip_yaml()
    data = yaml.load(SHIPPED.read_text())
    design = {lv: r for lv, (r, _) in rf.design_rates(data).items()}
    rates, rule = {"L2": 40.25, "L3": 20.5}, rk.Rule(LEVELS, 1)
    rk.with_rule(rf.with_rates(data, rates), rule)
    target = tmp_path / SHIPPED.name
    target.write_text(dump_text(yaml, data))
    one = rk.one_thread(data)
    again, written = refkernels_ecm.analyse(target, {lv: m["working_set"] for lv, m in one.items()})
    assert written == rule
    for kernel, levels in analyses.items():
        for level, a in levels.items():
            priced = rk.EcmTerms.of(a["terms"]).priced(rates, design)
            b = again[kernel][level]
            assert rk.compose(priced, rule) == pytest.approx(b["as_written"], rel=1e-9), (kernel, level)
            assert rk.compose(priced, rk.flipped(rule)) == pytest.approx(b["flipped"], rel=1e-9), (kernel, level)
            theirs = rk.EcmTerms.of(b["terms"]).transfers
            assert [lv for lv, _ in priced.transfers] == [lv for lv, _ in theirs]
            assert [c for _, c in priced.transfers] == pytest.approx([c for _, c in theirs], rel=1e-9)


@pytest.mark.kerncraft
def test_calibrate_settles_the_rule_and_the_rates_in_the_file(tmp_path, compiler):
    """A file that says no transfer overlaps, with the shipped Zen 4 guest's measurements and an
    in-core measured section: the reference kernels move its rule and its cache levels' rates,
    price every level with the measured in-core time, and the file says why."""
    from autotune.pipeline.refkernels import settle_transfers
    from autotune.specs.machine import load_machine
    from autotune.storage.yamlfile import dump_text, round_trip_yaml
    yaml = round_trip_yaml()
    data = rk.with_rule(yaml.load(SHIPPED.read_text()), rk.Rule(LEVELS, 0))
    data["in-core measured"] = {"cpu": "AuthenticAMD family 25 model 17", "when": "always", "tolerance": 0.15}
    data["provenance"] = {"assumed": "cache transfer rates of the amd-zen3 design (kerncraft Zen2_EPYC-7452.yml); "
                                     "network and barrier until calibrated"}
    target = tmp_path / "zen4.yaml"
    target.write_text(dump_text(yaml, data))
    said = []
    res = settle_transfers(target, Callbacks(say=said.append))
    assert res["as_written"] == "additive" and res["compared"] == 20
    assert res["error_fitted"] <= min(e for e in res["errors"].values()) < res["error_as_designed"]
    assert res["error_fitted"] == res["errors"][res["rule"]]
    # the L1 rows are the measured in-core time
    assert all(i["source"] == "measured" for i in res["incore"].values())
    assert all(r["ratio"] == pytest.approx(1.0) for r in res["rows"] if r["level"] == "L1")
    back = yaml.load(target.read_text())
    assert rk.rule_of(back).flags() == res["overlap"]
    fitted = {lv: r["rate"] for lv, r in res["rates"].items() if r["fitted"]}
    assert fitted and all(4 <= r <= 256 for r in fitted.values())
    assert {lv: r for lv, (r, _) in rf.design_rates(back).items() if lv in fitted} == fitted
    assert [d for _, (_, d) in rf.design_rates(back).items()] == ["half-duplex", "half-duplex"]
    prov = back["provenance"]["transfers"]
    assert "the design: the amd-zen3 design" in prov["rates"] and "as designed" in prov["error"]
    if len(fitted) == 2:
        assert back["provenance"]["assumed"] == "network and barrier until calibrated"
    machine = load_machine(str(target))
    assert {c.name: c.upstream_bytes_per_cycle for c in machine.caches if c.name in fitted} == fitted
    assert any(s.startswith("transfers: ") and "B/cy" in s for s in said)
    assert len(res["rows"]) == 20 and all(r["predicted_cy_cl"] > 0 and r["ratio"] > 0 for r in res["rows"])
    assert res["wall_s"] < 60


def test_memory_is_compared_on_every_core_through_the_multicore_curve():
    """kerncraft's single-core time prices memory at the bandwidth of every core, which one core
    does not reach: main memory is compared on every core at once, its prediction the saturating
    curve's (model.learned.scaling), so the rule is not judged by that."""
    from autotune.model.learned import scaling
    from autotune.storage.yamlfile import round_trip_yaml
    data = round_trip_yaml().load(SHIPPED.read_text())
    every = rk.every_core(data)
    assert list(every) == ["MEM"] and every["MEM"]["threads"] == 2
    assert every["MEM"]["gbs"]["load"] > rk.one_thread(data)["MEM"]["gbs"]["load"]
    t = MADE_UP["copy"]["MEM"]
    ref = rk.Reference("copy", "MEM", 10.0, t, cores=2)
    rule = rk.Rule(LEVELS, 3)
    assert rk.predict(ref, rk.Model(rule), {}) == scaling(rk.compose(t, rule), 12, 2, 2)[1][1] == 12
    additive = rk.Rule(LEVELS, 0)               # 1 + 3 + 8 + 12 = 24 cy on one core: not saturated on 2
    assert rk.compose(t, additive) == 24
    assert rk.predict(ref, rk.Model(additive), {}) == pytest.approx(scaling(24.0, 12, 2, 2)[1][1])
    assert rk.predict(ref, rk.Model(additive), {}) > 12
    # the references take the every-core run for memory, the one-thread runs elsewhere
    meas = {"MEM": {"gbs": {"copy": 10.0}, "threads": 1}, "L3": {"gbs": {"copy": 50.0}, "threads": 1}}
    analyses = {"copy": {lv: {"terms": {"t_comp": 2, "t_regl1": 1, "transfers": []}} for lv in meas}}
    refs = rk.references(analyses, meas, 2e9, kernels=rk.REFERENCE_KERNELS[1:2],
                         every={"MEM": {"gbs": {"copy": 20.0}, "threads": 2}})
    assert [(r.level, r.cores) for r in refs] == [("MEM", 2), ("L3", 1)]
    assert refs[0].measured == pytest.approx(rk.measured_cy_per_cl(16, 20.0, 2e9))

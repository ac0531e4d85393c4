"""The reference kernels: how a machine file composes transfers, settled against what its
streaming benchmark measured."""
import json
import math
import re
from pathlib import Path

import pytest

from autotune.model import refkernels as rk
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
        choice = rk.choose(_refs(rule, off=off), rk.Rule(LEVELS, written))
        assert choice.rule == rule and choice.compared == 8
        assert choice.error_of(rule) == pytest.approx((math.log(3.0) + math.log(2.0)) / 8)
        assert all(e > choice.error_of(rule) for r, e in choice.errors if r != rule)


def test_the_rules_compare_on_the_references_that_tell_them_apart():
    # "overlapping" and "overlap L1-L2" differ in memory alone (2 of 8 references): a median
    # would tie them, the mean does not
    refs = _refs(rk.Rule(LEVELS, 3))
    e = dict(rk.choose(refs, rk.Rule(LEVELS, 2)).errors)
    assert e[rk.Rule(LEVELS, 3)] == 0 < e[rk.Rule(LEVELS, 2)]
    assert e[rk.Rule(LEVELS, 2)] == pytest.approx((math.log(20 / 12) + math.log(36 / 20)) / 8)


def test_a_tie_keeps_the_file_as_written():
    # data in L1 alone cannot tell any rule from another
    only_l1 = [r for r in _refs(rk.Rule(LEVELS, 0)) if r.level == "L1"]
    for written in range(4):
        assert rk.choose(only_l1, rk.Rule(LEVELS, written)).rule == rk.Rule(LEVELS, written)
    # without L3 and memory, "overlap L1" and "overlap L1-L2" tie with "overlapping": the nearest
    # to the file as written wins
    upto_l2 = _refs(rk.Rule(LEVELS, 3), skip=("L3", "MEM"))
    assert rk.choose(upto_l2, rk.Rule(LEVELS, 0)).rule == rk.Rule(LEVELS, 1)
    assert rk.choose(upto_l2, rk.Rule(LEVELS, 2)).rule == rk.Rule(LEVELS, 2)


def test_a_level_with_no_measurement_is_left_out():
    truth = rk.Rule(LEVELS, 1)
    refs = _refs(truth, skip=("MEM",))
    choice = rk.choose(refs, rk.Rule(LEVELS, 3))
    assert choice.compared == 6 and choice.rule == truth
    rows = rk.table_rows(refs, choice.rule)
    mem = [r for r in rows if r["level"] == "MEM"]
    assert len(mem) == 2 and all(r["measured_cy_cl"] is None and r["ratio"] is None for r in mem)
    assert all(r["predicted_cy_cl"] > 0 for r in mem)
    # nothing measured anywhere: the file stays as written, and says it is assumed
    nothing = rk.choose(_refs(truth, skip=("L1", "L2", "L3", "MEM")), rk.Rule(LEVELS, 0))
    assert nothing.rule == rk.Rule(LEVELS, 0) and nothing.compared == 0
    assert all(e is None for _, e in nothing.errors) and "assumed" in rk.provenance(nothing)


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
    choice = rk.choose(refs, rk.Rule(LEVELS, 0))
    summary = rk.summary(choice, refs, 2.6e9, 1.5)
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
def test_calibrate_settles_the_rule_in_the_file(tmp_path, compiler):
    """A file that says no transfer overlaps, with the shipped Zen 4 guest's measurements: the
    reference kernels move it, and the file says why."""
    from autotune.pipeline.refkernels import settle_transfers
    from autotune.specs.machine import load_machine
    from autotune.storage.yamlfile import dump_text, round_trip_yaml
    yaml = round_trip_yaml()
    data = rk.with_rule(yaml.load(SHIPPED.read_text()), rk.Rule(LEVELS, 0))
    target = tmp_path / "zen4.yaml"
    target.write_text(dump_text(yaml, data))
    said = []
    res = settle_transfers(target, said.append)
    assert res["as_written"] == "additive" and res["rule"] != "additive" and res["compared"] == 20
    assert res["errors"][res["rule"]] < res["errors"]["additive"]
    back = yaml.load(target.read_text())
    assert rk.rule_of(back).flags() == res["overlap"]
    assert "instead of the design's additive" in back["provenance"]["transfers"]
    assert load_machine(str(target)).name and any(s.startswith("transfers: ") for s in said)
    assert len(res["rows"]) == 20 and all(r["predicted_cy_cl"] > 0 and r["ratio"] > 0 for r in res["rows"])
    assert res["wall_s"] < 60

"""Each kernel part's in-core time measured on the target: the choice and the pricing (pure), the
harness (the part's code compiled as analysed, timed on this host), the store and the machine file."""
from __future__ import annotations

import json
import math
import platform
import re
from pathlib import Path

import pytest

from autotune.progress import Callbacks
from autotune.errors import InputError
from autotune.model import incore as incmod
from autotune.model.learned import recombine

MACHINES = Path(__file__).resolve().parent.parent / "machines"

# an analysis on a machine whose transfers do not overlap (Haswell): T = max(T_comp, T_RegL1 + transfers)
HSW = {"ok": True, "cy_per_cl": 14.0, "t_comp": 4.0, "t_regl1": 2.0, "saturation_cores": 4.0,
       "scaling_cy_per_cl": [14.0, 7.0],
       "terms": {"T_comp (overlapping)": 4.0, "T_RegL1": 2.0, "T_L1L2": 3.0, "T_L2L3": 4.0, "T_L3MEM": 5.0}}


def test_choose_measured_where_borrowed_or_off_beyond_the_tolerance():
    assert incmod.choose(4.0, 4.4, "disagree", 0.15)[0] == incmod.PORT_MODEL      # +10 %
    source, why = incmod.choose(4.0, 6.0, "disagree", 0.15)
    assert source == incmod.MEASURED and "+50 %" in why
    assert incmod.choose(4.0, 3.0, "disagree", 0.15)[0] == incmod.MEASURED         # -25 %
    assert incmod.choose(4.0, 4.1, "always", 0.15)[0] == incmod.MEASURED
    assert incmod.choose(4.0, None, "always", 0.15) == (incmod.PORT_MODEL, "not measured")
    assert incmod.choose(0.0, 3.0, "disagree", 0.15)[0] == incmod.MEASURED


def test_measured_time_scales_both_in_core_terms_and_keeps_the_transfers():
    out = incmod.with_measured(HSW, 8.0, 4, 4)              # k = 8 / max(4, 2) = 2
    assert out["terms"]["T_comp (overlapping)"] == 8.0 and out["terms"]["T_RegL1"] == 4.0
    assert [out["terms"][t] for t in ("T_L1L2", "T_L2L3", "T_L3MEM")] == [3.0, 4.0, 5.0]
    assert out["cy_per_cl"] == 4.0 + 3.0 + 4.0 + 5.0         # kerncraft's rule: the serial sum wins
    assert out["t_comp"] == 8.0 and out["t_regl1"] == 4.0
    # the same as kerncraft's combination of the scaled terms
    assert out["cy_per_cl"] == recombine(HSW, out["terms"], 4, 4)["cy_per_cl"]
    assert HSW["terms"]["T_RegL1"] == 2.0                   # the analysis itself is untouched


def test_a_measured_time_larger_than_every_transfer_becomes_the_time():
    out = incmod.with_measured(HSW, 40.0, 4, 4)
    assert out["cy_per_cl"] == 40.0                          # T_comp * 10 overlaps the rest


def test_priced_records_both_figures_and_the_source():
    rec = {"cy_per_cl": 6.0}
    out = incmod.priced(HSW, rec, "disagree", 0.15, 4, 4)
    assert out["incore"] == {"source": "measured", "why": "measured +50 % off the port model (tolerance 15 %)",
                             "port_cy_per_cl": 4.0, "measured_cy_per_cl": 6.0}
    assert out["cy_per_cl"] == 6.0 / 4.0 * 2.0 + 12.0
    kept = incmod.priced(HSW, {"cy_per_cl": 4.2}, "disagree", 0.15, 4, 4)
    assert kept["cy_per_cl"] == HSW["cy_per_cl"] and kept["incore"]["source"] == "port model"
    failed = incmod.priced(HSW, {"error": "gcc failed"}, "always", 0.15, 4, 4)
    assert failed["incore"]["why"] == "not measured: gcc failed" and failed["cy_per_cl"] == 14.0
    assert incmod.priced({"ok": False}, rec, "always", 0.15, 4, 4) == {"ok": False}


def test_cycles_per_line_is_kerncrafts_unit():
    # 1 us per call of 4096 iterations at 8 iterations per cache line, 2 GHz: 2000 cy / 512 lines
    assert math.isclose(incmod.cycles_per_line(1e-6, 2e9, 4096, 8), 2000 / 512)


def _file_with(tmp_path, section: dict | None, flags: str | None = None) -> Path:
    from autotune.storage.yamlfile import dump_text, round_trip_yaml
    yaml = round_trip_yaml()
    data = yaml.load((MACHINES / "haswell-ep-e5-2630v3.yaml").read_text())
    if section is not None:
        data["in-core measured"] = section
    if flags is not None:
        data["compiler"] = {"gcc": flags}
    path = tmp_path / "m.yaml"
    path.write_text(dump_text(yaml, data))
    return path


def test_the_section_loads_and_a_bad_one_is_refused_naming_its_field(tmp_path):
    from autotune.specs.machine import load_machine
    good = {"cpu": "GenuineIntel family 6 model 63", "when": "disagree", "tolerance": 0.15}
    assert load_machine(str(_file_with(tmp_path, good))).incore_measured == good
    assert load_machine(str(MACHINES / "haswell-ep-e5-2630v3.yaml")).incore_measured is None
    with pytest.raises(InputError, match="in-core measured.when"):
        load_machine(str(_file_with(tmp_path, dict(good, when="sometimes"))))
    with pytest.raises(InputError, match="in-core measured"):
        load_machine(str(_file_with(tmp_path, {"when": "always", "tolerance": 0.1})))


def test_the_section_calibrate_writes():
    from autotune.specs.cpus import CpuId
    from autotune.specs.incoremeasure import cpu_key, section
    cpu = CpuId("x86", "AuthenticAMD", 26, 2, 0, "AMD EPYC")
    assert cpu_key(cpu) == "AuthenticAMD family 26 model 2"
    assert section(cpu, True, "OSACA ZEN4")["when"] == "always"
    own = section(cpu, False, "OSACA ZEN5")
    assert own["when"] == "disagree" and own["tolerance"] == 0.15 and own["cpu"] == cpu_key(cpu)


x86_only = pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="an x86 machine file")


@x86_only
def test_parts_are_measured_on_this_host_stored_and_reused(tmp_path, compiler, monkeypatch):
    """The harness runs the part's code as analysed; its time per cache line is of the size a core
    takes for such a loop; a second ranking reads the store instead of measuring again; a host of
    another CPU measures nothing and says why."""
    from autotune.codegen.parts import render_part
    from autotune.pipeline import incore as pinc
    from autotune.specs.incoremeasure import cpu_key
    from autotune.specs.machine import load_machine
    from autotune.specs.methodparts import approx_update_specs
    from autotune.storage.store import Store
    from autotune.tools.cpuprobe import host_cpu
    here = {"cpu": cpu_key(host_cpu()), "when": "disagree", "tolerance": 0.15}
    machine = load_machine(str(_file_with(tmp_path, here, "-O3 -march=native -fopenmp")))
    part = render_part(approx_update_specs(4, fused=True)[0])      # y += h sum_l b_l F_l
    store = Store(tmp_path / "store.sqlite")
    seen = []
    got = pinc.ensure_incore([part, part], machine, store, Callbacks(lambda d, t, n: seen.append(n)))
    rec = got[part.code]
    assert "error" not in rec, rec
    import statistics
    assert pinc.ROUNDS <= len(rec["runs"]) <= pinc.MAX_ROUNDS                  # until the medians settle
    assert rec["seconds_per_call"] == statistics.median(rec["runs"])
    # y = y + h * sum b_l F_l over an L1-resident block: between 0.2 and 50 cycles per 8 components
    assert 0.2 < rec["cy_per_cl"] < 50, rec
    assert rec["iterations"] == rec["constants"]["M"] and rec["per_line"] == 8
    # measured again with its data in L2: more components, and no faster per line than in L1
    assert rec["l2"]["constants"]["M"] > rec["constants"]["M"] and rec["l2"]["cy_per_cl"] > 0.8 * rec["cy_per_cl"]
    assert seen[0] == pinc.PROGRESS and any("built" in n for n in seen)

    def no_measuring(*a, **k):
        raise AssertionError("measured again")
    monkeypatch.setattr(pinc, "measure", no_measuring)
    assert pinc.ensure_incore([part], machine, store)[part.code] == json.loads(json.dumps(rec))
    # a file of the same CPU made by another calibration (another one-core clock) reuses the
    # seconds, converted to cycles at its own clock
    path = _file_with(tmp_path, dict(here, clock="1.50 GHz"), "-O3 -march=native -fopenmp")
    path.write_text(re.sub(r"^clock: .*$", "clock: 1.9 GHz", path.read_text(), count=1, flags=re.M))
    again = load_machine(str(path))
    assert again.kerncraft_digest != machine.kerncraft_digest and again.clock_hz == 1.9e9
    reused = pinc.ensure_incore([part], again, store)[part.code]
    assert reused["seconds_per_call"] == rec["seconds_per_call"] and reused["clock_hz"] == 1.5e9
    assert reused["cy_per_cl"] == pytest.approx(rec["cy_per_cl"] * 1.5e9 / rec["clock_hz"])
    assert reused["l2"]["cy_per_cl"] == pytest.approx(rec["l2"]["cy_per_cl"] * 1.5e9 / rec["clock_hz"])

    other = load_machine(str(_file_with(tmp_path, dict(here, cpu="GenuineIntel family 6 model 1"),
                                        "-O3 -march=native -fopenmp")))
    why = pinc.ensure_incore([part], other, store)[part.code]["error"]
    assert "this host is not the CPU the file measures (GenuineIntel family 6 model 1)" in why
    assert pinc.ensure_incore([part], load_machine(str(MACHINES / "haswell-ep-e5-2630v3.yaml")), store) == {}


@x86_only
def test_a_step_two_loop_counts_its_line_of_work_and_the_one_core_clock_converts(tmp_path, compiler):
    """A part whose innermost loop steps by 2 does a cache line of work in 4 iterations (kerncraft's
    unit and the pricing's: 8 elements over the step); the harness's seconds become cycles at one
    busy core's clock where the file gives it."""
    from autotune.codegen.parts import rhs_parts
    from autotune.pipeline import incore as pinc
    from autotune.specs.incoremeasure import cpu_key
    from autotune.specs.ivp import load_ivp
    from autotune.specs.machine import load_machine
    from autotune.storage.store import Store
    from autotune.tools.cpuprobe import host_cpu
    part = rhs_parts(load_ivp("string-mix"))[0]
    assert part.loops[-1].step == 2
    here = {"cpu": cpu_key(host_cpu()), "when": "disagree", "tolerance": 0.15, "clock": "3.00 GHz"}
    machine = load_machine(str(_file_with(tmp_path, here, "-O3 -march=native -fopenmp")))
    rec = pinc.ensure_incore([part], machine, Store(tmp_path / "s.sqlite"))[part.code]
    assert "error" not in rec, rec
    assert rec["per_line"] == 4 and rec["clock_hz"] == 3e9 != machine.clock_hz
    assert rec["cy_per_cl"] == pytest.approx(rec["seconds_per_call"] * 3e9 / (rec["iterations"] / 4))


@x86_only
def test_a_harness_given_the_calls_it_took_starts_its_batch_there(tmp_path, compiler):
    """A later round starts at the calls the first found (a batch of at least min_s still), and a
    hint too small is doubled up to min_s as in the first round: the same time per call."""
    from autotune.codegen.parts import render_part
    from autotune.pipeline import incore as pinc
    from autotune.specs.machine import load_machine
    from autotune.specs.methodparts import approx_update_specs
    from autotune.tools import incore_bench
    part = render_part(approx_update_specs(4)[0])
    machine = load_machine(str(_file_with(tmp_path, None, "-O3 -march=native")))   # no -fopenmp: the timer builds alone
    built = incore_bench.build({"name": part.name, "code": part.code, "machine_path": machine.path,
                                "constants": pinc.l1_constants(part, machine), "folder": str(tmp_path / "h")})
    assert built["ok"], built
    first, calls = incore_bench.run_once(built, 0.005)
    hinted, again = incore_bench.run_once(built, 0.005, calls)
    small, grown = incore_bench.run_once(built, 0.005, 1)
    assert calls > 1 and again >= calls and grown > 1
    assert 0.5 < hinted / first < 2.0 and 0.5 < small / first < 2.0


@x86_only
def test_harnesses_built_ahead_are_the_ones_timed_and_go_with_the_context(tmp_path, compiler):
    """The builds start when the ranking does (beside its analyses); the measurement times those
    harnesses, and leaving the context removes them.  Nothing is built where the store has the
    records, nor where the host is not the file's CPU."""
    import os

    from autotune.codegen.parts import render_part
    from autotune.pipeline import incore as pinc
    from autotune.specs.incoremeasure import cpu_key
    from autotune.specs.machine import load_machine
    from autotune.specs.methodparts import approx_update_specs
    from autotune.storage.store import Store
    from autotune.tools.cpuprobe import host_cpu
    part = render_part(approx_update_specs(4)[0])
    here = {"cpu": cpu_key(host_cpu()), "when": "disagree", "tolerance": 0.15}
    machine = load_machine(str(_file_with(tmp_path, here, "-O3 -march=native -fopenmp")))
    store = Store(tmp_path / "s.sqlite")
    with pinc.Builds([part], machine, store) as builds:
        assert builds.started and set(builds.todo) == {(part.code, pinc.L1), (part.code, pinc.L2)}
        folder = builds.folder
        got = pinc.ensure_incore([part], machine, store, builds=builds)[part.code]
        assert got["cy_per_cl"] > 0 and got["l2"]["cy_per_cl"] > 0
        assert sorted(os.listdir(folder)) == ["0", "1"]
    assert not os.path.exists(folder)
    with pinc.Builds([part], machine, store) as again:
        assert not again.todo and not again.started and again.folder is None
    (tmp_path / "other").mkdir()
    other = load_machine(str(_file_with(tmp_path / "other", dict(here, cpu="GenuineIntel-6-0"))))
    with pinc.Builds([part], other, Store(tmp_path / "o.sqlite")) as elsewhere:
        assert elsewhere.todo and not elsewhere.started


@x86_only
def test_a_harness_that_fails_is_priced_by_the_port_model_and_not_kept(tmp_path, compiler, monkeypatch):
    """A harness that crashes when it runs (an instruction the host lacks) fails its part alone:
    the others are measured, the failure is not stored, and the next ranking tries again."""
    from autotune.codegen.parts import render_part
    from autotune.errors import ToolError
    from autotune.pipeline import incore as pinc
    from autotune.specs.incoremeasure import cpu_key
    from autotune.specs.machine import load_machine
    from autotune.specs.methodparts import approx_update_specs
    from autotune.storage.store import Store
    from autotune.tools import incore_bench
    from autotune.tools.cpuprobe import host_cpu
    fused, first = (render_part(s) for s in approx_update_specs(4, fused=True) + approx_update_specs(4)[:1])
    here = {"cpu": cpu_key(host_cpu()), "when": "disagree", "tolerance": 0.15}
    machine = load_machine(str(_file_with(tmp_path, here, "-O3 -march=native -fopenmp")))
    real = incore_bench.run_once

    def crash_one(built, min_s, calls=None):
        if "dy" not in open(built["exe"].rsplit("/", 1)[0] + "/kernel.c").read():     # the fused part
            raise ToolError("in-core harness failed: Illegal instruction")
        return real(built, min_s, calls)
    monkeypatch.setattr(incore_bench, "run_once", crash_one)
    store = Store(tmp_path / "s.sqlite")
    got = pinc.ensure_incore([fused, first], machine, store)
    assert "Illegal instruction" in got[fused.code]["error"] and "cy_per_cl" not in got[fused.code]
    assert got[first.code]["cy_per_cl"] > 0
    monkeypatch.setattr(incore_bench, "run_once", real)
    again = pinc.ensure_incore([fused, first], machine, store)     # measured now, the other from the store
    assert again[fused.code]["cy_per_cl"] > 0 and again[first.code] == json.loads(json.dumps(got[first.code]))


def test_a_time_from_l2_measured_off_the_model_scales_the_in_cache_terms():
    """The in-core and L1-L2 terms move to the time measured with the data in L2; the transfers
    beyond L2 stay; within the tolerance, or with the data in L1, nothing moves."""
    over = {"ok": True, "cy_per_cl": 28.8, "t_comp": 6.0, "t_regl1": 0.8, "saturation_cores": 2.0,
            "scaling_cy_per_cl": [28.8, 14.4],
            "terms": {"T_comp (overlapping)": 6.0, "T_RegL1 (overlapping)": 0.8, "T_L1L2 (overlapping)": 5.3,
                      "T_L2L3 (overlapping)": 28.8, "T_L3MEM": 0.0}}
    out, how = incmod.from_l2(over, 9.0, 2, 2)
    assert how["source"] == "measured" and how["factor"] == pytest.approx(1.5) and how["model_cy_per_cl"] == 6.0
    assert out["terms"]["T_comp (overlapping)"] == pytest.approx(9.0)
    assert out["terms"]["T_L1L2 (overlapping)"] == pytest.approx(7.95)
    assert out["terms"]["T_L2L3 (overlapping)"] == 28.8
    same, how = incmod.from_l2(over, 6.3, 2, 2)
    assert same is over and how["source"] == "analysed" and how["factor"] == 1.0
    l1 = dict(over, terms={"T_comp (overlapping)": 6.0, "T_RegL1 (overlapping)": 0.8, "T_L1L2 (overlapping)": 0.0})
    assert incmod.from_l2(l1, 9.0, 2, 2)[0] is l1
    rec = {"cy_per_cl": 6.0, "l2": {"cy_per_cl": 9.0}}
    priced = incmod.priced(over, rec, "disagree", 0.15, 2, 2)
    assert priced["incore"]["l2"]["factor"] == pytest.approx(1.5) and priced["incore"]["source"] == "port model"


def test_the_harnesses_run_more_rounds_until_every_median_settles(monkeypatch):
    """Five rounds round-robin, then more while some part's median is not known to within 10 %
    (its bootstrap interval); a quiet set stops at five; never more than MAX_ROUNDS."""
    from autotune.pipeline import incore as pinc
    from autotune.specs.runstats import settled
    from autotune.tools import incore_bench
    quiet = {"a": iter([1.0, 1.01, 0.99, 1.0, 1.02] + [1.0] * 20), "b": iter([2.0] * 30)}
    noisy = {"a": iter([1.0, 1.6, 0.9, 1.7, 1.0, 1.5] + [1.0] * 20), "b": iter([2.0] * 30)}
    for series, more in ((quiet, False), (noisy, True)):
        given = []

        def run_once(b, s, calls, series=series, given=given):
            given.append((b["key"], calls))
            return next(series[b["key"]]), {"a": 64, "b": 128}[b["key"]] * (1 + len(given))
        monkeypatch.setattr(incore_bench, "run_once", run_once)
        rounds = []
        runs, failed = incore_bench.time_all({"a": {"key": "a"}, "b": {"key": "b"}}, pinc.ROUNDS, 0.01,
                                             rounds.append, pinc.MAX_ROUNDS, settled)
        assert not failed and len(runs["a"]) == len(runs["b"]) == len(rounds)
        assert (len(rounds) > pinc.ROUNDS) == more and len(rounds) <= pinc.MAX_ROUNDS
        # each run after the first starts at the calls its harness's previous run took
        assert given[:2] == [("a", None), ("b", None)]
        assert given[2:4] == [("a", 64 * 2), ("b", 128 * 3)] and given[4] == ("a", 64 * 4)

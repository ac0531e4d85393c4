"""The fused sweeps measured as the solver runs them: the pricing (pure), the sizes they are
measured at, and the solver built and timed on this host, stored and reused."""
from __future__ import annotations

import dataclasses
import platform
from pathlib import Path

import pytest

from autotune.progress import Callbacks
from autotune.model import sweeps as swmod

MACHINES = Path(__file__).resolve().parent.parent / "machines"
NAMES = ("L1", "L2", "L3", "MEM")
# a fused part on a machine whose transfers overlap: T = max of every term
OVERLAP = {"ok": True, "cy_per_cl": 9.0, "t_comp": 4.0, "t_regl1": 2.0, "saturation_cores": 2.0,
           "scaling_cy_per_cl": [9.0, 4.5],
           "terms": {"T_comp (overlapping)": 4.0, "T_RegL1 (overlapping)": 2.0, "T_L1L2 (overlapping)": 3.0,
                     "T_L2L3 (overlapping)": 6.0, "T_L3MEM (overlapping)": 9.0}}


def test_the_in_cache_terms_stop_at_the_measured_level():
    terms = OVERLAP["terms"]
    assert set(swmod.in_cache(terms, 1, NAMES)) == {"T_comp (overlapping)", "T_RegL1 (overlapping)",
                                                    "T_L1L2 (overlapping)"}
    assert set(swmod.in_cache(terms, 0, NAMES)) == {"T_comp (overlapping)", "T_RegL1 (overlapping)"}
    assert swmod.in_cache_cycles(OVERLAP, 1, NAMES) == 4.0
    assert swmod.in_cache_cycles(OVERLAP, 2, NAMES) == 6.0
    serial = {"T_comp (overlapping)": 4.0, "T_RegL1": 2.0, "T_L1L2": 3.0, "T_L2L3": 4.0}
    assert swmod.combined(swmod.in_cache(serial, 1, NAMES)) == 5.0      # max(4, 2 + 3)
    assert swmod.in_cache_cycles({"ok": False}, 1, NAMES) is None


def test_choose_takes_the_measurement_beyond_the_tolerance():
    assert swmod.choose(None, 1.0)[0] == swmod.ANALYSED
    assert swmod.choose(1.05, 1.0)[0] == swmod.ANALYSED
    source, why = swmod.choose(1.35, 1.0)
    assert source == swmod.MEASURED and "+35 %" in why
    assert swmod.choose(0.5, None)[0] == swmod.MEASURED


def test_scaled_moves_the_in_cache_time_and_keeps_the_streams_beyond():
    # k = 2 at L2: in-core and L1-L2 doubled (8, 4, 6); L2-L3 and memory as analysed
    out = swmod.scaled(OVERLAP, 2.0, 1, NAMES, 2, 2)
    assert out["terms"]["T_comp (overlapping)"] == 8.0 and out["terms"]["T_L1L2 (overlapping)"] == 6.0
    assert out["terms"]["T_L2L3 (overlapping)"] == 6.0 and out["terms"]["T_L3MEM (overlapping)"] == 9.0
    assert out["cy_per_cl"] == 9.0            # memory still the largest overlapping term
    assert out["t_comp"] == OVERLAP["t_comp"]  # the in-core time the floor counts stays
    assert swmod.scaled(OVERLAP, 3.0, 1, NAMES, 2, 2)["cy_per_cl"] == 12.0    # now the core is
    assert swmod.scaled(OVERLAP, 1.0, 1, NAMES, 2, 2) is OVERLAP


def test_per_execution_averages_the_correctors_sweeps_and_takes_the_median_run():
    from autotune.pipeline.sweeps import per_execution
    from autotune.specs.step import Group
    timers = (("sweep.pred", Group.RHSLCD), ("sweep.corr1", Group.RHSLC), ("sweep.corr2", Group.RHSLC),
              ("sweep.final", Group.RHSAU))
    runs = [{"sweep.pred": 1.0, "sweep.corr1": 2.0, "sweep.corr2": 4.0, "sweep.final": 1.0},
            {"sweep.pred": 3.0, "sweep.corr1": 2.0, "sweep.corr2": 2.0, "sweep.final": 1.0},
            {"sweep.pred": 2.0, "sweep.corr1": 9.0, "sweep.corr2": 9.0, "sweep.final": 1.0}]
    assert per_execution(runs, timers) == {"RHSLCD": 2.0, "RHSLC": 3.0, "RHSAU": 1.0}


def test_the_size_puts_each_cores_data_in_its_l2_on_every_core():
    from autotune.pipeline.sweeps import measure_sizes
    from autotune.specs.ivp import load_ivp
    from autotune.specs.machine import load_machine
    ivp, machine = load_ivp("heat2d"), load_machine(str(MACHINES / "haswell-ep-e5-2630v3.yaml"))
    sizes = measure_sizes(ivp, machine, 10, 0)
    assert [(lv, t) for _, lv, t in sizes] == [(1, machine.cores), (3, machine.cores)]
    n, _, _ = sizes[0]
    assert ivp.nearest_n(n) == n and 8 * 10 * n / machine.cores <= 0.5 * 256 * 1024
    # a tile that fills half of L2 (block=l2) cannot keep 2 tiles' vectors in L2: measured in memory alone
    assert [lv for _, lv, _ in measure_sizes(ivp, machine, 10, 4096)] == [3]


def test_the_size_in_memory_outgrows_the_caches_and_keeps_to_its_time(monkeypatch):
    """In memory one vector on the node is more than the caches hold of the node's data (every touch
    of the step comes from memory), where the step's vectors pass memory in a bounded time."""
    import math

    from autotune.model.reuse import level_reach
    from autotune.pipeline import sweeps as psw
    from autotune.specs.ivp import load_ivp
    from autotune.specs.machine import load_machine
    ivp, machine = load_ivp("inverterchain"), load_machine(str(MACHINES / "haswell-ep-e5-2630v3.yaml"))
    (n, level, threads), = [s for s in psw.measure_sizes(ivp, machine, 10, 0) if s[1] == len(machine.caches)]
    reach = level_reach(machine, machine.cores)[-1]
    # the least power of the grid at or above MEMORY_OVER x what the caches hold
    grid = psw.memory_target(reach)
    assert threads == machine.cores and n == ivp.least_n(grid) and n >= grid
    assert 8 * grid >= psw.MEMORY_OVER * reach > 8 * grid / psw.MEMORY_GRID
    # a capacity that moved by 3 % keeps the size (and the record the store holds of it)
    assert psw.memory_target(0.97 * reach) == psw.memory_target(1.03 * reach) == grid
    assert psw.memory_target(reach * psw.MEMORY_GRID ** 2) > grid
    assert 8 * 10 * n / machine.bandwidth("MEM", machine.cores) <= psw.MEMORY_SECONDS
    # where the step's vectors take longer to stream at the node's bandwidth: not measured in memory
    monkeypatch.setattr(psw, "MEMORY_SECONDS", 0.99 * 8 * 10 * n / machine.bandwidth("MEM", machine.cores))
    assert [lv for _, lv, _ in psw.measure_sizes(ivp, machine, 10, 0)] == [1]
    monkeypatch.undo()
    # nor where the caches are so large that n passes the most measured (however fast memory is)
    monkeypatch.setattr(psw, "MEMORY_SECONDS", 1e9)
    big = tuple(dataclasses.replace(c, bytes_per_group=c.bytes_per_group * 64) if i == len(machine.caches) - 1 else c
                for i, c in enumerate(machine.caches))
    assert [lv for _, lv, _ in psw.measure_sizes(ivp, dataclasses.replace(machine, caches=big), 10, 0)] == [1]
    monkeypatch.setattr(psw, "MOST_MEMORY_N", 10**12)
    assert [lv for _, lv, _ in psw.measure_sizes(ivp, dataclasses.replace(machine, caches=big), 10, 0)] == [1, 3]
    # the least valid size above the target: heat2d's n are squares
    heat = load_ivp("heat2d")
    (n, _, _), = [s for s in psw.measure_sizes(heat, machine, 10, 0) if s[1] == 3]
    side = math.isqrt(n)
    assert side * side == n and (side - 1) ** 2 < psw.memory_target(reach) <= n


def test_a_unit_is_priced_at_the_measurement_of_its_level_and_says_so():
    """The in-cache terms of a measured sweep's part scaled by its sweep's factor, the source and
    both figures kept on the result; the measurement at or above the data's level prices it."""
    from autotune.pipeline.pricebatch import _as_run
    from autotune.pipeline.sweepprice import at_level as _at_level
    from autotune.pipeline.layout import Unit
    from autotune.specs.parts import KernelPart
    from autotune.specs.scenario import Scenario
    from autotune.specs.ivp import load_ivp
    from autotune.specs.machine import load_machine
    from autotune.specs.method import load_method
    from autotune.request.defaults import DEFAULT_METHOD
    l2 = {"level": 1, "source": swmod.MEASURED, "factor": 3.0, "measured_s": 3.0, "analysed_s": 1.0}
    assert _at_level((l2,), 3) is l2 and _at_level((l2,), 0) is l2 and _at_level((), 2) is None
    # the measurement in memory prices data from memory alone
    mem = dict(l2, level=3, level_name="MEM", factor=1.4)
    assert _at_level((l2, mem), 3) is mem and _at_level((l2, mem), 2) is l2 and _at_level((l2, mem), 0) is l2
    assert _at_level((mem,), 3) is mem and _at_level((mem,), 2) is None
    # a run in memory that failed (or a record this CPU's store lacks) is no measurement: L2's prices
    failed = dict(mem, source=swmod.ANALYSED, measured_s=None, factor=1.0, why="not measured: the solver failed")
    assert _at_level((l2, failed), 3) is l2 and _at_level((failed,), 3) is None
    sc = Scenario(load_ivp("heat2d"), load_method(DEFAULT_METHOD),
                  load_machine(str(MACHINES / "haswell-ep-e5-2630v3.yaml")), 1_000_000, 1, 1)
    unit = Unit(KernelPart("p", "RHSLC", "", (), ()), (), 0)
    priced = _as_run(lambda part, regime: dict(OVERLAP), None, unit, 0, sc, l2)
    assert priced["terms"]["T_comp (overlapping)"] == 12.0 and priced["cy_per_cl"] == 12.0
    assert priced["sweep"] is l2
    kept = _as_run(lambda part, regime: dict(OVERLAP), None, unit, 0, sc, dict(l2, source=swmod.ANALYSED))
    assert kept["cy_per_cl"] == 9.0 and kept["sweep"]["source"] == swmod.ANALYSED


def test_the_streamed_rows_go_to_memory_at_the_measured_rate_at_any_size():
    from autotune.pipeline.layout import Unit
    from autotune.pipeline.sweepprice import streamed_seconds
    from autotune.specs.machine import StreamingStores
    from autotune.specs.parts import KernelPart
    part = KernelPart("p", "RHSLC", "", (), (("y", 1), ("Yn", 4)), stores=("Yn",))
    stores = (StreamingStores("MEM", "copy", (10e9, 16e9), (8e9, 12e9)),)
    # 4 rows of 1000 doubles: 32 kB at 10 GB/s on one thread, at 16 GB/s on two
    assert streamed_seconds(Unit(part, (), 0, ("Yn",)), 1000, 1, stores) == pytest.approx(3.2e-6)
    assert streamed_seconds(Unit(part, (), 0, ("Yn",)), 1000, 2, stores) == pytest.approx(2.0e-6)
    assert streamed_seconds(Unit(part, (), 0), 1000, 1, stores) == 0.0
    assert streamed_seconds(Unit(part, (), 0, ("Yn",)), 1000, 1, ()) == 0.0


x86_only = pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="an x86 machine file")


@x86_only
def test_a_fused_sweep_is_measured_on_this_host_stored_and_reused(tmp_path, private_builds, monkeypatch):
    """The variant's own solver runs on one rank: every fused group has a time per execution of
    the size a core takes for such a sweep; the ranking prices the sweep with it and says which
    figure it used; a second ranking reads the store; a host of another CPU measures nothing."""
    from autotune.pipeline import sweeps as psw
    from autotune.pipeline.layout import Session
    from autotune.request.defaults import DEFAULT_METHOD
    from autotune.specs.incoremeasure import cpu_key
    from autotune.specs.ivp import load_ivp
    from autotune.specs.machine import load_machine
    from autotune.specs.method import load_method
    from autotune.specs.variants import parse_variant
    from autotune.storage.store import Store
    from autotune.tools.cpuprobe import host_cpu
    from tests.test_incore import _file_with
    monkeypatch.setattr(psw, "ROUNDS", 2)
    monkeypatch.setattr(psw, "LEAST_N", 256)     # the pipelined step's 26 vectors in Haswell's 256 KiB L2
    monkeypatch.setattr(psw, "TILES", 1)
    monkeypatch.setattr(psw, "MEMORY_OVER", 0.05)   # "memory" at a size this host's test runs in a moment
    here = {"cpu": cpu_key(host_cpu()), "when": "always", "tolerance": 0.15}
    machine = load_machine(str(_file_with(tmp_path, here, "-O3 -march=native -fopenmp")))
    ivp, method = load_ivp("heat2d"), load_method(DEFAULT_METHOD)
    fused = parse_variant("lc=jl-onepass,comm=neighbour,au=fused,pred=direct,rhs=onepass,fuse=rhs-lc,block=l1",
                          ivp.comm)
    paper = parse_variant("lc=jil,comm=neighbour", ivp.comm)
    piped = parse_variant(fused.name + ",buf=ghost,pipe=wavefront", ivp.comm)
    ghost = parse_variant(fused.name + ",buf=ghost", ivp.comm)
    store = Store(tmp_path / "store.sqlite")
    layout = Session().layout(ivp, method, [paper, fused, piped, ghost])
    seen = []
    got = psw.ensure_sweeps(layout, ivp, method, machine, store, Callbacks(lambda d, t, n: seen.append(n)))
    assert {layout.units[u].part.kernel for u in got} == {"RHSLCD", "RHSLC", "RHSAU"}
    # the pipelined levels are one group, timed as the step that runs them: each level's unit with
    # how often it runs in that step (the predictor's level once, the corrector's m - 1 times, ...)
    piped_units = {u for u in got if layout.units[u].windowed}
    assert {layout.units[u].part.kernel for u in piped_units} == {"RHSLCD", "RHSLC", "RHSAU"}
    runs = {layout.units[u].part.kernel: got[u][0].executions for u in piped_units}
    assert runs == {"RHSLCD": 1, "RHSLC": method.iterations - 1, "RHSAU": 1}
    assert len({got[u][0].seconds for u in piped_units}) == 1          # one time for the step
    ghostly = {u for u in got if u not in piped_units and got[u][0].variant == ghost.name}
    assert {layout.units[u].part.kernel for u in ghostly} == {"RHSLCD", "RHSLC", "RHSAU"}   # other reuse distances
    for u, measures in got.items():
        # in L2 and in memory; a pipelined step in L2 alone (its rings stay in cache at any size)
        assert [(m.level, m.threads) for m in measures] == [(1, machine.cores)] + (
            [] if u in piped_units else [(3, machine.cores)])
        # buf=ghost runs the same sweeps as buf=pack: in memory, the first form's run measures both
        if u in ghostly:
            twin = next(v for v in got if v not in piped_units | ghostly
                        and layout.units[v].part.kernel == layout.units[u].part.kernel)
            assert measures[1] == dataclasses.replace(got[twin][1], form=ghost.name)
            assert measures[0].variant == ghost.name and measures[0].form == ""
            continue
        for m in measures:
            assert m.error == "" and m.variant == (piped.name if m.group == psw.PIPE else fused.name)
            assert (m.group == psw.PIPE) == (m.executions > 1 or layout.units[next(
                u for u in got if m in got[u])].windowed)
            # one sweep over n components on the file's cores (more than this host has):
            # between 0.1 and 100 ns per component
            assert 0.1e-9 < m.seconds / m.n < 100e-9, m
    assert seen[0] == psw.PROGRESS and any("built" in n for n in seen)

    def no_measuring(*a, **k):
        raise AssertionError("measured again")
    monkeypatch.setattr(psw, "measure", no_measuring)
    assert psw.ensure_sweeps(layout, ivp, method, machine, store) == got
    # a ranking that takes no unit's data from memory measures none there
    cached = psw.ensure_sweeps(layout, ivp, method, machine, store, in_memory=set())
    assert set(cached) == set(got) and all([m.level for m in ms] == [1] for ms in cached.values())
    corr = next(u for u in got if u not in piped_units and layout.units[u].part.kernel == "RHSLC")
    some = psw.ensure_sweeps(layout, ivp, method, machine, store, in_memory={corr})
    assert [m.level for m in some[corr]] == [1, 3] and all(len(some[u]) == 1 for u in piped_units)

    # a controlled ranking's sweeps are its fixed-step twins' (the same code): read, not measured
    from autotune.specs.variants import fixed_twin, spaces
    controlled = [parse_variant(v.name, spaces(ivp, True)) for v in (paper, fused, piped, ghost)]
    assert [fixed_twin(v) for v in controlled] == [paper, fused, piped, ghost]
    read = psw.ensure_sweeps(Session().layout(ivp, method, controlled), ivp, method, machine, store)
    assert sorted(m.seconds for ms in read.values() for m in ms) == sorted(m.seconds for ms in got.values() for m in ms)

    other = load_machine(str(_file_with(tmp_path, dict(here, cpu="GenuineIntel family 6 model 1"),
                                        "-O3 -march=native -fopenmp")))
    why = next(iter(psw.ensure_sweeps(layout, ivp, method, other, store).values()))[0].error
    assert "this host is not the CPU the file measures" in why
    assert psw.ensure_sweeps(layout, ivp, method, load_machine(str(MACHINES / "haswell-ep-e5-2630v3.yaml")),
                             store) == {}


def test_explain_lists_each_sweep_with_both_figures_and_the_one_used():
    from autotune.report.rank import _sweep_lines

    class Explained:
        def sweeps(self):
            return {"rhslc.heat2d.interior": [
                {"analysed_s": 2.9e-05, "measured_s": 3.766e-05, "region_s": 6.6e-07, "factor": 1.28, "n": 11664,
                 "level": 1,
                 "level_name": "L2", "source": swmod.MEASURED,
                 "why": "measured +28 % off the analysed loops (tolerance 10 %)"},
                {"analysed_s": 5.0e-03, "measured_s": 5.2e-03, "factor": 1.0, "n": 1265625, "level": 3,
                 "level_name": "MEM", "source": swmod.ANALYSED, "why": "measured within 10 %"}]}
    lines = _sweep_lines(Explained())
    assert lines[1].split()[:3] == ["fused", "sweep,", "s"]
    row = lines[2].split()
    # the region: in the measured time, priced as a barrier, not by k; a record without one: "-"
    assert row[:5] == ["rhslc.heat2d.interior", "2.900e-05", "3.766e-05", "6.60e-07", "1.28"] and "measured" in row
    # a part whose data comes from L3 and memory: a row for each measurement it takes
    assert lines[3].split()[:6] == ["5.000e-03", "5.200e-03", "-", "1.00", "n=1265625", "MEM"]
    assert _sweep_lines(type("None", (), {"sweeps": lambda self: {}})()) == []


def test_a_sweep_that_cannot_be_measured_borrows_the_factor_of_one_that_stores_alike():
    from types import SimpleNamespace

    from autotune.pipeline.layout import Unit
    from autotune.pipeline.sweepprice import borrowed
    from autotune.specs.parts import KernelPart
    corr = KernelPart("rhslc", "RHSLC", "", (), ())
    units = (Unit(corr, (), 0, (), (("block", "l1"),)), Unit(corr, (), 0, (), (("block", "l2"),)),
             Unit(corr, (), 0, ("Yn",), (("block", "l2"),)), Unit(corr, ((-1.0, 1),), 0, (), (("block", "l1"),)))
    layout = SimpleNamespace(units=units)
    assert units[3].windowed and not units[0].windowed
    info = {"level": 1, "source": swmod.MEASURED, "factor": 1.3, "variant": "v1", "why": "measured +30 %"}
    got = borrowed(layout, {0: ("m",), 1: (), 2: (), 3: ()}, {0: (info,)})
    # the streamed one has no donor that streams alike; the pipelined level none that is pipelined
    assert set(got) == {1}
    assert got[1][0]["factor"] == 1.3 and got[1][0]["borrowed"] and "v1" in got[1][0]["why"]
    # measured in memory alone, it borrows the donor's factor in cache and keeps its own in memory
    mem = dict(info, level=3, level_name="MEM", factor=1.6, variant="v2")
    got = borrowed(layout, {0: ("m",), 1: ("m",)}, {0: (info, dict(mem, factor=1.1)), 1: (mem,)})
    assert [(i["level"], i["factor"], bool(i.get("borrowed"))) for i in got[1]] == [(1, 1.3, True), (3, 1.6, False)]


def test_a_sweep_measured_in_memory_is_priced_as_the_pool_is_and_scales_every_term(tmp_path):
    """In memory the model's figure for the sweep is each part on the node's cores as the pool is
    priced there (kerncraft's saturation, every term), and the factor scales every term: the part
    is then priced at the measurement's seconds per component at any size in memory."""
    import math
    from autotune.model.ecm import ecm_numbers
    from autotune.model.steptime import regime_rate
    from autotune.pipeline.layout import Session, tile_of
    from autotune.model.regime import Regime
    from autotune.pipeline.pricebatch import Batch, _as_run, place, price
    from autotune.pipeline.sweeps import SweepMeasure
    from autotune.pipeline import sweepprice
    from autotune.pipeline.sweepprice import sweep_factors
    from autotune.request.defaults import DEFAULT_METHOD
    from autotune.specs.ivp import load_ivp
    from autotune.specs.machine import load_machine
    from autotune.specs.method import load_method
    from autotune.specs.scenario import Scenario
    from autotune.specs.variants import parse_variant
    from tests.test_incore import _file_with
    ivp, method = load_ivp("inverterchain"), load_method(DEFAULT_METHOD)
    machine = load_machine(str(_file_with(tmp_path, {"cpu": "GenuineIntel family 6 model 63", "when": "always",
                                                     "tolerance": 0.15})))
    fused = parse_variant("lc=jl-onepass,comm=neighbour,au=fused,pred=direct,rhs=onepass,fuse=rhs-lc,block=l1",
                          ivp.comm)
    ghost = parse_variant(fused.name + ",buf=ghost", ivp.comm)
    session = Session()
    layout = session.layout(ivp, method, [fused, ghost])
    batch = Batch(layout, [Scenario(ivp, method, machine, 8_000_000, 1, machine.cores)])
    place(batch)
    corr, twin = [u for u, unit in enumerate(layout.units) if unit.part.kernel == "RHSLC"]
    n, threads = 3_276_800, machine.cores
    result = dict(OVERLAP, scaling_cy_per_cl=[9.0, 4.5] + [4.5] * 14)   # memory-bound from two cores on
    cached = dict(OVERLAP, cy_per_cl=1.0, scaling_cy_per_cl=[1.0] * 16)  # what a regime in cache would say

    def result_of(part, regime):
        return result if regime.data == "MEM" else cached
    assert sweepprice.memory_units(batch.placed) >= {corr}
    measured = {corr: (SweepMeasure(fused.name, "RHSLC", n, 3, 0.004, threads=threads),),
                twin: (SweepMeasure(fused.name, "RHSLC", n, 3, 0.004, threads=threads, form=ghost.name),)}
    factors = sweep_factors(batch, result_of, measured, _as_run)
    info, = factors[corr]
    # buf=ghost's sweep measured by buf=pack's run (pipeline.sweeps.memory_twins): priced as its
    # own, not as a part of that sweep (which would halve the factor of both)
    assert factors[twin][0]["analysed_s"] == pytest.approx(info["analysed_s"])
    assert factors[twin][0]["factor"] == pytest.approx(info["factor"]) and "buf=pack" not in ghost.name
    # its why names the measuring form by what differs (the default buf), not by the whole name
    assert "timed in the run of the form with buf=pack," in factors[twin][0]["why"]
    assert fused.name not in factors[twin][0]["why"] and "timed in" not in info["why"]
    unit = layout.units[corr]
    m = math.ceil(ivp.part_components(ivp.rhs[unit.spec], n)) * unit.part.step      # its components at n
    lines = unit.part.iterations_per_m * m / (machine.cacheline / 8 / unit.part.loops[-1].step)
    # the part as the variant runs it: its tile's lines of F added between L1 and L2 (model.tiles)
    as_run = _as_run(result_of, Regime("MEM"), unit, tile_of(unit.tiling, machine, method.stages), batch.first)
    rate = regime_rate(*ecm_numbers(as_run)[:3], machine.clock_hz, threads, 1)
    assert info["level_name"] == "MEM" and info["n"] == n
    assert info["analysed_s"] == pytest.approx(as_run["scaling_cy_per_cl"][threads - 1] * lines / machine.clock_hz)
    assert info["analysed_s"] == pytest.approx(rate.alpha * lines / rate.divisor)
    # the sweep's region: its start and end, priced as one of the step's barriers, not in the factor
    from autotune.model.comm import barrier_seconds
    region = barrier_seconds(threads, machine.barrier["per_doubling_s"])
    assert threads > 1 and region > 0 and info["region_s"] == pytest.approx(region)
    assert info["source"] == swmod.MEASURED and info["factor"] == pytest.approx((0.004 - region) / info["analysed_s"])
    # priced at 8e6 in memory: the measured seconds per component, every term scaled (memory's too)
    priced = price(batch, result_of, session, measured)
    per_exec = priced.slot_seconds[next(i for i, s in enumerate(layout.slots) if s.unit == corr)] / next(
        s.executions for s in layout.slots if s.unit == corr)
    assert per_exec == pytest.approx((0.004 - region) * 8_000_000 / n, rel=1e-6)
    kept = priced.results[priced.key(corr, next(c for _, _, _, cs in batch.placed.levels[corr] for c in cs))]
    # every term of each of the sweep's loops (model.loops) scaled, memory's too
    assert kept["terms"].keys() == as_run["terms"].keys() and any("T_L3MEM" in t for t in kept["terms"])
    for term, v in as_run["terms"].items():
        assert kept["terms"][term] == pytest.approx(v * info["factor"])
    assert kept["sweep"]["level_name"] == "MEM"
    # a size whose data comes from L3 and memory: the model's figure is memory's regime alone
    split = Batch(layout, [Scenario(ivp, method, machine, 400_000, 1, machine.cores)])
    place(split)
    assert {level for level, *_ in split.placed.levels[corr]} == {2, 3}
    assert sweep_factors(split, result_of, measured, _as_run)[corr][0]["analysed_s"] == info["analysed_s"]
    # explain shows each measurement the part's data takes: L2's for what L3 serves, memory's
    from autotune.model.preselect import Rule
    from autotune.pipeline.scenariorows import rank_priced
    from autotune.results.rank import RankResult
    both = {corr: (SweepMeasure(fused.name, "RHSLC", 4096, 1, 1e-5, threads=threads),) + measured[corr]}
    rows, = rank_priced(price(split, result_of, session, both), Rule("all"), True)
    shown = RankResult(split.first, Rule("all"), source=rows).explain(fused.name).sweeps()[unit.part.name]
    assert [(i["level_name"], i["n"]) for i in shown] == [("L2", 4096), ("MEM", n)]
    # a batch whose data no level takes from memory has no pricing in memory: nothing would use it
    small = Batch(layout, [Scenario(ivp, method, machine, 40_000, 1, machine.cores)])
    place(small)
    assert sweepprice.memory_units(small.placed) == set()
    assert sweep_factors(small, result_of, measured, _as_run)[corr] == ()


def test_solvers_build_one_at_a_time_until_the_gate_widens(monkeypatch):
    """The sweeps' solvers may build while the in-core harnesses are timed on one core: at most
    `at_once` compilers run until widen() lets in as many as there are CPUs; results() waits for
    all, and says which failed and why."""
    import threading
    import time
    from autotune.errors import ToolError
    from autotune.tools import build as buildmod
    from autotune.tools import sweep_bench
    from autotune.tools.ecm_runner import local_workers
    lock, running, most = threading.Lock(), [0], [0]

    def build(source, flags, cc=None, parts=0):
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.05)
        with lock:
            running[0] -= 1
        if source == "broken":
            raise ToolError("mpicc: error: no such thing")
        return Path(f"/nowhere/{source}")
    monkeypatch.setattr(buildmod, "build", build)
    monkeypatch.setattr(buildmod, "find_mpicc", lambda: "mpicc")
    sources = {f"k{i}": f"s{i}" for i in range(4)}
    with sweep_bench.Building(sources, ()) as wide:
        built, failed = wide.results()
    assert most[0] == local_workers(None, 4) and failed == {} and list(built) == list(sources)
    most[0] = 0
    with sweep_bench.Building(dict(sources, bad="broken"), (), at_once=1) as narrow:
        time.sleep(0.3)        # three builds' time: one at a time, whatever the CPUs
        assert most[0] == 1
        seen = []
        built, failed = narrow.results(seen.append)
    assert set(built) == set(sources) and set(failed) == {"bad"} and "no such thing" in failed["bad"]
    assert seen[-1] == "5 of 5 built"

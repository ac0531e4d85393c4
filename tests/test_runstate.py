"""The machine's state in a tune run: a result priced at it (model.state), the reference the
machine file gives (specs.runstate), noisy probes.  Pure."""
import pytest

from autotune.model.learned import recombine
from autotune.model.state import at_state, level_bandwidth, retake_limit, strays
from autotune.specs.loading import parse_yaml
from autotune.specs.runstate import RunState, memory_reference
from autotune.specs.shipped import shipped_dir


def result(t_comp, t_l1l2, t_l2l3, t_l3mem):
    terms = {"T_comp (overlapping)": t_comp, "T_RegL1": 1.0, "T_L1L2": t_l1l2, "T_L2L3": t_l2l3, "T_L3MEM": t_l3mem}
    return recombine({"ok": True, "t_comp": t_comp, "scaling_cy_per_cl": [0.0] * 4}, terms, 4, 8)


def test_the_files_own_state_changes_nothing():
    r = result(8.0, 2.0, 3.0, 20.0)
    same = at_state(r, RunState(40e9, 3e9, 40e9, 3e9), 4, 8)
    assert same["cy_per_cl"] == r["cy_per_cl"] and same["scaling_cy_per_cl"] == r["scaling_cy_per_cl"]


def test_memory_terms_follow_the_bandwidth_and_core_terms_the_clock():
    mem_bound = result(8.0, 2.0, 3.0, 20.0)               # 1 + 2 + 3 + 20 = 26 > 8
    half_bw = at_state(mem_bound, RunState(20e9, 3e9, 40e9, 3e9), 4, 8)
    assert half_bw["cy_per_cl"] == pytest.approx(1 + 2 + 3 + 40)
    assert half_bw["terms"]["T_L3MEM"] == 40.0 and half_bw["terms"]["T_L2L3"] == 3.0
    fast_clock = at_state(mem_bound, RunState(40e9, 4.5e9, 40e9, 3e9), 4, 8)
    # cycles at the file's clock: the core and cache terms take 3/4.5 of them, memory keeps its seconds
    assert fast_clock["terms"]["T_L2L3"] == pytest.approx(2.0) and fast_clock["terms"]["T_L3MEM"] == 20.0
    assert fast_clock["t_comp"] == pytest.approx(8.0 * 3 / 4.5)
    core_bound = result(60.0, 2.0, 3.0, 20.0)
    assert at_state(core_bound, RunState(20e9, 3e9, 40e9, 3e9), 4, 8)["cy_per_cl"] == 60.0   # still the core's
    assert at_state(core_bound, RunState(40e9, 6e9, 40e9, 3e9), 4, 8)["cy_per_cl"] == pytest.approx(30.0)
    failed = {"ok": False, "error": "x"}
    assert at_state(failed, RunState(1e9, 1e9, 2e9, 2e9), 4, 8) is failed
    st = RunState(20e9, 6e9, 40e9, 3e9)
    assert level_bandwidth("MEM", 40e9, st) == 20e9 and level_bandwidth("L2", 100e9, st) == 200e9


def test_a_state_refuses_what_is_no_measurement():
    with pytest.raises(ValueError, match="bandwidth_Bps"):
        RunState(0.0, 3e9, 40e9, 3e9)
    st = RunState(30e9, 3.3e9, 40e9, 3e9)
    assert st.memory_factor == pytest.approx(4 / 3) and st.clock_factor == pytest.approx(3 / 3.3)
    assert "30.0 GB/s (0.75 x the file's), 3.30 GHz (1.10 x)" == st.describe()


def test_the_reference_is_the_files_triad_in_memory_at_the_busy_cores():
    path = shipped_dir("machines") / "haswell-ep-e5-2630v3.yaml"
    data = parse_yaml(path.read_text(), path)
    ref = memory_reference(data, 2, 2.4e9)
    row = next(iter(data["benchmarks"]["measurements"]["MEM"].values()))
    assert ref.cores == 2 and ref.bandwidth_Bps == pytest.approx(float(row["results"]["triad"][1].split()[0]) * 1e9)
    assert ref.bytes_per_thread > 100e6 and ref.clock_hz == 2.4e9
    assert memory_reference(data, 99, 2.4e9) is None
    assert memory_reference({"benchmarks": {}}, 1, 2.4e9) is None
    assert ref.state(ref.bandwidth_Bps / 2, 3e9).memory_factor == pytest.approx(2.0)


def test_a_probe_strays_from_the_runs_median_beyond_the_threshold():
    probe = lambda bw, ghz: {"bandwidth_Bps": bw * 1e9, "clock_hz": ghz * 1e9}  # noqa: E731
    calm = [probe(40, 3.6), probe(41, 3.6), probe(39, 3.6)]
    assert strays(calm[0], calm) is None
    odd = probe(52, 3.6)
    assert strays(odd, calm + [odd]) == "bandwidth +28 %"
    slow = probe(40, 2.9)
    assert strays(slow, calm + [slow]) == "clock -19 %"
    assert strays(odd, [calm[0], odd]) is None            # two probes have no median to stray from
    assert [retake_limit(k) for k in (1, 3, 7, 10)] == [1, 1, 2, 3]

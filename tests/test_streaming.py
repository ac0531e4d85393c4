"""Non-temporal stores priced (model.streaming): the write-allocate lines taken out of an ECM
result, by hand-counted streams.  Pure."""
import pytest

from autotune.errors import InputError
from autotune.model.learned import recombine
from autotune.model.streaming import line_ratios, memory_rate, stream_counts, streamed
from autotune.specs.machine import StreamingStores
from autotune.specs.parts import KernelPart, Loop


def _part(stores=("Yn",)):
    # a fused corrector sweep of s = 4: four argument rows and y read, four new rows written
    return KernelPart("rhslc.x.interior", "RHSLC", "", (Loop("j", "0", "M"),),
                      (("y", 4), ("Yn", 4), ("u", 1)), stores=stores)


def test_stream_counts_and_line_ratios_by_hand():
    assert stream_counts(_part(), ("Yn",)) == (5, 4, 4)
    # 5 + 2 * 4 = 13 lines per line of work with write-allocate (the fused sweep's 13 streams);
    # streamed: 5 between caches, 5 + 4 = 9 across the memory interface (the floor's 9)
    assert line_ratios(5, 4, 4) == (5 / 13, 9 / 13)
    assert line_ratios(5, 4, 0) == (1.0, 1.0) and line_ratios(0, 0, 0) == (1.0, 1.0)
    assert line_ratios(5, 4, 2) == (9 / 13, 11 / 13)


def test_streamed_result_scales_each_transfer_by_its_interface():
    terms = {"T_comp (overlapping)": 10.0, "T_RegL1 (overlapping)": 4.0, "T_L1L2": 13.0, "T_L2L3": 26.0,
             "T_L3MEM": 39.0}
    result = {"ok": True, "terms": terms, "cy_per_cl": 78.0, "t_comp": 10.0, "saturation_cores": 2,
              "scaling_cy_per_cl": [78.0, 39.0], "memory_bandwidth_kernel": "copy"}
    out = streamed(result, _part(), ("Yn",), numa_cores=2, socket_cores=2)
    # its memory transfer is of a kind of its own: a machine's runs fit its factor apart
    assert out["memory_bandwidth_kernel"] == "copy_nt" and result["memory_bandwidth_kernel"] == "copy"
    assert out["terms"]["T_L1L2"] == pytest.approx(5.0) and out["terms"]["T_L2L3"] == pytest.approx(10.0)
    assert out["terms"]["T_L3MEM"] == pytest.approx(27.0)
    assert out["terms"]["T_comp (overlapping)"] == 10.0 and out["t_comp"] == 10.0
    # the sum of the serial terms: 5 + 10 + 27 = 42 cycles per line, as kerncraft combines them
    assert out["cy_per_cl"] == pytest.approx(42.0)
    assert out == dict(recombine(result, out["terms"], 2, 2), memory_bandwidth_kernel="copy_nt",
                       nt_memory={"rate": "assumed", "factor": 1.0})
    # the lines the analysis counted move as the terms: 13 -> 5 between caches, 9 to memory
    counted = streamed(dict(result, lines={"L1-L2": 13.0, "L2-L3": 13.0, "L3-MEM": 13.0}), _part(), ("Yn",), 2, 2)
    assert counted["lines"] == pytest.approx({"L1-L2": 5.0, "L2-L3": 5.0, "L3-MEM": 9.0})
    # nothing streamed, a failed analysis: as they are
    assert streamed(result, _part(), (), 2, 2) is result
    failed = {"ok": False, "error": "x"}
    assert streamed(failed, _part(), ("Yn",), 2, 2) is failed


def _result():
    terms = {"T_comp (overlapping)": 10.0, "T_RegL1 (overlapping)": 4.0, "T_L1L2": 13.0, "T_L2L3": 26.0,
             "T_L3MEM": 39.0}
    return {"ok": True, "terms": terms, "cy_per_cl": 78.0, "t_comp": 10.0, "saturation_cores": 2,
            "scaling_cy_per_cl": [78.0, 39.0], "memory_bandwidth_kernel": "copy"}


def test_measured_streaming_stores_price_the_memory_transfer():
    """Where the machine measured copy with non-temporal stores, the memory term moves its lines at
    that rate against write-allocated copy's (bytes moved, both): slower than the assumption where
    the streamed stores are slower, faster where they are faster; only the memory term moves."""
    assumed = streamed(_result(), _part(), ("Yn",), 2, 2)
    # write-allocated copy moves 30 GB/s (20 named + its write-allocate read) on 2 cores, 24 on one
    slow = (StreamingStores("MEM", "copy", (12e9, 20e9), (24e9, 30e9)),)
    fast = (StreamingStores("MEM", "copy", (30e9, 40e9), (24e9, 30e9)),)
    assert memory_rate(slow, "copy", 2) == pytest.approx(30 / 20) and memory_rate(fast, "copy", 2) == pytest.approx(0.75)
    assert memory_rate(slow, "copy", 1) == pytest.approx(24 / 12)       # kerncraft's rule: the most of 1..cores
    assert memory_rate(slow, "triad", 2) is None and memory_rate((), "copy", 2) is None
    for stores, factor in ((slow, 1.5), (fast, 0.75)):
        out = streamed(_result(), _part(), ("Yn",), 2, 2, stores)
        assert out["terms"]["T_L3MEM"] == pytest.approx(assumed["terms"]["T_L3MEM"] * factor)
        assert {t: v for t, v in out["terms"].items() if t != "T_L3MEM"} == \
            {t: v for t, v in assumed["terms"].items() if t != "T_L3MEM"}
        assert out["nt_memory"] == {"rate": "measured", "factor": pytest.approx(factor)}
        assert out["memory_bandwidth_kernel"] == "copy_nt"
    assert streamed(_result(), _part(), ("Yn",), 2, 2, slow)["cy_per_cl"] > assumed["cy_per_cl"]
    assert streamed(_result(), _part(), ("Yn",), 2, 2, fast)["cy_per_cl"] < assumed["cy_per_cl"]
    # another level's measurement, or another kernel's, leaves the assumption
    other = (StreamingStores("L3", "copy", (1e9,), (2e9,)), StreamingStores("MEM", "triad", (1e9,), (2e9,)))
    assert streamed(_result(), _part(), ("Yn",), 2, 2, other) == assumed


def _shipped_data():
    from autotune.specs.loading import parse_yaml
    from autotune.specs.machine import load_machine
    m = load_machine(None)
    return m, parse_yaml(open(m.path).read(), m.path)


def test_a_machine_file_loads_with_and_without_streaming_stores():
    from autotune.specs.machine import parse_machine
    m, data = _shipped_data()
    assert m.streaming_stores == ()
    threads = list(range(1, m.cores + 1))
    data["streaming stores"] = {"note": "copy and triad with non-temporal stores",
                                "MEM": {"threads": threads, "size per thread": ["268.44 MB"] * m.cores,
                                        "copy_nt": ["10.00 GB/s"] * m.cores, "triad_nt": ["12.00 GB/s"] * m.cores}}
    nt = parse_machine(data, m.path, m.name)
    mem = data["benchmarks"]["measurements"]["MEM"][1]["results"]
    from autotune.specs.units import quantity
    copy = next(s for s in nt.streaming_stores if s.kernel == "copy")
    assert copy.level == "MEM" and copy.nt_bps == (10e9,) * m.cores
    # write-allocated copy's bandwidth as kerncraft counts it: with its write-allocate read (x 1.5)
    assert copy.allocated_bps[0] == pytest.approx(1.5 * quantity(mem["copy"][0], "bandwidth"))
    triad = next(s for s in nt.streaming_stores if s.kernel == "triad")
    assert triad.allocated_bps[-1] == pytest.approx(1.25 * quantity(mem["triad"][-1], "bandwidth"))
    # what the schema and the parser refuse, with the field
    bad = dict(data, **{"streaming stores": {"MEM": {"threads": threads, "copy": ["10 GB/s"] * m.cores}}})
    with pytest.raises(InputError, match=r"streaming stores\.MEM\.copy.*_nt"):
        parse_machine(bad, m.path, m.name)
    bad = dict(data, **{"streaming stores": {"MEM": {"threads": threads, "copy_nt": ["fast"] * m.cores}}})
    with pytest.raises(InputError, match=r"streaming stores\.MEM\.copy_nt"):
        parse_machine(bad, m.path, m.name)
    bad = dict(data, **{"streaming stores": {"MEM": {"threads": threads, "copy_nt": ["1 GB/s"]}}})
    with pytest.raises(InputError, match="thread counts"):
        parse_machine(bad, m.path, m.name)
    bad = dict(data, **{"streaming stores": {"mem": {"threads": threads, "copy_nt": ["1 GB/s"] * m.cores}}})
    with pytest.raises(InputError, match=r"streaming stores\.mem': not a level of the memory hierarchy"):
        parse_machine(bad, m.path, m.name)


def test_store_nt_stays_out_where_the_streamed_vectors_would_stay_in_the_last_level():
    """The rule per scenario: on the reference node (20 MB L3 for 8 cores), heat2d on one node
    streams where the argument vectors it writes are read again only after the L3 has moved on
    (about 8 vectors touched since each), and not where the whole step fits."""
    from autotune.pipeline.applicable import applicable_pool, drop_unpaid
    from autotune.specs.exclusion import Exclusions
    STREAMING = "store=nt"
    from autotune.specs.ivp import load_ivp
    from autotune.specs.machine import load_machine
    from autotune.specs.method import load_method
    from autotune.specs.scenario import Scenario
    ivp, method, machine = load_ivp("heat2d"), load_method("radauIIA7"), load_machine(None)
    big = Scenario(ivp, method, machine, 2000 ** 2, 1, 8)        # 32 MB per vector
    small = Scenario(ivp, method, machine, 300 ** 2, 1, 8)       # 0.72 MB per vector: 9 of them fit
    pool, excluded = applicable_pool(big)
    assert STREAMING not in excluded and sum(v.store == "nt" for v in pool) > 0
    pool, excluded = applicable_pool(small)
    assert not any(v.store == "nt" for v in pool) and "last-level cache" in excluded[STREAMING].why
    # a selection of store=nt variants only keeps them (and says nothing): the user asked for them
    nt = [v for v in applicable_pool(big)[0] if v.store == "nt"]
    assert drop_unpaid(small, nt) == (nt, Exclusions())


def test_a_learned_factor_on_streamed_memory_transfers_prices_store_nt_alone(replay_store):
    """The factors are applied after the streaming layer: a factor on copy_nt (a machine whose
    non-temporal stores move lines slower than kerncraft's bandwidth says) moves the store=nt
    variants and leaves the others as they were."""
    from dataclasses import replace

    from autotune.model.preselect import Rule
    from autotune.pipeline.predict import rank_scenario
    from autotune.specs.ivp import load_ivp
    from autotune.specs.learned import Learned
    from autotune.specs.machine import load_machine
    from autotune.specs.method import load_method
    from autotune.specs.scenario import Scenario, applicable_variants
    from autotune.storage.store import Store
    from autotune.tools.toolchain import package_version

    m = load_machine(None)
    slow = replace(m, learned=Learned({"RHS/L3-MEM:copy_nt": 3.0}, 1, 1, package_version("kerncraft"), "x"))
    times = []
    store = Store(replay_store)
    for machine in (m, slow):
        sc = Scenario(load_ivp("heat2d"), load_method("radauIIA7"), machine, 4_000_000, 1, 8)
        pool = [v for v in applicable_variants(sc)[0] if v.fuse != "none" and v.overlap == "none"
                and v.comm == "neighbour"]
        ranked = rank_scenario(sc, pool, Rule("all"), store)
        times.append({r.variant.name: r.predicted_s for r in ranked.ordered})
    store.close()
    nt = [v for v in times[0] if "store=nt" in v]
    assert nt and len(nt) < len(times[0])
    for name, t in times[0].items():
        assert (times[1][name] > 1.2 * t) if name in nt else times[1][name] == t

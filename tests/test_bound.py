"""The floor of a step (model.bound) against hand-computed cases."""
import pytest

from autotune.model.bound import (compulsory_vectors, live_vectors, rhs_evaluations, source_shares, step_bound,
                                  written_vectors)


def test_compulsory_vectors_by_hand():
    # Radau IIA 7: s = 4, m = 6: 24 argument vectors read, 24 written, y read 6 times, y read+written once
    assert compulsory_vectors(4, 6) == 24 + 24 + 6 + 2 == 56
    # one stage, one iteration (an explicit-Euler-like corrector): read Y, write Y, read y, update y
    assert compulsory_vectors(1, 1) == 5
    assert live_vectors(4) == 9 and rhs_evaluations(4, 6) == 25


def test_memory_bound_case_by_hand():
    # 4,476,032 components per node, 40 GB/s.  The step's own traffic: y in, the new y out, 2 * 8 B
    # * 4,476,032 = 71,616,512 B -> 1.79 ms; the sweeps' floor: 56 vectors, 2,005,262,336 B -> 50.13 ms
    b = step_bound(4_476_032, 4, 6, [("MEM", 1.0, 40e9)], rhs_core_cycles=1e6, clock_hz=2.4e9, cores=8, comm_s=1e-3)
    assert b.bytes == 2 * 8 * 4_476_032 == 71_616_512
    assert b.mem_s == pytest.approx(71_616_512 / 40e9)
    assert b.core_s == pytest.approx(25 * 1e6 / (2.4e9 * 8))          # 1.30 ms: memory decides, just
    assert b.total_s == pytest.approx(b.mem_s + 1e-3) and b.level == "MEM"
    assert b.wa_bytes == 3 * 8 * 4_476_032 and b.wa_total_s == pytest.approx(3 * 8 * 4_476_032 / 40e9 + 1e-3)
    sw = b.sweep
    assert sw.bytes == 56 * 8 * 4_476_032
    assert sw.mem_s == pytest.approx(2_005_262_336 / 40e9)
    assert sw.total_s == pytest.approx(sw.mem_s + 1e-3) and sw.level == "MEM"
    # with write-allocate: the 24 argument vectors and y are read once more, 81 vectors
    assert written_vectors(4, 6) == 25
    assert sw.wa_bytes == 81 * 8 * 4_476_032
    assert sw.wa_mem_s == pytest.approx(81 * 8 * 4_476_032 / 40e9)
    assert sw.wa_total_s == pytest.approx(sw.wa_mem_s + 1e-3)


def test_core_bound_case_by_hand():
    # an expensive RHS (40 cycles per component, 1e6 components) on 2 cores at 2 GHz beats a fast memory
    b = step_bound(1_000_000, 4, 6, [("L3", 1.0, 1e12)], rhs_core_cycles=40e6, clock_hz=2e9, cores=2, comm_s=0.0)
    assert b.core_s == pytest.approx(25 * 40e6 / 4e9) == pytest.approx(0.25)
    assert b.mem_s == pytest.approx(16e6 / 1e12) and b.total_s == pytest.approx(0.25)
    assert b.sweep.mem_s == pytest.approx(448e6 / 1e12) and b.sweep.total_s == pytest.approx(0.25)
    assert b.wa_total_s == b.sweep.wa_total_s == pytest.approx(0.25)   # the write-allocate reads hide too


def test_live_data_partly_cached_by_hand():
    # 9 live vectors of 1 MB; levels holding 1 MB and (cumulative) 6 MB: L1 1/9, L2 5/9, memory 3/9
    shares = source_shares(9e6, (1e6, 6e6))
    assert shares == pytest.approx((1 / 9, 5 / 9, 3 / 9))
    assert source_shares(9e6, (20e6, 40e6)) == pytest.approx((1.0, 0.0, 0.0))   # all fits the first
    # the sweeps' 56 MB of traffic: 1/9 at 100 GB/s, 5/9 at 50 GB/s, 3/9 at 10 GB/s; the step's 2 live
    # vectors (2 MB) at the same levels: 1/2 from L1, 1/2 from L2
    sweep = [("L1", 1 / 9, 100e9), ("L2", 5 / 9, 50e9), ("MEM", 3 / 9, 10e9)]
    step = [("L1", 0.5, 100e9), ("L2", 0.5, 50e9), ("MEM", 0.0, 10e9)]
    assert source_shares(2e6, (1e6, 6e6)) == pytest.approx((0.5, 0.5, 0.0))
    b = step_bound(125_000, 4, 6, step, rhs_core_cycles=1.0, clock_hz=2e9, cores=2, comm_s=0.0, sweep_sources=sweep)
    assert b.sweep.bytes == 56e6 and b.bytes == 2e6
    assert b.sweep.mem_s == pytest.approx(56e6 * (1 / 9 / 100e9 + 5 / 9 / 50e9 + 3 / 9 / 10e9))
    assert b.sweep.level == "L1 11% + L2 56% + MEM 33%" and b.level == "L1 50% + L2 50%"
    assert b.sweep.bandwidth_Bps == pytest.approx(56e6 / b.sweep.mem_s)
    assert b.mem_s == pytest.approx(2e6 * (0.5 / 100e9 + 0.5 / 50e9))

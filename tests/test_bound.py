"""The floor of a step (model.bound) against hand-computed cases."""
import pytest

from autotune.model.bound import compulsory_vectors, live_vectors, rhs_evaluations, step_bound


def test_compulsory_vectors_by_hand():
    # Radau IIA 7: s = 4, m = 6: 24 argument vectors read, 24 written, y read 6 times, y read+written once
    assert compulsory_vectors(4, 6) == 24 + 24 + 6 + 2 == 56
    # one stage, one iteration (an explicit-Euler-like corrector): read Y, write Y, read y, update y
    assert compulsory_vectors(1, 1) == 5
    assert live_vectors(4) == 9 and rhs_evaluations(4, 6) == 25


def test_memory_bound_case_by_hand():
    # 4,476,032 components per node, 40 GB/s: 56 * 8 B * 4,476,032 = 2,005,262,336 B -> 50.13 ms
    b = step_bound(4_476_032, 4, 6, "MEM", 40e9, rhs_core_cycles=1e6, clock_hz=2.4e9, cores=8, comm_s=1e-3)
    assert b.bytes == 56 * 8 * 4_476_032
    assert b.mem_s == pytest.approx(2_005_262_336 / 40e9)
    assert b.core_s == pytest.approx(25 * 1e6 / (2.4e9 * 8))          # 1.30 ms: memory decides
    assert b.total_s == pytest.approx(b.mem_s + 1e-3) and b.level == "MEM"


def test_core_bound_case_by_hand():
    # an expensive RHS (40 cycles per component, 1e6 components) on 2 cores at 2 GHz beats a fast memory
    b = step_bound(1_000_000, 4, 6, "L3", 1e12, rhs_core_cycles=40e6, clock_hz=2e9, cores=2, comm_s=0.0)
    assert b.core_s == pytest.approx(25 * 40e6 / 4e9) == pytest.approx(0.25)
    assert b.mem_s == pytest.approx(448e6 / 1e12) and b.total_s == pytest.approx(0.25)

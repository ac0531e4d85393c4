"""Where a part's data comes from (model.reuse): distances over the step, level shares, reach."""
import math

import pytest

from autotune.model.ops import SCALAR
from autotune.model.reuse import level_reach, level_shares_of, part_distances, reuse_distances
from autotune.specs import methodparts as mp
from autotune.specs.machine import load_machine
from autotune.specs.method import load_method
from autotune.specs.step import Sweep

from .forms import form

RADAU = load_method("radauIIA7")   # s = 4, m = 6


def level_shares(distances, vector_bytes, reach):
    return tuple(level_shares_of(SCALAR, distances, vector_bytes, reach))


def test_distances_of_a_small_cycle_by_hand():
    # A touches a and b, B touches c, C touches a; the step repeats
    sweeps = [Sweep("X", "A", ("a", "b")), Sweep("X", "B", ("c",)), Sweep("X", "C", ("a",))]
    d = reuse_distances(sweeps)
    # a in A: last touched in C just before (a step ago); b streams beside a in A only: 1/2
    # b in A: last touched in A a step ago; C (a) and B (c) lie between: 2
    assert d[0] == (0.5, 2.0)
    # c in B: a step ago; A (a, b) and C (a) between: 2
    assert d[1] == (2.0,)
    # a in C: last in A; B (c) between: 1, b beside a in A: 1/2
    assert d[2] == (1.5,)
    assert part_distances(sweeps) == {"A": ((0.5, 1), (2.0, 1)), "B": ((2.0, 1),), "C": ((1.5, 1),)}


def test_streamed_writes_and_the_reads_after_them_come_from_memory():
    # A reads a and writes b with non-temporal stores, B reads b and c: b's write and the read
    # that follows it bypass the caches (infinity); a and c are priced as before (B lies between
    # a's touches, A between c's: 2 vectors each)
    sweeps = [Sweep("X", "A", ("a",), ("b",), ("b",)), Sweep("X", "B", ("b", "c"))]
    d = reuse_distances(sweeps)
    assert d[0] == (2.0, math.inf) and d[1] == (math.inf, 2.0)
    shares = level_shares_of(SCALAR, ((math.inf, 1),), 1e6, (1e9, 2e9))
    assert shares == [0.0, 0.0, 1.0]        # however large the caches: memory
    # the fused form with store=nt: the written argument vectors (4 per sweep) and their reads in
    # the next sweep; y stays where it was
    fused = dict(lc="jl-onepass", au="fused", pred="direct", buf="ghost", rhs="onepass", fuse="rhs-lc", block="l1")
    plain = part_distances(form(RADAU, **fused).sweeps())
    nt = part_distances(form(RADAU, **fused, store="nt").sweeps())
    assert all(d != math.inf for k in plain for d, _ in plain[k])
    assert dict(nt["RHSLC"])[math.inf] == 5 * 8     # 5 corrector sweeps: 4 reads and 4 writes each
    assert dict(nt["RHSLCD"])[math.inf] == 4 and dict(nt["RHSAU"])[math.inf] == 4   # writes; the last reads


def test_level_shares_by_hand():
    reach = (1.5e6, 3e6)       # bytes the two levels hold (cumulative), vectors of 1 MB
    # one vector at distance 1: L1 keeps (1.5 - 1) / 1 of it, L2 all of it
    assert level_shares(((1.0, 1),), 1e6, reach) == pytest.approx((0.5, 0.5, 0.0))
    # plus one at distance 4: nothing holds it
    assert level_shares(((1.0, 1), (4.0, 1)), 1e6, reach) == pytest.approx((0.25, 0.25, 0.5))
    # a share below 2 % joins the next level out (one kerncraft analysis less)
    assert level_shares(((2.99, 1),), 1e6, reach) == pytest.approx((0.0, 0.0, 1.0))
    # everything close and small: the first level
    assert level_shares(((0.0, 3),), 1e5, reach) == pytest.approx((1.0, 0.0, 0.0))


def test_shares_move_gradually_from_cache_to_memory():
    reach = level_reach(load_machine("zen4-epyc-vm-2core"), 2)
    dist = part_distances(form(RADAU, "jli").sweeps())["lc.acc.jli"]
    mem = [level_shares(dist, 8.0 * n, reach)[-1] for n in range(100_000, 2_000_001, 50_000)]
    assert mem[0] == 0.0 and mem[-1] == 1.0
    assert all(b >= a for a, b in zip(mem, mem[1:]))                     # more memory as n grows
    assert max(b - a for a, b in zip(mem, mem[1:])) < 0.25               # no step: a ramp


def test_reach_of_victim_and_inclusive_caches():
    # Zen 4: 32 kB L1 and 1 MB L2 per core; the 32 MB L3 takes the L2's victims (exclusive)
    assert level_reach(load_machine("zen4-epyc-vm-2core"), 2) == (64 * 1024, 2 * 2**20, 32 * 2**20 + 2 * 2**20)
    # Haswell: inclusive 20 MB L3 shared by the socket's 8 cores
    assert level_reach(load_machine("haswell-ep-e5-2630v3"), 8) == (8 * 32 * 1024, 8 * 256 * 1024, 20 * 2**20)


def test_rows_a_part_touches():
    first, acc, fin = mp.lc_specs(RADAU.stages, "jli")
    assert first.rows() == {"Y": (0, 1, 2, 3), "F": (0,)}
    assert acc.rows() == {"Y": (0, 1, 2, 3), "F": (1, 2, 3)}
    assert fin.rows() == {"Y": (0, 1, 2, 3), "y": (0,)}


def test_step_sweeps_of_a_paper_form_and_of_all_fast_forms():
    paper = form(RADAU, "jli").sweeps()
    # predictor: pack y, f(y), 3 copies; 6 x (3 LC parts, 4 packs, 4 RHS); APPROX (2 parts), UPDATE
    assert len(paper) == 1 + 1 + 3 + 6 * 11 + 3
    assert paper[1] == Sweep("RHS", None, ("By",), ("F1",))
    assert (paper[5].reads, paper[5].writes) == (("F1",), ("Y1", "Y2", "Y3", "Y4"))    # lc.first
    assert [s.vectors for s in paper[8:10]] == [("Y1", "B1"), ("Y2", "B2")]  # packs after LC
    fast = form(RADAU, "jl-onepass", "fused", "direct", "ghost", "onepass").sweeps()
    # f(y) in place; LC from F_1 and one RHS sweep; 5 x (LC, RHS sweep); fused APPROX/UPDATE
    assert [s.part or s.group for s in fast] == (["RHS", "lc.direct.jl", "RHSALL"] + ["lc.onepass.jl", "RHSALL"] * 5
                                                 + ["approx_update.fused"])
    assert (fast[2].reads, fast[2].writes) == (("Y1", "Y2", "Y3", "Y4"), ("F1", "F2", "F3", "F4"))

"""A fused sweep priced as the loops it runs over each tile (model.loops, codegen.parts.tile_loops),
by hand-counted lines and cycles.  Pure."""
import math

import pytest

from autotune.codegen.parts import STREAM_ROW, tile_loops
from autotune.model import loops as lmod
from autotune.model.learned import adjust, combined, loop_groups, scaling
from autotune.model.regime import Regime
from autotune.request.defaults import DEFAULT_METHOD
from autotune.specs.ivp import load_ivp
from autotune.specs.method import load_method
from autotune.specs.parts import KernelPart, Loop, TileLoop

NAMES = ("L1", "L2", "L3", "MEM")


def _heat2d(group, streaming):
    loops, = tile_loops(load_ivp("heat2d"), load_method(DEFAULT_METHOD), group, streaming)
    return loops


def test_the_loops_are_the_solvers_per_tile():
    """The corrector's sweep with store=nt: the RHS of the s argument vectors into F, the linear
    combination from F into the staging rows, then those rows streamed out; the last sweep's
    APPROX+UPDATE streams nothing.  Each weight is its lines of work per line of the sweep."""
    s = load_method(DEFAULT_METHOD).stages
    rhs, lc, copy = _heat2d("RHSLC", True)
    assert rhs.part.name == "rhs.heat2d.interior.onepass" and rhs.resident == ("F",) and rhs.weight == s
    assert lc.part.name == "lc.onepass.jl" and lc.resident == ("F", "Y") and lc.weight == s
    assert " + a[l][1] * F[1][j]" in lc.part.body        # the solver's macro, kernels.j2 lc_onepass
    assert copy.part.name == STREAM_ROW and copy.streams == ("b",) and copy.resident == ("v",) and copy.weight == s
    rhs, lc = _heat2d("RHSLC", False)
    assert lc.resident == ("F",)                          # new rows straight into the vectors
    rhs, au = _heat2d("RHSAU", True)
    assert au.part.name == "approx_update.fused" and au.weight == 1.0 and not au.streams
    rhs, lcd, _ = _heat2d("RHSLCD", True)
    assert rhs.part.name == "rhs.heat2d.interior" and rhs.weight == 1.0 and lcd.part.name == "lc.direct.jl"


def test_array_lines_count_each_row_a_loop_touches():
    s = load_method(DEFAULT_METHOD).stages
    _, lcd, copy = _heat2d("RHSLCD", True)
    assert lmod.array_lines(lcd.part) == {"Y": 2.0 * s, "y": 1.0, "F": 1.0}     # F[0] alone is read
    _, au = _heat2d("RHSAU", False)
    assert lmod.array_lines(au.part) == {"y": 2.0, "F": float(s)}               # y read and written back
    assert lmod.array_lines(copy.part) == {"b": 2.0, "v": 1.0}
    rhs, _ = _heat2d("RHSAU", False)                                             # no declared accesses
    assert lmod.array_lines(rhs.part) == {"y": float(s), "F": 2.0 * s}


def test_what_stays_in_the_tile_crosses_no_interface_beyond_it():
    """APPROX+UPDATE with F in L1: y's 2 of the 6 lines between the caches; into memory the
    compulsory lines (y's 2) over what the analysis counted there.  The streamed copy: none
    between the caches, one line a row into memory."""
    _, au = _heat2d("RHSAU", False)
    ratios = lmod.interface_ratios(au, 0, NAMES, {"L3-MEM": 6.0})
    assert ratios == pytest.approx({"L1-L2": 2 / 6, "L2-L3": 2 / 6, "L3-MEM": 2 / 6})
    # kerncraft's cache simulation counted 1 line into memory where the loop moves 2: scaled up
    assert lmod.interface_ratios(au, 0, NAMES, {"L3-MEM": 1.0})["L3-MEM"] == pytest.approx(2.0)
    # F in L2 (block=l2): it crosses L1-L2, not beyond
    assert lmod.interface_ratios(au, 1, NAMES)["L1-L2"] == 1.0
    *_, copy = _heat2d("RHSLC", True)
    assert lmod.interface_ratios(copy, 0, NAMES, {"L3-MEM": 3.0}) == pytest.approx(
        {"L1-L2": 0.0, "L2-L3": 0.0, "L3-MEM": 1 / 3})


def _result(comp, mem, bw="copy"):
    terms = {"T_comp (overlapping)": comp, "T_RegL1 (overlapping)": comp / 2, "T_L1L2 (overlapping)": 1.0,
             "T_L2L3 (overlapping)": 1.0, "T_L3MEM": mem}
    return {"ok": True, "terms": terms, "cy_per_cl": combined(terms), "t_comp": comp, "t_regl1": comp / 2,
            "saturation_cores": 2.0, "scaling_cy_per_cl": [0.0, 0.0], "memory_bandwidth_kernel": bw,
            "lines": {"L1-L2": 2.0, "L2-L3": 2.0, "L3-MEM": 2.0}}


def _loop(name, weight):
    return TileLoop(KernelPart(name, "LC", "", (Loop("j", "0", "M"),), (("a", 1),)), weight)


def test_the_loops_add_where_one_loop_would_hide_one_behind_the_other():
    """A compute-bound loop (10 cy in the core, 2 from memory) then a memory-bound one (0.5 and 6,
    twice per line of the sweep): one after the other they take 10 + 12 = 22 cy; their terms
    summed as one loop would give max(11, 14) = 14.  On the node's cores each loop saturates
    alone (the threads run them together): the curve is the sum of the loops' curves, the
    memory-bound loop saturating at 2 cores, the other not."""
    got = lmod.summed([(_loop("rhs", 1.0), _result(10.0, 2.0)), (_loop("lc", 2.0), _result(0.5, 6.0, "triad"))], 2, 2)
    assert got["cy_per_cl"] == pytest.approx(22.0)
    assert [g["T_L3MEM"] for g in loop_groups(got["terms"])] == [2.0, 12.0]
    (s1, c1), (s2, c2) = scaling(10.0, 2.0, 2, 2), scaling(12.0, 12.0, 2, 2)
    assert (s1, s2) == (math.inf, 2) and c2 == pytest.approx([12.0, 12.0])
    assert got["saturation_cores"] == 2 and got["scaling_cy_per_cl"] == pytest.approx([a + b for a, b in zip(c1, c2)])
    assert got["t_comp"] == pytest.approx(11.0) and got["lines"]["L3-MEM"] == pytest.approx(6.0)
    assert [(e["part"], e["weight"], e["cy_per_cl"]) for e in got["loops"]] == [("rhs", 1.0, 10.0), ("lc", 2.0, 12.0)]
    # a learned factor on one loop's memory kernel scales that loop's transfer alone
    scaled = adjust(got, "RHSLC", {"RHS/L3-MEM:triad": 2.0}, 2, 2)
    assert [g["T_L3MEM"] for g in loop_groups(scaled["terms"])] == [2.0, 24.0]
    assert scaled["cy_per_cl"] == pytest.approx(34.0)
    # one loop's terms alone: kerncraft's curve of the one loop
    one = lmod.summed([(_loop("lc", 1.0), _result(0.5, 6.0))], 2, 2)
    assert one["scaling_cy_per_cl"] == pytest.approx(scaling(6.0, 6.0, 2, 2)[1])


def test_a_failed_loop_fails_the_sweep_and_is_named():
    got = lmod.summed([(_loop("rhs", 1.0), _result(1.0, 1.0)),
                       (_loop("lc", 1.0), {"ok": False, "error": "no layer condition"})], 2, 2)
    assert not got["ok"] and got["error"] == "lc: no layer condition"


def test_a_loop_without_reuse_is_analysed_without_a_layer_condition():
    rhs, au = _heat2d("RHSAU", False)
    regime = Regime("MEM", "L2")
    assert lmod.loop_regime(rhs.part, regime) == regime              # the stencil's rows
    assert lmod.loop_regime(au.part, regime) == Regime("MEM", None)

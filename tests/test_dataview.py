"""The cache half of an analysis: which predictor each (part, regime) gets, the data view the
layer conditions read, and our corrections to kerncraft's predictor (pure: no kerncraft run)."""
import re

import pytest

from autotune.codegen.dataview import data_view
from autotune.codegen.parts import fused_parts, lc_parts, rhs_parts
from autotune.model.regime import Regime, cache_predictor
from autotune.specs.ivp import ivp_names, load_ivp
from autotune.specs.method import load_method
from autotune.tools import kerncraft_patches as kp

METHOD = load_method("radauIIA7")


def _statements(view: str) -> list[str]:
    body = view.strip().split("\n")[-1].strip()
    return [s.strip() + ";" for s in body.strip("{} ").split(";") if s.strip()]


def test_the_view_writes_the_short_loops_out_in_their_order():
    acc = lc_parts(METHOD, "jil")[1]          # for j: for i in 1..3: for l in 0..3: Y[l][j] += a[l][i] F[i][j]
    view = data_view(acc, {"M": 1000})
    stmts = _statements(view)
    assert len(stmts) == acc.unroll == 12
    assert stmts[0] == "Y[0][j] = Y[0][j] + a * F[1][j];" and stmts[-1] == "Y[3][j] = Y[3][j] + a * F[3][j];"
    assert [ln.strip() for ln in view.splitlines() if ln.strip().startswith("for")] == \
        ["for (int j = 0; j < M; j++)"]
    assert "double a;" in view and "double a[4][4];" not in view   # coefficients read as scalars


def test_a_loop_outside_j_stays_and_one_without_short_loops_is_its_own_code():
    acc = lc_parts(METHOD, "ijl")[1]
    view = data_view(acc, {"M": 1000})
    assert [ln.strip() for ln in view.splitlines() if ln.strip().startswith("for")] == \
        ["for (int i = 1; i < 4; i++)", "for (int j = 0; j < M; j++)"]
    assert len(_statements(view)) == acc.unroll == 4
    first = lc_parts(METHOD, "lji")[0]         # for l: for j: Y[l][j] = a[l][0] F[0][j]
    assert data_view(first, {"M": 8}) == first.code.replace("a[4][4]", "a").replace("a[l][0]", "a")


def test_the_size_parameter_becomes_its_value():
    heat = rhs_parts(load_ivp("heat2d"))[0]
    view = data_view(heat, {"M": 4000, "N": 1234})
    assert "y[j-1234]" in view and "y[j+1234]" in view and "M + 2*1234" in view
    assert not re.search(r"\bN\b", view)


@pytest.mark.parametrize("ivp", ivp_names())
def test_every_rhs_part_has_a_view_with_as_many_statements_as_its_unroll(ivp):
    spec = load_ivp(ivp)
    for part in rhs_parts(spec) + rhs_parts(spec, METHOD.stages) + fused_parts(spec, METHOD, "RHSLC"):
        consts = {"M": 1000, **({part.size_parameter: 50} if part.size_parameter else {})}
        view = data_view(part, consts)
        assert view is not None, part.name
        if part.loops[-1].var != "j":
            assert len(_statements(view)) == part.unroll, part.name


def test_layer_conditions_where_they_count_what_the_simulation_counts():
    heat, heat_all = rhs_parts(load_ivp("heat2d"))[0], rhs_parts(load_ivp("heat2d"), 4)[0]
    assert cache_predictor(heat, Regime("MEM", "L3")) == "LC"       # a stencil's rows: LC counts them
    assert cache_predictor(heat_all, Regime("MEM", "L2")) == "SIM"  # 4 rows of one shape: set conflicts
    mix = rhs_parts(load_ivp("string-mix"))[0]                       # j += 2
    assert cache_predictor(mix, Regime("MEM")) == "SIM"
    first_lj = lc_parts(METHOD, "lji")[0]         # the j sweep repeated for every l
    assert first_lj.sweep_bytes_per_component > 0
    assert cache_predictor(first_lj, Regime("MEM")) == "LC"         # nothing reused: nothing to miss
    assert cache_predictor(first_lj, Regime("MEM", "L3")) == "SIM"  # the next l reads F[0] from L3


def test_a_row_beyond_the_second_of_a_padded_array_splits_whole():
    import sympy
    from kerncraft.cacheprediction import split_sympy_access_in_dim_offset as kerncrafts
    M, j = (sympy.Symbol(s, positive=True, integer=True) for s in "Mj")
    third = 2 * (M + 180) + j - 90          # y[2][j-90] of y[4][M + 2*90]
    with pytest.raises(ValueError):
        kerncrafts(third, [M + 180, 1])      # kerncraft 0.8.18 loses the 2*M: "Unable to split"
    split = kp.split_access(third, [M + 180, 1])
    assert split == (0, 2 * M + j + 270) and split[0] * (M + 180) + split[1] == third.expand()
    for expr, factors in [(j + 90, [1]), ((M + 180) + j - 90, [M + 180, 1]), (M * j + 3, [M, 1])]:
        assert kp.split_access(expr, factors) == kerncrafts(expr, factors)


def test_a_victim_cache_receives_every_line_its_upper_level_evicts():
    hierarchy = [{"level": "L1", "cache per group": {"store_to": "L2"}},
                 {"level": "L2", "cache per group": {"store_to": "L3", "victims_to": "L3"}},
                 {"level": "L3", "cache per group": {}}, {"level": "MEM"}]
    assert kp.victim_sources(hierarchy) == [1]
    # per cache line of work: 5 lines loaded across L2-L3, 1 written back; as a victim cache L3 gets all 5
    loads, stores = [float("nan"), 5.0, 5.0, 5.0], [float("nan"), 1.0, 1.0, 1.0]
    assert kp.with_victims(stores, loads, [1])[1:] == [1.0, 5.0, 1.0]
    assert kp.with_victims(stores, loads, [])[1:] == [1.0, 1.0, 1.0]


def test_x86_syntax_from_the_register_prefix():
    assert kp.x86_syntax("\tvmovupd (%rdi,%rax), %ymm0\n") == "ATT"
    assert kp.x86_syntax("\tvmovupd ymm0, YMMWORD PTR [rdi+rax]\n") == "INTEL"


@pytest.mark.parametrize("order,array", [("ilj", "F"), ("lij", "Y")])
def test_a_row_indexed_two_loops_out_gets_a_padding_dimension_of_extent_one(order, array):
    from autotune.codegen.dataview import PAD, view_constants
    acc = lc_parts(METHOD, order)[1]          # the row index of `array` is not the loop next out from j
    view = data_view(acc, {"M": 1000})
    assert f"double {array}[4][{PAD}][M];" in view and f"{array}[{'i' if array == 'F' else 'l'}][0][j]" in view
    other = {"F": "Y", "Y": "F"}[array]
    assert f"double {other}[4][M];" in view and view_constants(view) == {PAD: 1}
    assert view_constants(data_view(lc_parts(METHOD, "ijl")[1], {"M": 1000})) == {}


def test_literal_and_offset_rows_take_the_padding_and_rows_two_paddings_apart_get_no_view():
    from autotune.codegen.dataview import _padded
    decls, body = _padded(["double F[4][M];", "double Y[4][M];"], "Y[l][j] = F[i][j] + F[0][j] + F[ i - 1 ][j];",
                          ["i", "l", "j"])
    assert decls == ["double F[4][PAD_][M];", "double Y[4][M];"]
    assert body == "Y[l][j] = F[i][0][j] + F[0][0][j] + F[ i - 1 ][0][j];"
    assert _padded(["double F[4][M];"], "F[i][j] = F[l][j];", ["i", "l", "j"]) is None


@pytest.mark.kerncraft
@pytest.mark.parametrize("order", ["ilj", "lij"])
def test_the_padded_view_counts_the_lines_the_simulation_counts(order, tmp_path):
    """kerncraft's layer conditions accept the padded view (they refused the part's own order) and
    count the lines its cache simulation counts in every regime the analysis gives them the view:
    where the sweep's rows outgrow every faster level.  Near a faster level's size (Haswell's L2
    regime: 17 KB of rows, a 32 KB L1) the simulation finds rows again and stays."""
    from autotune.pipeline.predict import _analysis_inputs
    from autotune.specs.machine import load_machine
    from autotune.tools import kerncraft_backend
    acc = lc_parts(METHOD, order)[1]
    machine = load_machine("haswell-ep-e5-2630v3")
    near = _analysis_inputs(acc, machine, Regime("L2", None))
    assert near["cache_predictor"] == "SIM" and "view" not in near and "view_constants" not in near
    for regime in (Regime("L1", None), Regime("L3", None)):
        inputs = _analysis_inputs(acc, machine, regime)
        assert inputs["cache_predictor"] == "LC" and inputs["view_constants"] == {"PAD_": 1}, regime
        regimes = [{"key": p, "label": p, "constants": inputs["constants"], "cache_predictor": p,
                    "view": inputs["view"] if p == "LC" else None,
                    "view_constants": inputs["view_constants"] if p == "LC" else {}} for p in ("LC", "SIM")]
        lc, sim = kerncraft_backend.analyse_part({"name": acc.name, "code": acc.code, "machine_path": machine.path,
                                                  "unroll": acc.unroll, "scratch": str(tmp_path),
                                                  "regimes": regimes})
        assert lc["ok"] and sim["ok"] and lc["cache_predictor"] == "LC" and "lc_refused" not in lc
        assert lc["terms"] == pytest.approx(sim["terms"], rel=0.02), regime
        # the lines each interface moves, per line of the part's work (the view's per its unroll)
        assert set(lc["lines"]) == {"L1-L2", "L2-L3", "L3-MEM"}
        assert lc["lines"] == pytest.approx(sim["lines"], rel=0.02), regime

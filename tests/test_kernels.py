import pytest

from autotune.codegen.parts import approx_update_parts, fused_parts, lc_parts, rhs_parts
from autotune.specs.step import FUSED_GROUPS
from autotune.specs.ivp import ivp_names, load_ivp
from autotune.specs.method import build, load_method
from autotune.dimensions.lc import all_values as lc_values, one_pass_orders, orders as lc_orders
from autotune.specs.variants import (DIMENSIONS, enumerate_variants,
                                     pairwise_cover, parse_variant)
from autotune.errors import InputError

from .conftest import pool_size


def test_lc_orders_are_all_permutations_of_the_loop_set():
    assert lc_orders() == ["ijl", "ilj", "jil", "jli", "lij", "lji"]


@pytest.mark.parametrize("order", lc_orders())
def test_lc_parts_follow_the_loop_order(order):
    m = load_method("radauIIA7")
    first, acc, fin = lc_parts(m, order)
    assert "".join(lp.var for lp in acc.loops) == order
    assert [lp.var for lp in first.loops] == [v for v in order if v != "i"]
    assert fin.loops == first.loops
    # the stage count is a literal: compile-time trip counts in the analysed code
    assert "< 4;" in acc.code and "s)" not in acc.code
    inner = order[order.index("j") + 1:]
    expected = 1
    for v in inner:
        expected *= 3 if v == "i" else 4
    assert acc.unroll == expected
    assert acc.iterations_per_m == 12 and first.iterations_per_m == 4


def test_approx_update_parts_and_stage_count():
    parts = approx_update_parts(build("radauIIA", 3))
    assert [p.name for p in parts] == ["approx.first", "approx.acc.ji", "update"]
    assert "b[3]" in parts[0].code


def test_rhs_parts_of_every_ivp():
    for name in ivp_names():
        ivp = load_ivp(name)
        parts = rhs_parts(ivp)
        assert len(parts) == len(ivp.rhs)
        for p in parts:
            assert p.code.count("for (int j") == 1
            assert "F[j] = " in p.code
    heat = rhs_parts(load_ivp("heat2d"))[0]
    assert heat.size_parameter == "N" and "for (int j = N; j < M + N; j++)" in heat.code
    mix = rhs_parts(load_ivp("string-mix"))
    assert [p.step for p in mix] == [2, 2] and "j += 2" in mix[1].code


def test_one_pass_rhs_sweeps_all_argument_vectors():
    """rhs=onepass: the component loop outside, the literal stage loop inside, every array a row
    per argument vector; the same expression with y[..] -> y[l][..] (and w alike)."""
    for name in ivp_names():
        ivp = load_ivp(name)
        single, joint = rhs_parts(ivp), rhs_parts(ivp, 4)
        for one, all4, spec in zip(single, joint, ivp.rhs):
            assert [lp.var for lp in all4.loops] == ["j", "l"] and all4.loops[0] == one.loops[0]
            assert all4.kernel == "RHSALL" and all4.name == one.name + ".onepass"
            assert all4.arrays == tuple((a, 4) for a, _ in one.arrays) and all4.unroll == 4
            assert all4.iterations_per_m == 4 * one.iterations_per_m
            assert all4.body.startswith("F[l][j] = ") and "[j" not in all4.body.replace("[l][j", "")
            assert all4.body.count("[l][") == one.body.count("[")
    mz = rhs_parts(load_ivp("medakzo"), 4)[0]
    assert "k * y[l][j] * w[l][j]" in mz.body and "double w[4][M + 2*1];" in mz.code


def test_pairwise_cover_meets_every_pair_of_values():
    pool = enumerate_variants(load_ivp("medakzo").comm)
    cover = pairwise_cover(pool)
    assert set(cover) <= set(pool) and len(cover) < len(pool) / 10
    keys = list(DIMENSIONS)
    for i, a in enumerate(keys):
        for b in keys[i + 1:]:
            want = {(getattr(v, a), getattr(v, b)) for v in pool}
            assert {(getattr(v, a), getattr(v, b)) for v in cover} == want, (a, b)
    # every lc value meets every scheme: at least 8 x 2 solvers
    assert len(cover) >= len(lc_values()) * len({v.comm for v in pool}) == 16


@pytest.mark.parametrize("order", one_pass_orders())
def test_one_pass_lc_reads_each_vector_once_per_sweep(order):
    (part,) = lc_parts(load_method("radauIIA7"), order)
    outer = order.split("-")[0]
    assert [lp.var for lp in part.loops] == list(outer) and part.name == f"lc.onepass.{outer}"
    # the stage sum is written out: every F_i once, y once, Y_l written once, a perfect nest
    body = part.body
    assert body.startswith("Y[l][j] = y[j] + h * (") and body.count("F[") == 4
    assert all(f"a[l][{i}] * F[{i}][j]" in body for i in range(4)) and body.count("=") == 1
    assert part.iterations_per_m == 4 and part.unroll == (4 if outer == "jl" else 1)
    # bytes per component: Y (4 rows), F (4 rows), y; a sweep of j inside l reads y, F_0..F_3, Y_l
    assert part.bytes_per_component == 9 * 8
    assert part.sweep_bytes_per_component == (0 if outer == "jl" else 6 * 8)


def test_variant_space_and_names():
    heat = load_ivp("heat2d")
    vs = enumerate_variants(heat.comm)
    assert len(vs) == pool_size() and len({v.name for v in vs}) == len(vs)
    assert sum(v.is_paper_form for v in vs) == 12          # the paper's 12 keep their names
    assert {v.name for v in vs if v.is_paper_form} == {f"lc={o},comm={c}" for o in lc_orders()
                                                       for c in ("allgather", "neighbour")}
    v = parse_variant("comm=neighbour,lc=jli", heat.comm)
    assert v.name == "lc=jli,comm=neighbour"
    assert parse_variant(v.name, heat.comm) == v
    for bad in ["lc=xyz,comm=neighbour", "lc=jli", "lc=jli,comm=sparse", "jli/neighbour"]:
        with pytest.raises(InputError):
            parse_variant(bad, heat.comm)


def test_kernel_parts_parse_in_kerncraft():
    """Every part's code is accepted by kerncraft's parser with the loop stack we intend."""
    from kerncraft.kernel import KernelCode
    from autotune.specs.machine import load_machine
    from kerncraft.machinemodel import MachineModel

    machine = MachineModel(load_machine(None).path)
    m = load_method("radauIIA7")
    parts = [p for o in lc_values() for p in lc_parts(m, o)] + approx_update_parts(m)
    for name in ivp_names():
        parts += rhs_parts(load_ivp(name)) + rhs_parts(load_ivp(name), m.stages)
        parts += [p for g in FUSED_GROUPS for p in fused_parts(load_ivp(name), m, g)]
    for p in parts:
        k = KernelCode(p.code, machine=machine, filename="kernel.c")
        stack = [lp["index"] for lp in k.get_loop_stack()]
        assert stack == [lp.var for lp in p.loops], p.name


def test_one_stage_method_has_no_summand_loop():
    parts = lc_parts(build("radauIIA", 1), "ijl")
    assert [p.name for p in parts] == ["lc.first.jl", "lc.fin.jl"]
    assert [p.name for p in approx_update_parts(build("radauIIA", 1))] == ["approx.first", "update"]


def test_the_analysis_workers_add_left_to_right():
    """kerncraft's and OSACA's sums in a worker add as sum() did up to Python 3.11, so an analysis
    gives the same bits on every Python: 1 + 1e-16 + 1e-16 is 1.0 left to right, the next float
    above with the compensated sum() of 3.12 and later."""
    import subprocess
    import sys
    probe = ("from autotune.tools import kerncraft_backend as b; b.init_worker(); "
             "from kerncraft.models import ecm; from kerncraft import incore_model; "
             "from osaca.semantics import arch_semantics as a; "
             "print([m.sum([1.0, 1e-16, 1e-16]) for m in (ecm, incore_model, a)])")
    out = subprocess.run([sys.executable, "-W", "ignore", "-c", probe], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[1.0, 1.0, 1.0]"

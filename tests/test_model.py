import math

import pytest

from autotune.model.comm import PhaseContext, SCHEMES, barrier_seconds, datasheet_op_seconds, phase_seconds
from autotune.model.ecm import KernelTerm, as_sigma, regime_cost
from autotune.model.ops import SCALAR
from autotune.model.steptime import form_times, regime_rate, regime_seconds, variant_times
from autotune.model.preselect import Rule, preselect, rank
from autotune.specs.method import build, load_method

from .forms import form


def test_step_counts_are_derived_from_the_method():
    c = form(load_method("radauIIA7")).counts            # s = 4, m = 6
    assert c.comm_phases == 1 + 6 * 4 == 25
    assert c.executions == {"RHS": 25, "COPY": 3, "LC": 6, "APPROX": 1, "UPDATE": 1}
    assert c.barriers == 3 * 6 + 4
    c3 = form(build("radauIIA", 3)).counts               # s = 3, m = 4
    assert (c3.comm_phases, c3.executions["LC"], c3.executions["COPY"], c3.barriers) == (13, 4, 2, 16)
    assert "COPY" not in form(build("radauIIA", 1)).counts.executions   # one stage: nothing to copy
    assert form(build("gauss", 2)).events()[0].kind == "comm"
    # rhs=onepass: the predictor's RHS of one vector, then one sweep over all s per iteration
    one = form(load_method("radauIIA7"), rhs="onepass").counts
    assert one.executions == {"RHS": 1, "RHSALL": 6, "COPY": 3, "LC": 6, "APPROX": 1, "UPDATE": 1}
    assert (one.comm_phases, one.barriers) == (c.comm_phases, c.barriers)


def test_equations_8_to_11_hand_computed():
    # alpha 16 cy/CL, 8e6 iterations, 8 per line -> 1.6e7 cycles; 2 GHz, 4 threads, sigma 3 -> 3 cores
    a = regime_rate(16, 3, [], 2e9, 4, 1)
    assert a == (16, 6e9, 3)
    assert regime_seconds(a.alpha, 8e6, 8, a.divisor) == pytest.approx(1.6e7 / 6e9)
    b = regime_rate(8, math.inf, [], 2e9, 4, 1)              # scales with every core: 4
    assert (b.divisor, b.cores) == (8e9, 4)
    slots = [regime_seconds(a.alpha, 8e6, 8, a.divisor) * 6, regime_seconds(b.alpha, 1e6, 8, b.divisor) * 25]
    t = variant_times(SCALAR, form_times(slots, (0, 1), ()), 21, 1e-6, 0.01, False, 0.0)
    node = 6 * 1.6e7 / 6e9 + 25 * (8 * 1e6 / 8) / (2e9 * 4) + 21e-6
    assert t.node == pytest.approx(node)
    assert t.total == pytest.approx(node + 0.01) and t.barrier == pytest.approx(21e-6)
    cost = regime_cost(KernelTerm("a", "LC", "MEM", 16, 3, 8e6, 8, 6), a)
    assert cost.cores_used == 3 and cost.seconds == slots[0] == pytest.approx(6 * 1.6e7 / 6e9)


def test_sigma_parsing():
    assert as_sigma(5) == 5 and as_sigma("inf") == math.inf and as_sigma(None) == math.inf


def test_datasheet_communication_costs():
    L, B = 1e-6, 1e9
    assert datasheet_op_seconds("allgather", 8000, 1, L, B) == 0
    assert datasheet_op_seconds("allgather", 8000, 8, L, B) == pytest.approx(3e-6 + 7 * 8e-6)
    assert datasheet_op_seconds("allgather", 8000, 5, L, B) == pytest.approx(3e-6 + 4 * 8e-6)
    assert datasheet_op_seconds("neighbour", 800, 2, L, B) == pytest.approx(1e-6 + 0.8e-6)
    assert datasheet_op_seconds("neighbour", 800, 4, L, B) == pytest.approx(1e-6 + 1.6e-6)
    assert barrier_seconds(1, 1e-7) == 0 and barrier_seconds(8, 1e-7) == pytest.approx(3e-7)


def test_schemes_messages_and_validity():
    ctx = PhaseContext(n=1000, p=4, distance=10, sparse_halo=1)
    assert SCHEMES["allgather"].ops(ctx) == [("allgather", 250 * 8)]
    assert SCHEMES["neighbour"].ops(ctx) == [("neighbour", 80)]
    assert SCHEMES["sparse"].ops(ctx) == [("neighbour", 8), ("pairwise", 2000)]
    assert SCHEMES["neighbour"].check(ctx) is None
    assert "exceeds" in SCHEMES["neighbour"].check(PhaseContext(1000, 200, 10, 1))
    assert phase_seconds("sparse", ctx, lambda op, b, p: b) == 2008


def test_rank_and_preselection():
    items = [("b", 1.05), ("a", 1.0), ("c", 1.2), ("x", None)]
    ordered = rank(items)
    assert [n for n, _ in ordered] == ["a", "b", "c", "x"]
    assert preselect(ordered, Rule("within", 10)) == {"a", "b"}
    assert preselect(ordered, Rule("within", 0)) == {"a"}
    assert preselect(ordered, Rule("top", 3)) == {"a", "b", "c"}
    assert preselect([("x", None)], Rule("top", 1)) == set()
    assert "10 %" in Rule("within", 10).describe()


def test_kerncraft_scaling_replaces_min_tau_sigma_when_known():
    # single core 7.7 cy/CL already memory-bound: two cores do not halve it
    rate = regime_rate(7.7, 2, [7.7, 7.7], 2e9, 2, 1)
    seconds = regime_seconds(rate.alpha, 8e6, 8, rate.divisor)
    assert seconds == pytest.approx(7.7 * 1e6 / 2e9) and rate.cores == pytest.approx(1.0)
    old = regime_rate(7.7, 2, [], 2e9, 2, 1)                 # without it: min(tau, sigma) = 2 cores
    assert regime_seconds(old.alpha, 8e6, 8, old.divisor) == pytest.approx(seconds / 2)
    # two ranks sharing the node: the node's cycles per line are both ranks' lines
    assert regime_rate(7.7, 2, [7.7, 7.7], 2e9, 2, 2).alpha == pytest.approx(2 * 7.7)


def test_ranks_sharing_a_single_node_machine():
    from autotune.pipeline.predict import Scenario
    from autotune.specs.ivp import load_ivp
    from autotune.specs.machine import load_machine
    one = load_machine("zen4-epyc-vm-2core")             # a single-node machine with 2 cores
    sc = Scenario(load_ivp("heat2d"), load_method("radauIIA7"), one, 4_000_000, 2, 1)
    assert (sc.ranks_per_node, sc.node_threads) == (2, 2)
    cluster = Scenario(sc.ivp, sc.method, load_machine(None), 4_000_000, 2, 1)
    assert (cluster.ranks_per_node, cluster.node_threads) == (1, 1)


def test_predictor_copy_reuses_the_pack_analysis():
    from autotune.codegen.parts import copy_part, pack_part
    m = load_method("radauIIA7")
    cp, pk = copy_part(m), pack_part(m)
    assert cp.code == pk.code and (cp.name, cp.kernel) == ("predictor.copy", "COPY")

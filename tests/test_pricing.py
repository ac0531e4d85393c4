"""Pricing many scenarios at once gives the bits of pricing one at a time, and of the model written
out plainly (tests/oracle.py): the pricing over numbers and over numpy arrays against the oracle,
and a sweep against its scenarios ranked one by one.  Sums run left to right on every Python."""
import ast
import math
import random
from pathlib import Path

import numpy as np
import pytest

import autotune.model
from autotune.arith import ordered_sum
from autotune.codegen.parts import rhs_parts
from autotune.model.batch import NUMPY, rank_table
from autotune.model.ecm import KernelTerm, mixed_cost, regime_cost
from autotune.model.steptime import FormTimes, form_times, per_execution, regime_rate, variant_times
from autotune.model.ops import SCALAR
from autotune.model.preselect import Rule, preselect, rank
from autotune.model.regime import code_regime, node_levels, regime_codes, regime_in
from autotune.model.reuse import level_reach, level_shares_of, reuse_distances
from autotune.pipeline.predict import rank_many, rank_scenario
from autotune.pipeline.sweep import scenarios
from autotune.request.scenario import ScenarioRequest
from autotune.results.sweep import SweepResult
from autotune.specs.ivp import load_ivp
from autotune.specs.machine import load_machine
from autotune.specs.method import load_method
from autotune.specs.step import Sweep
from autotune.specs.variants import enumerate_variants
from autotune.storage.store import Store

from . import oracle
from .forms import form
from .forms import parts as method_parts

RADAU = load_method("radauIIA7")


def distances_by_definition(sweeps):
    """model.reuse's D written as its docstring says, set by set."""
    n, sets, out = len(sweeps), [set(sw.vectors) for sw in sweeps], []
    for t in range(n):
        dists = []
        for a in sweeps[t].vectors:
            prev = next(k for k in range(1, n + 1) if a in sets[(t - k) % n])
            between = set().union(*(sets[(t - k) % n] for k in range(1, prev)))
            edge = (sets[(t - prev) % n], sets[t])
            dists.append(sum(1.0 if b in between else 0.5 * ((b in edge[0]) + (b in edge[1]))
                             for b in set().union(between, *edge) - {a}))
        out.append(tuple(dists))
    return out


def test_reuse_distances_follow_the_definition():
    forms = sorted({(v.lc, v.au, v.pred, v.buf, v.rhs, v.fuse) for v in enumerate_variants(("neighbour",))})
    for lc, au, pred, buf, rhs, fuse in forms:
        sweeps = form(RADAU, lc, au, pred, buf, rhs, fuse).sweeps()
        assert reuse_distances(sweeps) == distances_by_definition(sweeps)
    rng = random.Random(7)
    for _ in range(500):
        sweeps = [Sweep("X", str(i), tuple(dict.fromkeys(rng.choices("abcdefg", k=rng.randint(1, 4)))))
                  for i in range(rng.randint(1, 8))]
        assert reuse_distances(sweeps) == distances_by_definition(sweeps)


def test_pricing_is_the_model_arithmetic():
    """model.steptime (numbers and arrays) and the breakdown of model.ecm against the oracle's eqs
    8-11, one scenario at a time: the same bits."""
    rng = random.Random(5)
    clock, threads, ranks = 2.4e9, 8, 1
    for _ in range(200):
        parts, slots = [], []
        for _ in range(rng.randint(1, 6)):
            levels = []
            for code in sorted(rng.sample(range(20), rng.randint(1, 3))):
                scaling = [rng.uniform(1, 50) for _ in range(rng.choice([0, 4, 8]))]
                levels.append((code, rng.uniform(0.01, 1.0), rng.uniform(1, 90), rng.choice([1.0, 2.5, math.inf]),
                               scaling))
            parts.append((levels, rng.uniform(1e3, 1e8), rng.choice([8.0, 4.0]), rng.randint(1, 25)))
        want_secs, tables = [], []
        for levels, beta, delta, execs in parts:
            terms, costs = [], []
            alpha, divisor = [math.nan] * 20, [math.nan] * 20     # per part: its regimes' rates by code
            tables.append((alpha, divisor))
            for code, w, a, sigma, scaling in levels:
                tau = float(scaling[threads - 1]) * ranks if len(scaling) >= threads else None
                terms.append((w, oracle.Term(a, sigma, beta, delta, execs, tau)))
                rate = regime_rate(a, sigma, scaling, clock, threads, ranks)
                alpha[code], divisor[code] = rate.alpha, rate.divisor
                costs.append((w, regime_cost(KernelTerm("p", "LC", "X", a, sigma, beta, delta, execs), rate)))
                assert costs[-1][1].cores_used == oracle.execution(terms[-1][1], clock, threads)[0]
            want_secs.append(oracle.mixed_seconds(terms, clock, threads) * execs)
            assert mixed_cost(costs, "X").seconds == want_secs[-1]      # the breakdown: the same bits
            slots.append([(w, code) for code, w, *_ in levels])
        rhs = [i for i in range(len(parts)) if rng.random() < 0.5]
        barriers, barrier_s, comm_s, interior = rng.randint(0, 30), 2e-7, rng.uniform(0, 1e-2), rng.random()
        want = oracle.step(want_secs, barriers, barrier_s, comm_s, ordered_sum(want_secs[i] for i in rhs) * interior)
        for ops, wrap in ((SCALAR, lambda x: x), (NUMPY, lambda x: np.asarray([x, x]))):
            secs = [per_execution(ops, [(wrap(w), c) for w, c in levels], wrap(beta), delta, *table) * execs
                    for levels, table, (_, beta, delta, execs) in zip(slots, tables, parts)]
            form = form_times(secs, tuple(range(len(parts))), tuple(rhs))
            got = variant_times(ops, form, barriers, barrier_s, wrap(comm_s), True, wrap(interior))
            for g, w in ((got.total, want.total_s), (got.node, want.node_s), (got.hidden, want.hidden_s),
                         (got.barrier, want.barrier_s)):
                assert np.all(np.asarray(g) == w)
        assert isinstance(form, FormTimes)


def test_sums_run_left_to_right_on_every_python():
    """1 + 1e-16 + 1e-16 is 1.0 added left to right; compensated summation (sum() of floats since
    Python 3.12, math.fsum) gives the next float above 1.0.  The model adds left to right."""
    tiny = [1.0, 1e-16, 1e-16]
    assert math.fsum(tiny) > 1.0
    assert ordered_sum(tiny) == 1.0
    assert form_times(tiny, (0, 1, 2), (0, 1, 2)) == (1.0, 1.0)
    assert form_times([np.asarray([x, x]) for x in tiny], (0, 1, 2), ()).kernels.tolist() == [1.0, 1.0]


def test_the_model_does_not_use_the_builtin_sum():
    """Its result depends on the Python (compensated for floats since 3.12): autotune.arith's
    ordered_sum instead, everywhere in the model."""
    for f in sorted(Path(autotune.model.__file__).parent.glob("*.py")):
        calls = [node.lineno for node in ast.walk(ast.parse(f.read_text())) if isinstance(node, ast.Call)
                 and isinstance(node.func, ast.Name) and node.func.id in ("sum", "fsum")]
        assert not calls, f"{f.name}: sum() at lines {calls}"


def random_distances(rng):
    return tuple(sorted({(rng.choice([0.0, 0.5, 1.0, 2.5, 4.0, 7.5, 12.0, 30.0]), rng.randint(1, 3))
                         for _ in range(rng.randint(1, 6))}))


@pytest.mark.parametrize("machine,cores", [("haswell-ep-e5-2630v3", 8), ("zen4-epyc-vm-2core", 2)])
def test_level_shares_of_numbers_and_arrays_follow_the_definition(machine, cores):
    reach = level_reach(load_machine(machine), cores)
    rng = random.Random(3)
    vector_bytes = [float(8 * int(10 ** rng.uniform(2, 8))) for _ in range(400)] + [8e3, 2.5e5, 8e5, 1e6]
    for _ in range(60):
        dist = random_distances(rng)
        want = [oracle.level_shares(dist, vb, reach) for vb in vector_bytes]
        assert [tuple(level_shares_of(SCALAR, dist, vb, reach)) for vb in vector_bytes] == want
        batch = level_shares_of(NUMPY, dist, np.asarray(vector_bytes), reach, {})
        assert [tuple(float(np.broadcast_to(x, (len(vector_bytes),))[i]) for x in batch)
                for i in range(len(vector_bytes))] == want


def test_regime_codes_of_numbers_and_arrays_are_the_regime():
    machine = load_machine("haswell-ep-e5-2630v3")
    parts = method_parts(RADAU, "ilj", "split", "copy") + method_parts(RADAU, "jli", "fused", "direct")
    parts += rhs_parts(load_ivp("heat2d")) + rhs_parts(load_ivp("wave1d"), RADAU.stages)
    ms = [int(10 ** e) for e in np.linspace(1, 8, 120)]
    halos = [max(1, int(math.sqrt(m))) for m in ms]
    for threads in (1, 8):
        lv = node_levels(machine, threads)
        for part in parts:
            for data in range(len(lv.names)):
                want = [oracle.regime_in(part, data, m, h, lv) for m, h in zip(ms, halos)]
                assert [regime_in(part, data, m, h, lv) for m, h in zip(ms, halos)] == want
                assert [code_regime(regime_codes(SCALAR, part, data, m, h, lv), lv)
                        for m, h in zip(ms, halos)] == want
                codes = np.broadcast_to(regime_codes(NUMPY, part, data, np.asarray(ms), np.asarray(halos), lv),
                                        (len(ms),))
                assert [code_regime(int(c), lv) for c in codes] == want


@pytest.mark.parametrize("rule", [Rule("top", 3), Rule("top", 50), Rule("within", 5.0), Rule("within", 0.0),
                                  Rule("all")])
def test_rank_table_is_rank_and_preselect_row_by_row(rule):
    rng = np.random.default_rng(11)
    names = [f"v{i:02d}" for i in rng.permutation(40)]
    totals = rng.choice([1.0, 1.02, 1.05, 2.0, 3.0, 3.0001], size=(200, 40))   # many ties
    failed = rng.random((200, 40)) < 0.1
    failed[0] = True                                                            # a row with nothing predicted
    by_name = np.asarray(sorted(range(len(names)), key=names.__getitem__))
    order, counts = rank_table(totals, failed, by_name, rule)
    for row in range(len(totals)):
        ranked = rank([(n, None if f else float(t)) for n, t, f in zip(names, totals[row], failed[row])])
        assert [names[j] for j in order[row]] == [n for n, _ in ranked]
        assert {names[j] for j in order[row][:counts[row]]} == preselect(ranked, rule)


def test_a_batch_of_scenarios_prices_like_each_alone(replay_store):
    """rank_many over a sweep (numpy over the scenarios) and rank_scenario one by one (plain
    numbers): the same rankings, predictions and kernel breakdowns to the bit, and the sweep's
    rows the same as those of the full results."""
    spec = ScenarioRequest(["heat2d", "inverterchain"], "3e7:3.6e7:3log", [4, 8]).sweep_spec()
    items, requested, _ = scenarios(spec)
    store = Store(replay_store)
    for rule in (Rule("top", 5), Rule("within", 2.0)):
        batch = rank_many(items, rule, store)
        alone = [rank_scenario(sc, variants, rule, store, excluded) for sc, variants, excluded in items]
        assert [b.to_dict() for b in batch] == [a.to_dict() for a in alone]
        lean = rank_many(items, rule, store, detail=False)
        for selected in (True, False):
            fast = SweepResult(lean, requested, [], 0, rule, selected).rows()   # from the batch's tables
            full = SweepResult(alone, requested, [], 0, rule, selected).rows()  # from the materialised results
            assert fast == full
        assert len(SweepResult(lean, requested, [], 0, rule, True).rows()) == sum(len(r.preselected) for r in alone)
    store.close()

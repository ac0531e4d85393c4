"""Batches of scenarios: sweeps over IVPs, sizes, node and thread counts, and scaling studies
(edge: loads specs, asks the store and kerncraft once for the whole batch, then the pure
model per scenario).

A sweep snaps each requested size to the nearest size the IVP can have (heat2d
needs a square) and keeps the requested one beside it; scenarios that cannot run
(fewer components than nodes, no communication scheme applies) are reported as
skipped, with the reason, instead of ending the sweep.
"""
from __future__ import annotations

from itertools import product

from autotune.progress import SILENT, Progress
from autotune.errors import InputError
from autotune.model.preselect import Rule
from autotune.model.scaling import Point, analyse
from autotune.model.scaling import Rule as ScaleRule
from autotune.pipeline.applicable import drop_unpaid, refusable_positions
from autotune.pipeline.predict import rank_many, require_predictions
from autotune.request.scenario import SweepSpec
from autotune.results.rankset import RankSet
from autotune.results.scale import ScaleResult
from autotune.results.sweep import SweepResult
from autotune.model.comm import network_model
from autotune.model.control import scenario_cost
from autotune.specs.control import estimate_order
from autotune.specs.ivp import load_ivp
from autotune.specs.machine import load_machine
from autotune.specs.method import load_method
from autotune.specs.scenario import (Scenario, applicable_variants, check_scenario, check_threads, offers,
                                     scheme_checks)
from autotune.specs.variants import selected_variants, spaces
from autotune.storage.store import Store


def scenarios(spec: SweepSpec) -> tuple[list[tuple], list[int], list[dict]]:
    """(scenario, variants, excluded schemes) for every combination that can run, the size asked
    for each, and the skipped ones with their reason.  Input wrong for every scenario (threads
    beyond the machine's cores, an unknown comm scheme) is an error, not a skip."""
    machine = load_machine(spec.machine, spec.model)
    method = load_method(spec.method)
    if spec.control is not None:
        estimate_order(method)       # a method without a free estimate: refused before any scenario
    threads = spec.threads or [machine.cores]
    for t in threads:
        check_threads(t, machine)
    items, requested, skipped = [], [], []
    for name in spec.ivps:
        ivp = load_ivp(name)
        pool = selected_variants(spaces(ivp, spec.control is not None), spec.comm, spec.variant_filter, ivp.name)   # bad input stops the sweep
        offered = offers(ivp, pool)
        applicable: dict[tuple, list] = {}    # applicable_variants, one list per set of schemes that apply
        refusable: dict[tuple, list] = {}     # the variants of each that a scenario may refuse, by position
        sizes = [(ivp.nearest_n(n_req), n_req) for n_req in spec.ns or [ivp.default_n]]
        for (n, n_req), p, t in product(sizes, spec.nodes or [machine.nodes], threads):
            try:
                check_scenario(ivp, n, p, t, machine)
                sc = Scenario(ivp, method, machine, n, p, t, spec.control)
                ok, excluded = scheme_checks(sc, offered)
                variants = applicable.get(ok)
                if variants is None:
                    variants = applicable[ok] = applicable_variants(sc, spec.comm, spec.variant_filter)[0]
                    refusable[ok] = refusable_positions(variants)
                kept, why = drop_unpaid(sc, variants, refusable[ok])     # values that pay only at some sizes
                if why:      # one list per set of schemes and of variants dropped
                    names = {v.name for v in kept}
                    dropped = tuple(v.name for v in variants if v.name not in names)
                    variants = applicable.setdefault((ok, dropped), kept)
                    excluded = excluded.merged(why)
            except InputError as e:
                skipped.append({"ivp": ivp.name, "n": n, "nodes": p, "threads": t, "reason": str(e)})
                continue
            items.append((sc, variants, excluded))
            requested.append(n_req)
    return items, requested, skipped


def run_sweep(spec: SweepSpec, rule: Rule, store: Store,
              progress: Progress = SILENT, jobs: int | None = None,
              selected_only: bool = False) -> SweepResult:
    items, requested, skipped = scenarios(spec)
    if not items:
        reasons = sorted({s["reason"] for s in skipped})
        raise InputError("no scenario of the sweep can run: " + "; ".join(reasons[:3]))
    results = rank_many(items, rule, store, progress, jobs, detail=False)
    require_predictions(results)
    return SweepResult(results, requested, skipped, results[0].analyses_run, rule, selected_only)


def rank_each_ivp(spec: SweepSpec, rule: Rule, store: Store,
                  progress: Progress = SILENT, jobs: int | None = None) -> RankSet:
    """Every IVP of the spec in its one scenario, ranked as rank ranks one (the per-kernel
    breakdown too), in one batch: one store lookup and one round of analyses for all."""
    items, _, skipped = scenarios(spec)
    if not items:
        reasons = sorted({s["reason"] for s in skipped})
        raise InputError("no IVP can run with these options: " + "; ".join(reasons[:3]))
    results = rank_many(items, rule, store, progress, jobs)
    require_predictions(results)
    return RankSet(results, skipped)


def run_scale(spec: SweepSpec, rule: ScaleRule, store: Store, progress: Progress = SILENT,
              jobs: int | None = None) -> ScaleResult:
    """Scaling study of one IVP at one size over node counts (scaling.analyse on a sweep)."""
    if len(spec.ivps) != 1 or (spec.ns and len(spec.ns) != 1) or (spec.threads and len(spec.threads) != 1):
        raise InputError("scale: give one ivp, one n and one threads count (sweep node counts with nodes)")
    sweep = run_sweep(spec, Rule("top", 1), store, progress, jobs)
    rows = sweep.rows()
    points = [Point(r.name, r.nodes, r.predicted_s, r.node_s, r.comm_s) for r in rows if r.predicted_s is not None]
    analysis = analyse(points, rule)
    extra = {(r.name, r.nodes): r for r in rows}
    for r in analysis.rows:
        src = extra[(r.variant, r.nodes)]
        r.comm_basis, r.beyond_machine = src.comm_basis, src.beyond_machine
    first = sweep.results[0].scenario
    return ScaleResult(first.ivp.name, first.method.name, first.machine.name, first.n, sweep.requested_n[0],
                       first.threads, sorted({r.scenario.nodes for r in sweep.results}), sweep.skipped,
                       sweep.analyses_run, sweep.results[0].notes() + _extrapolation_notes(rows, first.machine)
                       + _control_notes([r.scenario for r in sweep.results]),
                       analysis, first.machine.sha256 or None)


def _control_notes(scenarios: list) -> list[str]:
    """Step-size control over the node counts: its reduction's latency grows with them, its sweeps
    shrink with each node's block (model.control, for a step of sweeps)."""
    if not scenarios or scenarios[0].control is None:
        return []
    net = network_model(scenarios[0].machine.network)
    costs = sorted((sc.nodes, scenario_cost(sc, False, net)) for sc in scenarios)
    return ["step control per attempt (the paper's: the norm in a sweep of its own, a blocking allreduce), "
            "by nodes: the allreduce " + ", ".join(
        f"{p}: {1e6 * c.reduce_s:.2f} us" for p, c in costs) + "; saving y and the norm " + ", ".join(
        f"{p}: {c.save_s + c.norm_s:.3e} s" for p, c in costs)]


def _extrapolation_notes(rows, machine) -> list[str]:
    out = []
    extra = sorted({r.nodes for r in rows if r.comm_basis == "extrapolated"})
    if extra:
        out.append(f"communication at {extra[0]}..{extra[-1]} nodes is extrapolated beyond the calibrated node "
                   "counts (the joint p-dependent model)")
    beyond = sorted({r.nodes for r in rows if r.beyond_machine})
    if beyond:
        out.append(f"{beyond[0]}..{beyond[-1]} nodes exceed the {machine.nodes} of machine {machine.name}: "
                   "hypothetical nodes of the same kind")
    return out

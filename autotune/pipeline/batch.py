"""Batches of scenarios: sweeps over IVPs, sizes, node and thread counts (edge: loads specs,
asks the store and kerncraft once for the whole batch, then the pure model per scenario).

A sweep snaps each requested size to the nearest size the IVP can have (heat2d
needs a square) and keeps the requested one beside it; scenarios that cannot run
(fewer components than nodes, no communication scheme applies) are reported as
skipped, with the reason, instead of ending the sweep.
"""
from __future__ import annotations

import gc
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import product
from typing import Callable

from autotune.model.comm import comm_basis
from autotune.errors import InputError
from autotune.pipeline.predict import (RankResult, Scenario, applicable_variants, check_scenario, check_threads, comm_context,
                      rank_many)
from autotune.model.ranking import Rule
from autotune.report.rank import notes
from autotune.model.scaling import Point, analyse
from autotune.specs.ivp import load_ivp
from autotune.specs.machine import load_machine
from autotune.specs.method import load_method
from autotune.storage.store import Store
from autotune.specs.variants import enumerate_variants


@dataclass(frozen=True)
class SweepSpec:
    ivps: list[str]
    ns: list[int] | None          # None: each IVP's default size
    nodes: list[int] | None       # None: the machine's node count
    threads: list[int] | None     # None: all cores
    machine: str | None
    method: str
    comm: list[str] | None = None


@dataclass
class Sweep:
    results: list[RankResult]
    requested_n: list[int]        # per result
    skipped: list[dict]           # scenarios that cannot run, with the reason
    analyses_run: int


def scenarios(spec: SweepSpec) -> tuple[list[tuple], list[int], list[dict]]:
    """(scenario, variants, excluded schemes) for every combination that can run, the size asked
    for each, and the skipped ones with their reason.  Input wrong for every scenario (threads
    beyond the machine's cores, an unknown --comm) is an error, not a skip."""
    machine = load_machine(spec.machine)
    method = load_method(spec.method)
    threads = spec.threads or [machine.cores]
    for t in threads:
        check_threads(t, machine)
    items, requested, skipped = [], [], []
    for name in spec.ivps:
        ivp = load_ivp(name)
        enumerate_variants(ivp.comm, spec.comm)
        sizes = [(ivp.nearest_n(n_req), n_req) for n_req in spec.ns or [ivp.default_n]]
        for (n, n_req), p, t in product(sizes, spec.nodes or [machine.nodes], threads):
            try:
                check_scenario(ivp, n, p, t, machine)
                sc = Scenario(ivp, method, machine, n, p, t)
                variants, excluded = applicable_variants(sc, spec.comm)
            except InputError as e:
                skipped.append({"ivp": ivp.name, "n": n, "nodes": p, "threads": t, "reason": str(e)})
                continue
            items.append((sc, variants, excluded))
            requested.append(n_req)
    return items, requested, skipped


@contextmanager
def no_cycle_collection():
    """A sweep allocates hundreds of thousands of small acyclic objects; the cycle collector's
    passes over them cost a fifth of a warm sweep's time and find nothing."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def run_sweep(spec: SweepSpec, rule: Rule, store: Store,
              progress: Callable[[int, int, str], None] | None = None, jobs: int | None = None) -> Sweep:
    items, requested, skipped = scenarios(spec)
    if not items:
        reasons = sorted({s["reason"] for s in skipped})
        raise InputError("no scenario of the sweep can run: " + "; ".join(reasons[:3]))
    with no_cycle_collection():
        results = rank_many(items, rule, store, progress, jobs, detail=False)
    return Sweep(results, requested, skipped, results[0].analyses_run)


FIELDS = ("ivp", "method", "machine", "n", "n_requested", "nodes", "threads", "rank", "name", "lc", "comm",
          "predicted_s", "node_s", "comm_s", "barrier_s", "preselected", "comm_basis", "beyond_machine",
          "failed_kernels")


def long_tuples(sweep: Sweep) -> list[tuple]:
    """One tuple (FIELDS) per (scenario, variant), best first within a scenario: the long format.
    Tuples, not dicts: a sweep has tens of thousands of rows."""
    rows = []
    for res, n_req in zip(sweep.results, sweep.requested_n):
        sc = res.scenario
        ctx = comm_context(sc)
        basis: dict[str, str] = {}
        head = (sc.ivp.name, sc.method.name, sc.machine.name, sc.n, n_req, sc.nodes, sc.threads)
        pre = res.preselected
        for i, r in enumerate(res.ordered, 1):
            v, p = r.variant, r.prediction
            if v.comm not in basis:
                basis[v.comm] = comm_basis(sc.machine.network, v.comm, ctx)
            rows.append(head + ((i, v.name, v.lc, v.comm, p.total_s, p.node_s, p.comm_s, p.barrier_s) if p else
                                (i, v.name, v.lc, v.comm, None, None, None, None))
                        + (v.name in pre, basis[v.comm], sc.beyond_machine, ";".join(r.failed_parts)))
    return rows


def long_rows(sweep: Sweep) -> list[dict]:
    """The long format as dicts (JSON, tables)."""
    return [dict(zip(FIELDS, t)) for t in long_tuples(sweep)]


def run_scale(spec: SweepSpec, rule, store: Store, progress=None, jobs: int | None = None) -> dict:
    """Scaling study of one IVP at one size over node counts (scaling.analyse on a sweep)."""
    sweep = run_sweep(spec, Rule("top", 1), store, progress, jobs)
    rows = long_rows(sweep)
    points = [Point(r["name"], r["nodes"], r["predicted_s"], r["node_s"], r["comm_s"])
              for r in rows if r["predicted_s"] is not None]
    if not points:
        raise InputError("no variant could be predicted at any node count")
    analysis = analyse(points, rule)
    extra = {(r["name"], r["nodes"]): r for r in rows}
    for r in analysis["rows"]:
        src = extra[(r["variant"], r["nodes"])]
        r["comm_basis"], r["beyond_machine"] = src["comm_basis"], src["beyond_machine"]
    first = sweep.results[0].scenario
    return {"ivp": first.ivp.name, "method": first.method.name, "machine": first.machine.name,
            "n": first.n, "n_requested": sweep.requested_n[0], "threads": first.threads,
            "nodes": sorted({r.scenario.nodes for r in sweep.results}),
            "skipped": sweep.skipped, "analyses_run": sweep.analyses_run,
            "notes": notes(sweep.results[0]) + _extrapolation_notes(rows, first.machine),
            "analysis": analysis}


def _extrapolation_notes(rows: list[dict], machine) -> list[str]:
    out = []
    extra = sorted({r["nodes"] for r in rows if r["comm_basis"] == "extrapolated"})
    if extra:
        out.append(f"communication at {extra[0]}..{extra[-1]} nodes is extrapolated beyond the calibrated node "
                   "counts (the joint p-dependent model)")
    beyond = sorted({r["nodes"] for r in rows if r["beyond_machine"]})
    if beyond:
        out.append(f"{beyond[0]}..{beyond[-1]} nodes exceed the {machine.nodes} of machine {machine.name}: "
                   "hypothetical nodes of the same kind")
    return out

"""Batches of scenarios: sweeps over IVPs, sizes, node and thread counts (edge: loads specs,
asks the store and kerncraft once for the whole batch, then the pure model per scenario).

A sweep snaps each requested size to the nearest size the IVP can have (heat2d
needs a square) and keeps the requested one beside it; scenarios that cannot run
(fewer components than nodes, no communication scheme applies) are reported as
skipped, with the reason, instead of ending the sweep.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .comm import comm_basis
from .errors import InputError
from .predict import RankResult, Scenario, applicable_variants, check_scenario, comm_context, rank_many
from .rank import Rule
from .specs.ivp import load_ivp
from .specs.machine import load_machine
from .specs.method import load_method
from .store import Store


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
    machine = load_machine(spec.machine)
    method = load_method(spec.method)
    items, requested, skipped = [], [], []
    for name in spec.ivps:
        ivp = load_ivp(name)
        for n_req in spec.ns or [ivp.default_n]:
            n = ivp.nearest_n(n_req)
            for p in spec.nodes or [machine.nodes]:
                for t in spec.threads or [machine.cores]:
                    try:
                        check_scenario(ivp, n, p, t, machine)
                        sc = Scenario(ivp, method, machine, n, p, t)
                        variants, excluded = applicable_variants(sc, spec.comm)
                    except InputError as e:
                        if str(e).startswith("--threads"):   # the same for every scenario: say so once
                            raise
                        skipped.append({"ivp": ivp.name, "n": n, "nodes": p, "threads": t, "reason": str(e)})
                        continue
                    items.append((sc, variants, excluded))
                    requested.append(n_req)
    return items, requested, skipped


def run_sweep(spec: SweepSpec, rule: Rule, store: Store,
              progress: Callable[[int, int, str], None] | None = None, jobs: int | None = None) -> Sweep:
    items, requested, skipped = scenarios(spec)
    if not items:
        reasons = sorted({s["reason"] for s in skipped})
        raise InputError("no scenario of the sweep can run: " + "; ".join(reasons[:3]))
    results = rank_many(items, rule, store, progress, jobs)
    ran = results[0].analyses_run if results else 0
    return Sweep(results, requested, skipped, ran)


def long_rows(sweep: Sweep) -> list[dict]:
    """One row per (scenario, variant), best first within a scenario: the long format."""
    rows = []
    for res, n_req in zip(sweep.results, sweep.requested_n):
        sc = res.scenario
        ctx = comm_context(sc)
        basis: dict[str, str] = {}
        head = {"ivp": sc.ivp.name, "method": sc.method.name, "machine": sc.machine.name, "n": sc.n,
                "n_requested": n_req, "nodes": sc.nodes, "threads": sc.threads}
        for i, r in enumerate(res.ordered, 1):
            v, p = r.variant, r.prediction
            if v.comm not in basis:
                basis[v.comm] = comm_basis(sc.machine.network, v.comm, ctx)
            rows.append(dict(head, rank=i, name=v.name, lc=v.lc, comm=v.comm,
                             predicted_s=p.total_s if p else None, node_s=p.node_s if p else None,
                             comm_s=p.comm_s if p else None, barrier_s=p.barrier_s if p else None,
                             preselected=v.name in res.preselected, comm_basis=basis[v.comm],
                             beyond_machine=sc.nodes > sc.machine.nodes and sc.machine.nodes > 1,
                             failed_kernels=";".join(r.failed_parts)))
    return rows


def run_scale(spec: SweepSpec, rule, store: Store, progress=None, jobs: int | None = None) -> dict:
    """Scaling study of one IVP at one size over node counts (scaling.analyse on a sweep)."""
    from .scaling import Point, analyse
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
    from .report import notes
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

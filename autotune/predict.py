"""From a scenario (IVP, method, machine, n, nodes, threads) to predicted seconds per step.

This is the orchestration edge: it collects the kernel parts of every variant,
looks their ECM results up in the store, runs the missing analyses, and feeds
plain numbers to the pure model and ranking.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

from . import comm as commmod
from . import kernels as kmod
from .ecm import regime as regmod
from .ecm.runner import run_analyses
from .errors import InputError
from .model import KernelTerm, Prediction, as_sigma, predict
from .rank import Rule, preselect, rank
from .schedule import step_counts
from .specs.ivp import IVP
from .specs.machine import Machine
from .specs.method import Method
from .store import Store, ecm_key
from .toolchain import compiler_version, package_version
from .variants import Variant

BACKEND_VERSION = 2  # bump when the analysis set-up (patches, predictor) changes


@dataclass(frozen=True)
class Scenario:
    ivp: IVP
    method: Method
    machine: Machine
    n: int
    nodes: int
    threads: int

    @property
    def ranks_per_node(self) -> int:
        """Ranks sharing one node: on a single-node machine every rank runs on the same host."""
        return self.nodes if self.machine.nodes == 1 else 1

    @property
    def node_threads(self) -> int:
        """Cores busy on one node (all its ranks' threads)."""
        return min(self.machine.cores, self.threads * self.ranks_per_node)


@dataclass
class PartUse:
    part: kmod.KernelPart
    executions: int
    m: int               # index range swept on the slowest node
    halo: int
    regime: regmod.Regime
    key: str = ""
    inputs: dict = field(default_factory=dict)


@dataclass
class VariantResult:
    variant: Variant
    prediction: Prediction | None
    failed_parts: list[str]
    comm_phases: int
    barriers: int


@dataclass
class RankResult:
    scenario: Scenario
    rule: Rule
    ordered: list[VariantResult]
    preselected: set[str]
    excluded: dict[str, str]       # comm scheme -> why it cannot run here
    analyses_run: int
    failures: dict[str, dict]      # part name -> error info


def check_scenario(ivp: IVP, n: int, nodes: int, threads: int, machine: Machine) -> None:
    """Validate the numbers of a scenario (InputError naming the option)."""
    if nodes < 1:
        raise InputError(f"--nodes {nodes}: expected at least 1")
    if threads < 1:
        raise InputError(f"--threads {threads}: expected at least 1")
    if threads > machine.cores:
        raise InputError(f"--threads {threads}: machine {machine.name} has {machine.cores} cores per node")
    ivp.size_value(n)
    if n < nodes:
        raise InputError(f"--n {n}: fewer components than --nodes {nodes}")


def comm_context(sc: Scenario) -> commmod.PhaseContext:
    return commmod.PhaseContext(sc.n, sc.nodes, sc.ivp.access_distance(sc.n), sc.ivp.sparse_halo)


def applicable_schemes(sc: Scenario, schemes: list[str]) -> tuple[list[str], dict[str, str]]:
    ctx = comm_context(sc)
    ok, excluded = [], {}
    for s in schemes:
        why = commmod.SCHEMES[s].check(ctx)
        if why:
            excluded[s] = why
        else:
            ok.append(s)
    return ok, excluded


def _analysis_inputs(part: kmod.KernelPart, machine: Machine, regime: regmod.Regime) -> dict:
    return {
        "backend": BACKEND_VERSION,
        "code": part.code,
        "unroll": part.unroll,
        "constants": regmod.representative_constants(part, machine, regime),
        "regime": regime.label,
        "machine": machine.kerncraft_digest,
        "compiler": machine.compiler,
        "flags": machine.compiler_flags,
        "compiler_version": compiler_version(machine.compiler),
        "kerncraft": package_version("kerncraft"),
        "osaca": package_version("osaca"),
        "cache_predictor": "SIM",
        "incore": f"OSACA:{machine.incore_model}",
    }


def part_uses(sc: Scenario, variants: list[Variant]) -> dict[str, list[PartUse]]:
    """Kernel parts of every variant, with executions, node-local sizes and regimes."""
    counts = step_counts(sc.method)
    n_local = math.ceil(sc.n / sc.nodes)
    shared: list[tuple[kmod.KernelPart, int, int, int]] = []
    for part, spec in zip(kmod.rhs_parts(sc.ivp), sc.ivp.rhs):
        comps, halo = sc.ivp.part_components(spec, sc.n), sc.ivp.part_halo(spec, sc.n)
        shared.append((part, counts.executions["RHS"], math.ceil(comps / sc.nodes) * part.step, halo))
    for part in kmod.approx_update_parts(sc.method):
        shared.append((part, counts.executions[part.kernel], n_local, 0))
    # every communication phase first copies the node's block into the buffer the RHS reads
    shared.append((kmod.pack_part(sc.method), counts.comm_phases, n_local, 0))
    if counts.executions.get("COPY"):
        shared.append((kmod.copy_part(sc.method), counts.executions["COPY"], n_local, 0))
    out: dict[str, list[PartUse]] = {}
    lc_cache: dict[str, list] = {}
    for v in variants:
        if v.lc not in lc_cache:
            lc_cache[v.lc] = [(p, counts.executions["LC"], n_local, 0) for p in kmod.lc_parts(sc.method, v.lc)]
        uses = []
        for part, execs, m, halo in lc_cache[v.lc] + shared:
            reg = regmod.regime_of(part, sc.machine, m * sc.ranks_per_node, halo, sc.node_threads)
            uses.append(PartUse(part, execs, m, halo, reg))
        out[v.name] = uses
    return out


def ensure_ecm(uses: list[PartUse], machine: Machine, store: Store,
               progress: Callable[[int, int, str], None] | None = None,
               jobs: int | None = None) -> tuple[dict[str, dict], int]:
    """ECM results for every use (by key); runs and stores only what the store lacks."""
    keyed: dict[tuple[str, regmod.Regime], tuple[dict, str]] = {}   # parts recur across variants
    for u in uses:
        ident = (u.part.code, u.regime)
        if ident not in keyed:
            inputs = _analysis_inputs(u.part, machine, u.regime)
            keyed[ident] = (inputs, ecm_key(inputs))
        u.inputs, u.key = keyed[ident]
    have = store.get_ecm([u.key for u in uses])
    todo: dict[str, PartUse] = {}
    for u in uses:
        if u.key not in have and u.key not in todo:
            todo[u.key] = u
    tasks = [{"key": k, "name": f"{u.part.name}@{u.regime.label}", "code": u.part.code,
              "machine_path": machine.path, "constants": u.inputs["constants"],
              "unroll": u.part.unroll} for k, u in todo.items()]

    def keep(task, result):
        u = todo[task["key"]]
        if not result.get("transient"):  # a crashed worker is not a property of the kernel
            store.put_ecm(task["key"], u.part.name, u.regime.label, machine.name, result, u.inputs)
        have[task["key"]] = result

    ran = run_analyses(tasks, keep, progress, jobs)
    return have, ran


def _terms(uses: list[PartUse], results: dict[str, dict], machine: Machine,
           threads: int, ranks_per_node: int = 1) -> tuple[list[KernelTerm], list[str]]:
    """Kernel terms for one rank.  With several ranks on a node, the node's cores work on all
    of them at once: kerncraft's scaling at all busy cores, times the ranks sharing it."""
    terms, failed = [], []
    per_line = machine.cacheline / commmod.DOUBLE
    for u in uses:
        r = results[u.key]
        if not r.get("ok"):
            failed.append(u.part.name)
            continue
        step = u.part.loops[-1].step
        scaling = r.get("scaling_cy_per_cl") or []
        alpha_tau = float(scaling[threads - 1]) * ranks_per_node if len(scaling) >= threads else None
        terms.append(KernelTerm(u.part.name, u.part.kernel, u.regime.label, float(r["cy_per_cl"]),
                                as_sigma(r.get("saturation_cores")), u.part.iterations_per_m * u.m,
                                per_line / step, u.executions, alpha_tau))
    return terms, failed


def rank_scenario(sc: Scenario, variants: list[Variant], rule: Rule, store: Store,
                  excluded: dict[str, str] | None = None,
                  progress: Callable[[int, int, str], None] | None = None,
                  jobs: int | None = None) -> RankResult:
    uses_by_variant = part_uses(sc, variants)
    all_uses = [u for us in uses_by_variant.values() for u in us]
    results, ran = ensure_ecm(all_uses, sc.machine, store, progress, jobs)
    counts = step_counts(sc.method)
    ctx = comm_context(sc)
    op_seconds = commmod.network_model(sc.machine.network)

    barrier_s = commmod.barrier_seconds(sc.threads, sc.machine.barrier["per_doubling_s"])
    out, failures = [], {}
    for v in variants:
        uses = uses_by_variant[v.name]
        terms, failed = _terms(uses, results, sc.machine, sc.node_threads, sc.ranks_per_node)
        for u in uses:
            if u.part.name in failed:
                failures[u.part.name] = {k: results[u.key].get(k) for k in ("error", "log")} | {"regime": u.regime.label}
        comm_s = commmod.phase_seconds(v.comm, ctx, op_seconds) * counts.comm_phases
        pred = None if failed else predict(terms, sc.machine.clock_hz, sc.threads, counts.barriers,
                                           barrier_s, comm_s)
        out.append(VariantResult(v, pred, failed, counts.comm_phases, counts.barriers))
    by_name = {r.variant.name: r for r in out}
    ordered_names = rank([(r.variant.name, r.prediction.total_s if r.prediction else None) for r in out])
    ordered = [by_name[n] for n, _ in ordered_names]
    return RankResult(sc, rule, ordered, preselect(ordered_names, rule), excluded or {}, ran, failures)

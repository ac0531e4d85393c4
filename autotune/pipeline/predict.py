"""From a scenario (IVP, method, machine, n, nodes, threads) to predicted seconds per step.

This is the orchestration edge: it collects the kernel parts of every variant,
looks their ECM results up in the store, runs the missing analyses, and feeds
plain numbers to the pure model and ranking.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from autotune.model import comm as commmod
from autotune.codegen import parts as kmod
from autotune.model import regime as regmod
from autotune.model import reuse
from autotune.tools.ecm_runner import run_analyses
from autotune.model.bound import Bound, live_vectors, source_shares, step_bound
from autotune.model.ecm import (KernelCost, KernelTerm, as_sigma, combine_seconds, execution_seconds, interior_share,
                                kernel_cost, mixed_cost)
from autotune.model.ranking import Rule, preselect, rank
from autotune.model.schedule import step_counts
from autotune.specs.ivp import IVP
from autotune.specs.machine import Machine
from autotune.specs.method import Method
from autotune.storage.store import Store, ecm_key
from autotune.tools.toolchain import compiler_version, package_version
from autotune.specs.variants import Variant
from autotune.specs.parts import DOUBLE
from autotune.specs.scenario import Scenario, comm_context
from autotune.results.rank import RankResult, VariantResult

BACKEND_VERSION = 2  # bump when the analysis set-up (patches, predictor) changes
RHS_SWEEPS = ("RHS", "RHSALL") + kmod.FUSED_GROUPS   # the sweeps that read communicated vectors


@dataclass(slots=True)
class PartUse:
    part: kmod.KernelPart
    executions: int
    m: int               # index range swept on the slowest node
    halo: int
    mix: tuple[tuple[regmod.Regime, float], ...]   # where its data comes from: regimes and shares (sum 1)
    keys: tuple[str, ...] = ()                     # ECM store key per regime of the mix
    inputs: tuple[dict, ...] = ()
    seconds: float | None = 0.0       # per step, set by assemble (None: an analysis failed)
    cost: KernelCost | None = None    # the breakdown, where assemble keeps it

    @property
    def label(self) -> str:
        """The regime, or the mix: "L3 74% + MEM 26%"."""
        if len(self.mix) == 1:
            return self.mix[0][0].label
        return " + ".join(f"{reg.label} {w:.0%}" for reg, w in self.mix)


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


class Session:
    """What one prediction run (a rank, a sweep, one API call) computes once and drops when it
    ends: rendered kernel parts per IVP and method, step counts, network cost models.  Keyed
    by the identity of specs the session holds for its whole life (hashing a Method's nested
    tuples thousands of times would cost more than the lookups save)."""

    def __init__(self) -> None:
        self._memo: dict[tuple, tuple] = {}

    def _get(self, kind: str, obj, make, *extra):
        key = (kind, id(obj), *extra)
        hit = self._memo.get(key)
        if hit is None or hit[0] is not obj:
            hit = self._memo[key] = (obj, make(obj, *extra))
        return hit[1]

    def rhs_parts(self, ivp: IVP, stages: int | None = None) -> tuple:
        """RHS parts with their spec (of one argument vector; with stages, of all in one sweep)."""
        return self._get("rhs", ivp, lambda i, st: tuple(zip(kmod.rhs_parts(i, st), i.rhs)), stages)

    def fused_parts(self, ivp: IVP, method: Method, group: str) -> tuple:
        """The parts of one fused sweep (fuse=rhs-lc) with their RHS spec."""
        return self._get("fused", ivp, lambda i, g, _: tuple(zip(kmod.fused_parts(i, method, g), i.rhs)), group,
                         id(method))

    def method_parts(self, method: Method, lc: str, au: str, pred: str, buf: str, fuse: str) -> tuple:
        """The method's parts of one form (LC, predictor, APPROX/UPDATE, pack)."""
        return self._get("method", method, lambda m, *f: tuple(kmod.method_parts(m, *f)), lc, au, pred, buf, fuse)

    def distances(self, method: Method, form: tuple) -> dict:
        """Reuse distances of every part of one form over the step (model.reuse)."""
        def make(m, lc, au, pred, buf, rhs, fuse):
            return reuse.part_distances(reuse.step_sweeps(m, self.method_parts(m, lc, au, pred, buf, fuse), pred,
                                                          au, buf, rhs, fuse))
        return self._get("distances", method, make, *form)

    def counts(self, method: Method, pred: str = "copy", au: str = "split", rhs: str = "stages",
               fuse: str = "none"):
        return self._get("counts", method, step_counts, pred, au, rhs, fuse)

    def network(self, network: dict):
        return self._get("network", network, commmod.network_model)


def form(v: Variant) -> tuple[str, str, str, str, str, str]:
    """What decides a variant's kernel parts (not its communication scheme, its overlap or its
    tile): the method's parts follow lc, au, pred, buf and fuse, the RHS parts rhs and fuse."""
    return v.lc, v.au, v.pred, v.buf, v.rhs, v.fuse


def part_uses(sc: Scenario, variants: list[Variant], session: Session) -> tuple[dict[str, list[PartUse]], list[PartUse]]:
    """Kernel parts of every variant, with executions, node-local sizes and where their data comes
    from, and the distinct ones.  A part used alike by several variants is one PartUse object.

    Where the data comes from is decided by the step (model.reuse): what the variant's other
    sweeps touched since a vector was last touched, against what each cache level holds."""
    n_local = math.ceil(sc.n / sc.nodes)
    m_factor = sc.ranks_per_node
    lv = regmod.node_levels(sc.machine, sc.node_threads)
    reach = reuse.level_reach(sc.machine, sc.node_threads)
    vector_bytes = float(DOUBLE * n_local * m_factor)
    shares_of: dict[tuple, tuple] = {}
    regimes: dict[tuple, regmod.Regime] = {}
    mixes: dict[tuple, tuple] = {}

    def mix_of(part: kmod.KernelPart, m: int, halo: int, distances: tuple) -> tuple:
        """(regime, share) pairs of a part at these distances (forms that touch alike share them)."""
        hit = mixes.get((part.name, distances))
        if hit is not None:
            return hit
        shares = shares_of.get(distances)
        if shares is None:
            shares = shares_of[distances] = reuse.level_shares(distances, vector_bytes, reach)
        out: dict[regmod.Regime, float] = {}
        for level, w in enumerate(shares):
            if w:
                reg = regimes.get((part.name, level))
                if reg is None:
                    reg = regimes[(part.name, level)] = regmod.regime_in(part, level, m * m_factor, halo, lv)
                out[reg] = out.get(reg, 0.0) + w
        mix = mixes[(part.name, distances)] = tuple(out.items())
        return mix

    rhs_by_form: dict[tuple, list[PartUse]] = {}

    def rhs_uses(form_rhs: str, fuse: str, dist: dict, execs: dict[str, int]) -> list[PartUse]:
        """The RHS parts of one form with their executions: one argument vector's parts (the
        predictor's, and the corrector's s sweeps in the stage form), all s in one sweep; or the
        fused sweeps' parts.  execs: the form's executions per kernel group (the RHS's depend on
        rhs and fuse only, which the key holds)."""
        key = (form_rhs, fuse) + tuple(dist.get(g) for g in ("RHS", "RHSALL") + kmod.FUSED_GROUPS)
        uses = rhs_by_form.get(key)
        if uses is None:
            uses = rhs_by_form[key] = []
            if fuse != "none":
                groups = [session.fused_parts(sc.ivp, sc.method, g) for g in kmod.FUSED_GROUPS]
            else:
                kinds = [None] + ([sc.method.stages] if form_rhs == "onepass" else [])
                groups = [session.rhs_parts(sc.ivp, stages) for stages in kinds]
            for group in groups:
                for part, spec in group:
                    comps, halo = sc.ivp.part_components(spec, sc.n), sc.ivp.part_halo(spec, sc.n)
                    m = math.ceil(comps / sc.nodes) * part.step
                    uses.append(PartUse(part, execs[part.kernel], m, halo, mix_of(part, m, halo, dist[part.kernel])))
        return uses

    by_key: dict[tuple, PartUse] = {}
    by_form: dict[tuple, list[PartUse]] = {}
    out: dict[str, list[PartUse]] = {}
    for v in variants:
        f = form(v)
        uses = by_form.get(f)
        if uses is None:
            counts = session.counts(sc.method, v.pred, v.au, v.rhs, v.fuse)
            dist = session.distances(sc.method, f)
            # every communication phase first copies the node's block into the buffer the RHS reads
            execs = dict(counts.executions, PACK=counts.comm_phases)
            uses = by_form[f] = []
            for part in session.method_parts(sc.method, *f[:4], v.fuse):
                mix = mix_of(part, n_local, 0, dist[part.name])
                key = (part.name, execs[part.kernel], mix)
                u = by_key.get(key)
                if u is None:
                    u = by_key[key] = PartUse(part, execs[part.kernel], n_local, 0, mix)
                uses.append(u)
            uses += rhs_uses(v.rhs, v.fuse, dist, execs)
        out[v.name] = uses
    return out, list(by_key.values()) + [u for form_uses in rhs_by_form.values() for u in form_uses]


def ensure_ecm(uses: list[PartUse], machine: Machine, store: Store,
               progress: Callable[[int, int, str], None] | None = None,
               jobs: int | None = None) -> tuple[dict[str, dict], int]:
    """ECM results for every use (by key); runs and stores only what the store lacks."""
    keyed: dict[tuple, tuple[dict, str]] = {}   # parts recur across variants and scenarios
    for u in uses:
        found = []
        for reg, _ in u.mix:
            ident = (u.part.code, reg.data, reg.layer)
            if ident not in keyed:
                inputs = _analysis_inputs(u.part, machine, reg)
                keyed[ident] = (inputs, ecm_key(inputs))
            found.append(keyed[ident])
        u.inputs, u.keys = tuple(i for i, _ in found), tuple(k for _, k in found)
    have = store.get_ecm(list(dict.fromkeys(k for u in uses for k in u.keys)))
    todo: dict[str, tuple] = {}
    for u in uses:
        for key, (reg, _), inputs in zip(u.keys, u.mix, u.inputs):
            if key not in have and key not in todo:
                todo[key] = (u.part, reg, inputs)
    tasks = [{"key": k, "name": f"{part.name}@{reg.label}", "code": part.code, "machine_path": machine.path,
              "constants": inputs["constants"], "unroll": part.unroll} for k, (part, reg, inputs) in todo.items()]

    def keep(task, result):
        part, reg, inputs = todo[task["key"]]
        if not result.get("transient"):  # a crashed worker is not a property of the kernel
            store.put_ecm(task["key"], part.name, reg.label, machine.name, result, inputs)
        have[task["key"]] = result

    ran = run_analyses(tasks, keep, progress, jobs)
    return have, ran


def _ecm_numbers(results: dict[str, dict]) -> dict[str, tuple | None]:
    """Per ECM key: (alpha, sigma, scaling, in-core cycles) of a successful analysis, None of a
    failed one."""
    return {k: (float(r["cy_per_cl"]), as_sigma(r.get("saturation_cores")), r.get("scaling_cy_per_cl") or [],
                float(r.get("t_comp") or 0.0))
            if r.get("ok") else None for k, r in results.items()}


def _iterations(u: PartUse) -> float:
    """Innermost loop iterations of one execution of the part on the slowest node."""
    return u.part.iterations_per_m * u.m


def _cache_lines(u: PartUse, per_line: float) -> float:
    """Cache lines of work (kerncraft's unit) in one execution: iterations over iterations per line."""
    return _iterations(u) / (per_line / u.part.loops[-1].step)


def scenario_bound(sc: Scenario, distinct: list[PartUse], numbers: dict[str, tuple | None],
                   comm_s: float) -> Bound | None:
    """The step's floor on the node (model.bound): compulsory traffic from the levels that can hold
    the step's live data, the RHS's in-core time, the cheapest communication."""
    s, m = sc.method.stages, sc.method.iterations
    rpn, threads = sc.ranks_per_node, sc.node_threads
    components = math.ceil(sc.n / sc.nodes) * rpn
    lv = regmod.node_levels(sc.machine, threads)
    # a floor assumes ideal caches: a level keeps as much of the live data as it holds
    shares = source_shares(live_vectors(s) * DOUBLE * components, reuse.level_reach(sc.machine, threads))
    sources = [(name, w, sc.machine.bandwidth(name, threads)) for name, w in zip(lv.names, shares)]
    if any(w > 0 and b is None for _, w, b in sources):
        return None
    per_line = sc.machine.cacheline / DOUBLE
    # in-core cycles of one RHS evaluation: the cheapest form the variants have (one argument
    # vector's parts, or the one-pass parts' cycles over the s vectors they evaluate)
    # (a part is counted once: one vector's parts are used by both forms)
    per_form: dict[str, float] = {}
    for u in {u.part.name: u for u in distinct if u.part.kernel in ("RHS", "RHSALL")}.values():
        nums = [numbers[k] for k in u.keys]
        if None in nums:
            return None
        cycles = min(num[3] for num in nums) * _cache_lines(u, per_line) * rpn
        per_form[u.part.kernel] = per_form.get(u.part.kernel, 0.0) + cycles / (s if u.part.kernel == "RHSALL" else 1)
    if not per_form:
        return None
    return step_bound(components, s, m, sources, min(per_form.values()), sc.machine.clock_hz, threads, comm_s)


def assemble(sc: Scenario, variants: list[Variant], uses: tuple[dict[str, list[PartUse]], list[PartUse]],
             results: dict[str, dict], numbers: dict[str, tuple | None], rule: Rule,
             excluded: dict[str, str] | None, ran: int, session: Session, detail: bool = True) -> RankResult:
    """Predictions and ranking of one scenario from ECM results already at hand.  Each distinct
    part is costed once and each scheme's communication once; without detail the predictions
    carry no per-kernel breakdown (a sweep of thousands of scenarios needs only the times)."""
    ctx = comm_context(sc)
    op_seconds = session.network(sc.machine.network)
    barrier_s = commmod.barrier_seconds(sc.threads, sc.machine.barrier["per_doubling_s"])
    clock, threads, rpn = sc.machine.clock_hz, sc.node_threads, sc.ranks_per_node
    failures: dict[str, dict] = {}
    uses_by_variant, distinct = uses
    per_line = sc.machine.cacheline / DOUBLE
    for u in distinct:
        nums = [numbers[k] for k in u.keys]
        if None in nums:
            u.seconds = None
            r = results[u.keys[nums.index(None)]]
            failures[u.part.name] = {k: r.get(k) for k in ("error", "log")} | {"regime": u.label}
            continue
        beta, delta = _iterations(u), per_line / u.part.loops[-1].step
        costs = []
        for (reg, w), (alpha, sigma, scaling, _) in zip(u.mix, nums):
            # with several ranks on a node, the node's cores work on all of them at once:
            # kerncraft's scaling at all busy cores, times the ranks sharing it
            alpha_tau = float(scaling[threads - 1]) * rpn if len(scaling) >= threads else None
            if detail:
                costs.append((w, kernel_cost(KernelTerm(u.part.name, u.part.kernel, reg.label, alpha, sigma, beta,
                                                        delta, u.executions, alpha_tau), clock, threads)))
            else:
                costs.append((w, execution_seconds(alpha, alpha_tau, sigma, beta, delta, clock, threads)[1]))
        if detail:
            u.cost = mixed_cost(costs, u.label)
            u.seconds = u.cost.seconds
        else:
            u.seconds = sum(w * sec for w, sec in costs) * u.executions
    comm_by_scheme: dict[tuple, float] = {}
    interior = interior_share(math.ceil(sc.n / sc.nodes), ctx.distance)
    by_form: dict[tuple, tuple] = {}     # variants of one form run the same parts
    out = []
    for v in variants:
        f = form(v)
        if f not in by_form:
            uses = uses_by_variant[v.name]
            secs = [u.seconds for u in uses]
            failed = [u.part.name for u in uses if u.seconds is None]
            kernels = tuple(u.cost for u in uses) if detail and not failed else ()
            rhs_s = None if failed else sum(u.seconds for u in uses if u.part.kernel in RHS_SWEEPS)
            by_form[f] = (secs, failed, kernels, session.counts(sc.method, v.pred, v.au, v.rhs, v.fuse), rhs_s)
        secs, failed, kernels, counts, rhs_s = by_form[f]
        # overlap=halo: the sweeps after each exchange run their interior while it is in flight, in
        # a parallel region of its own (one barrier more per exchange)
        interior_s = rhs_s * interior if v.overlap != "none" and rhs_s is not None else None
        barriers = counts.barriers + (counts.exchanges if v.overlap != "none" else 0)
        ck = (v.comm, counts.comm_phases)
        if ck not in comm_by_scheme:
            comm_by_scheme[ck] = commmod.phase_seconds(v.comm, ctx, op_seconds) * counts.comm_phases
        pred = None if failed else combine_seconds(secs, barriers, barrier_s, comm_by_scheme[ck], kernels, interior_s)
        out.append(VariantResult(v, pred, failed, counts.comm_phases, barriers))
    by_name = {r.variant.name: r for r in out}
    ordered_names = rank([(r.variant.name, r.prediction.total_s if r.prediction else None) for r in out])
    ordered = [by_name[n] for n, _ in ordered_names]
    bound = scenario_bound(sc, distinct, numbers, min(comm_by_scheme.values(), default=0.0))
    return RankResult(sc, rule, ordered, preselect(ordered_names, rule), excluded or {}, ran, failures, bound)


def rank_scenario(sc: Scenario, variants: list[Variant], rule: Rule, store: Store,
                  excluded: dict[str, str] | None = None,
                  progress: Callable[[int, int, str], None] | None = None,
                  jobs: int | None = None) -> RankResult:
    return rank_many([(sc, variants, excluded)], rule, store, progress, jobs)[0]


def rank_many(items: list[tuple[Scenario, list[Variant], dict[str, str] | None]], rule: Rule, store: Store,
              progress: Callable[[int, int, str], None] | None = None,
              jobs: int | None = None, detail: bool = True) -> list[RankResult]:
    """Rank a batch of scenarios: one store lookup and one round of analyses for all of them
    (each kernel part at most once per memory regime), then the pure model per scenario."""
    session = Session()
    uses = [part_uses(sc, variants, session) for sc, variants, _ in items]
    machines: dict[str, tuple[Machine, list[PartUse]]] = {}
    for (sc, _, _), (_, distinct) in zip(items, uses):
        machines.setdefault(sc.machine.path, (sc.machine, []))[1].extend(distinct)
    results, ran = {}, 0
    for machine, mine in machines.values():
        got, n = ensure_ecm(mine, machine, store, progress, jobs)
        results.update(got)
        ran += n
    numbers = _ecm_numbers(results)
    return [assemble(sc, variants, by_v, results, numbers, rule, excluded, ran, session, detail)
            for (sc, variants, excluded), by_v in zip(items, uses)]

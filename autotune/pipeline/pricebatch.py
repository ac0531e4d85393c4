"""Pricing a Layout in a batch of scenarios that share IVP, method, machine and threads: where
each part's data comes from (model.reuse, model.regime), which ECM results that needs, then the
model (model.steptime) for every variant of every scenario at once.

One scenario computes on plain numbers (model.ops.SCALAR), more on numpy arrays (model.batch),
with the same code and the same results.  The breakdowns (per-kernel costs, failures) are built
only for the scenarios and rows that are asked for.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

from autotune.model import loops
from autotune.model import regime as regmod
from autotune.model import reuse
from autotune.model.bound import STEP_VECTORS, Bound, live_vectors, source_shares, step_bound
from autotune.model.comm import barrier_seconds, phase_seconds
from autotune.model.control import scenario_cost
from autotune.model.ecm import ecm_numbers, interior_share
from autotune.model.learned import adjust
from autotune.model.ops import SCALAR, Ops
from autotune.model.state import at_state, level_bandwidth
from autotune.model.steptime import form_times, per_execution, regime_rate, variant_times
from autotune.model import sweeps as swmod
from autotune.model.streaming import MEMORY, streamed
from autotune.model.tiles import home_level, tile_rows, tiled
from autotune.pipeline.layout import Layout, Session, Unit, tile_of, walk_of
from autotune.pipeline.sweepprice import at_level, sweep_factors
from autotune.specs import window
from autotune.specs.parts import DOUBLE, KernelPart
from autotune.specs.scenario import Scenario
from autotune.specs.schemes import PhaseContext

NAN = float("nan")


@dataclass
class Placed:
    """Where the data of each unit of a layout comes from in each scenario of a batch."""
    levels: list            # per unit: [(level, share, regime code, the codes it takes)] (numbers or arrays)
    m: list                 # per unit: components swept on the slowest node
    lv: regmod.NodeLevels
    n_local: list[int]      # per scenario: components per node
    ctx: list[PhaseContext]  # per scenario: what its communication depends on


@dataclass
class Batch:
    """Scenarios that share a layout, IVP, method, machine and thread counts."""
    layout: Layout
    scenarios: list[Scenario]
    ops: Ops = SCALAR
    placed: Placed | None = None     # set by place()

    @property
    def first(self) -> Scenario:
        return self.scenarios[0]

    def column(self, values: list):
        """A per-scenario list as the batch computes on it (its number, or an array)."""
        if self.ops is SCALAR:
            return values[0]
        import numpy as np
        return np.asarray(values)


def place(batch: Batch) -> list[tuple[KernelPart, regmod.Regime]]:
    """Shares and regimes of every unit in every scenario; returns the (part, regime) pairs whose
    ECM results the batch needs."""
    sc, ops, layout = batch.first, batch.ops, batch.layout
    ivp, rpn = sc.ivp, sc.ranks_per_node
    lv = regmod.node_levels(sc.machine, sc.node_threads)
    reach = reuse.level_reach(sc.machine, sc.node_threads)
    sizes: dict[int, tuple] = {}          # per n: (distance, per RHS part: components, halo)
    for s in batch.scenarios:
        if s.n not in sizes:
            sizes[s.n] = (ivp.access_distance(s.n),
                          [(ivp.part_components(spec, s.n), ivp.part_halo(spec, s.n)) for spec in ivp.rhs])
    n_local = [s.n_local for s in batch.scenarios]
    ctx = [PhaseContext(s.n, s.nodes, sizes[s.n][0], ivp.sparse_halo) for s in batch.scenarios]
    vector_bytes = batch.column([float(DOUBLE * n * rpn) for n in n_local])
    shares, steps = {}, {}
    sized: dict[tuple, tuple] = {None: (batch.column(n_local), 0)}
    levels, ms, needs = [], [], {}
    regions = [s.nodes * s.threads for s in batch.scenarios]      # threads of all ranks
    for unit in layout.units:
        part = unit.part
        windowed = unit.windowed
        tile = tile_of(unit.tiling, sc.machine, sc.method.stages) if windowed else 0
        # the window's order (traversal=strips): its rings, its distance and its edges' work
        walks = [walk_of(unit, ivp, s.n, sc.method, sc.machine) for s in batch.scenarios] if unit.walking else None
        if (unit.distances, tile, unit.walking) not in shares:
            stages = sc.method.stages
            ring = batch.column([float(DOUBLE * (walks[i].ring if walks else
                                                 window.ring_components(tile, window.reach(ivp, s.n), stages))
                                       * sc.node_threads) for i, s in enumerate(batch.scenarios)]) if windowed else None
            shares[(unit.distances, tile, unit.walking)] = reuse.level_shares_of(
                ops, unit.distances, vector_bytes, reach, steps.setdefault((tile, unit.walking), {}), ring)
        key = None if unit.spec is None else (unit.spec, part.step)
        if key not in sized:
            sized[key] = (batch.column([s.part_local(sizes[s.n][1][unit.spec][0]) * part.step
                                        for s in batch.scenarios]),
                          batch.column([sizes[s.n][1][unit.spec][1] for s in batch.scenarios]))
        m, halo = sized[key]
        if walks:            # the levels read their neighbours in the strip's planes
            halo = batch.column([w.distance for w in walks])
        if unit.extends:     # pipe=wavefront: the neighbours' share computed again (specs.window)
            m = m * batch.column([(1.0 + window.extra_share(sizes[s.n][0], unit.extends, r, s.n))
                                  * (1.0 + (walks[i].edge_share(unit.extends) if walks else 0.0))
                                  for i, (s, r) in enumerate(zip(batch.scenarios, regions))])
        mine = []
        for level, w in enumerate(shares[(unit.distances, tile, unit.walking)]):
            used = w > 0
            if not ops.any(used):
                continue
            code = regmod.regime_codes(ops, part, level, m * rpn, halo, lv)
            codes = _codes_where(ops, code, used)
            mine.append((level, w, code, codes))
            for c in codes:
                reg = regmod.code_regime(c, lv)
                for p in [lp.part for lp in unit.loops] or [part]:     # a fused sweep's loops, not the sweep
                    r = loops.loop_regime(p, reg) if unit.loops else reg
                    needs.setdefault((p.code, r), (p, r))
        levels.append(mine)
        ms.append(m)
    batch.placed = Placed(levels, ms, lv, n_local, ctx)
    return list(needs.values())


def _codes_where(ops: Ops, code, used) -> list[int]:
    """The regime codes a unit takes where its share is used."""
    if ops is SCALAR:
        return [code]
    import numpy as np
    if np.ndim(code) == 0:
        return [int(code)]
    return np.unique(code[used]).tolist()


@dataclass
class Priced:
    """A priced batch: per variant (in the layout's order) its times, and the tables the
    breakdowns are built from."""
    batch: Batch
    times: list             # per variant: VariantTimes (numbers or arrays)
    failed: list            # per form: its kernel seconds are NaN (a part failed), per scenario
    slot_seconds: list      # per slot: seconds per step (NaN: failed)
    broken: list            # per scenario: some slot failed
    results: dict           # ECM result per (part code, regime code)
    numbers: dict           # the same as (alpha, sigma, scaling, t_comp), None: failed
    bounds: list            # per scenario: Bound | None
    factors: dict           # per unit of a measured fused sweep: how it is priced (sweep_factors)

    def key(self, u: int, code: int) -> tuple:
        """Key of unit u's priced result in one regime (results, numbers)."""
        return priced_key(self.batch.layout.units[u], u, code, self.factors)


def priced_key(unit: Unit, u: int, code: int, factors: dict) -> tuple:
    """Key of a unit's priced result in one regime: its analysis and how it is priced
    (Unit.result_key); a measured sweep's unit has its own (its factor is its sweep's)."""
    return unit.result_key(code) + ((u,) if u in factors else ())


def price(batch: Batch, result_of, session: Session, measured: dict | None = None) -> Priced:
    """Every variant of every scenario of a placed batch.  result_of(part, regime): its ECM
    result (a dict, "ok" false for a failed analysis); measured: per unit of a fused sweep, the
    sweep as the solver runs it (pipeline.sweeps.SweepMeasure), where there is one."""
    sc, ops, layout, placed = batch.first, batch.ops, batch.layout, batch.placed
    factors = sweep_factors(batch, result_of, measured or {}, _as_run)
    clock, threads, rpn = sc.machine.clock_hz, sc.node_threads, sc.ranks_per_node
    per_line = sc.machine.cacheline / DOUBLE
    size = len(placed.lv.names) * (len(placed.lv.names) + 1)
    results, numbers = {}, {}
    per_exec, tcomp = [], []
    for u, (unit, mine, m) in enumerate(zip(layout.units, placed.levels, placed.m)):
        alpha, divisor, tc = [NAN] * size, [NAN] * size, [NAN] * size
        tile = tile_of(unit.tiling, sc.machine, sc.method.stages) if unit.stores_f else 0
        for _, _, _, codes in mine:
            for c in codes:
                key = priced_key(unit, u, c, factors)
                num = numbers.get(key, ())
                if num == ():
                    reg = regmod.code_regime(c, placed.lv)
                    r = results[key] = _as_run(result_of, reg, unit, tile, sc,
                                               at_level(factors.get(u, ()), placed.lv.names.index(reg.data)))
                    num = numbers[key] = ecm_numbers(r)
                if num is not None:
                    rate = regime_rate(num[0], num[1], num[2], clock, threads, rpn)
                    alpha[c], divisor[c], tc[c] = rate.alpha, rate.divisor, num[3]
        beta = unit.part.iterations_per_m * m
        delta = per_line / unit.part.loops[-1].step
        # a node whose jobs get a share of each core's time (cluster.cpu_quota) takes 1/share as long
        per_exec.append(per_execution(ops, [(w, code) for _, w, code, _ in mine], beta, delta, alpha, divisor)
                        / sc.machine.cpu_quota)
        tcomp.append(tc)
    slot_seconds = [per_exec[s.unit] * s.executions for s in layout.slots]
    forms = [form_times(slot_seconds, f.slots, f.rhs_slots) for f in layout.forms]
    barrier_s = barrier_seconds(sc.threads, sc.machine.barrier["per_doubling_s"]) / sc.machine.cpu_quota
    op_seconds = session.network(sc.machine.network)
    comm = [batch.column([phase_seconds(scheme, replace(ctx, distance=ctx.distance * ghost), op_seconds) * phases
                          for ctx in placed.ctx])
            for scheme, phases, ghost in layout.comm_keys]
    interior = batch.column([interior_share(n, ctx.distance) for n, ctx in zip(placed.n_local, placed.ctx)])
    control = _controls(batch, op_seconds, layout)
    shapes = layout.control
    times = [variant_times(ops, forms[f], b, barrier_s, comm[c], lap, interior,
                           control[(layout.forms[f].windowed, shape)])
             for f, c, b, lap, shape in zip(layout.form_of, layout.comm_of, layout.barriers, layout.overlap, shapes)]
    failed = [ops.isnan(f.kernels) for f in forms]
    bounds = _bounds(batch, *_rhs_cycles(batch, tcomp, per_line), comm)
    broken = False
    for f in failed:
        broken = broken | f
    return Priced(batch, times, failed, slot_seconds, _rows(batch, broken), results, numbers, bounds, factors)


def _controls(batch: Batch, op_seconds, layout) -> dict:
    """Step-size control's cost (model.control) per (pipelined step, control shape) the layout's
    variants have (pipeline.layout.control_shape), each a ControlCost whose seconds are the
    batch's columns; None for each without control."""
    keys = set(zip((layout.forms[f].windowed for f in layout.form_of), layout.control))
    if batch.first.control is None:
        return dict.fromkeys(keys)
    out = {}
    for windowed, shape in keys:
        each = [scenario_cost(s, windowed, op_seconds, **dict(shape)) for s in batch.scenarios]
        out[(windowed, shape)] = replace(each[0], **{k: batch.column([getattr(c, k) for c in each])
                                                     for k in ("save_s", "norm_s", "reduce_s", "restore_s", "rejected")})
    return out


def _as_run(result_of, reg: regmod.Regime, unit: Unit, tile: int, sc: Scenario, sweep: dict | None = None) -> dict:
    """The analysis of a unit's code in a regime (result_of(part, regime)) as the variant runs it:
    a fused sweep as the sum of the loops it runs per tile (model.loops), each with what it keeps
    in the tile and what it streams; else the unit's part with its streams written without
    write-allocate (where it streams), its tile's lines where the tile lives; its in-cache terms
    at the measured sweep's (where it is a fused sweep measured off its analysis: model.sweeps;
    measured in memory, every term, for a result whose data comes from memory),
    then the machine's learned factors, which were fitted to results priced so (pipeline.learn);
    last, where the machine carries a tune run's measured state, the result at that state
    (model.state)."""
    m = sc.machine
    names = tuple(c.name for c in m.caches) + (MEMORY,)
    if unit.loops:
        home = home_level(tile, sc.method.stages, tile_rows(unit.part), m.caches)
        result = loops.summed([(lp, loops.in_tile(result_of(lp.part, loops.loop_regime(lp.part, reg)), lp, home, names,
                                                  m.numa_cores, m.cores, m.streaming_stores))
                               for lp in unit.loops], m.numa_cores, m.cores)
    else:
        result = result_of(unit.part, reg)
        if unit.streams:
            result = streamed(result, unit.part, unit.streams, m.numa_cores, m.cores, m.streaming_stores)
        if tile:
            result = tiled(result, unit.part, tile, sc.method.stages, m.caches, m.cacheline, m.numa_cores, m.cores)
    if sweep is not None:
        if sweep["source"] == swmod.MEASURED:
            result = swmod.scaled(result, sweep["factor"], sweep["level"], names, m.numa_cores, m.cores)
        if result.get("ok"):
            result = dict(result, sweep=sweep)
    if m.learned is not None:
        result = adjust(result, unit.part.kernel, m.learned.factors, m.numa_cores, m.cores)
    if m.state is not None:
        result = at_state(result, m.state, m.numa_cores, m.cores)
    return result


def _rhs_cycles(batch: Batch, tcomp: list, per_line: float):
    """In-core cycles of one RHS evaluation on the node, for the floor: the cheapest form the pool
    has (one argument vector's parts, or the one-pass parts' cycles over the s vectors they
    evaluate), each part in its cheapest regime (None: the pool has no RHS part of its own), and
    where an analysis it needs failed."""
    ops, layout, placed = batch.ops, batch.layout, batch.placed
    s, rpn = batch.first.method.stages, batch.first.ranks_per_node
    per_form: dict[str, object] = {}
    failed = False
    for slot in layout.bound_slots:
        u = layout.slots[slot].unit
        part, least = layout.units[u].part, None
        for _, w, code, _ in placed.levels[u]:
            t = ops.take(tcomp[u], code)
            failed = failed | (ops.isnan(t) & (w > 0))
            t = ops.where(w > 0, t, math.inf)
            least = t if least is None else ops.minimum(least, t)
        lines = part.iterations_per_m * placed.m[u] / (per_line / part.loops[-1].step)
        cycles = least * lines * rpn
        per_form[part.kernel] = per_form.get(part.kernel, 0.0) + cycles / (s if part.kernel == "RHSALL" else 1)
    least = None
    for v in per_form.values():
        least = v if least is None else ops.minimum(least, v)
    return least, failed


def _bounds(batch: Batch, cycles, failed, comm: list) -> list[Bound | None]:
    """The step's floor in each scenario (model.bound): compulsory traffic from the levels that
    can hold the step's live data, the in-core time of the step's RHS evaluations and linear
    combinations, the cheapest communication."""
    sc = batch.first
    method, machine, threads, rpn = sc.method, sc.machine, sc.node_threads, sc.ranks_per_node
    lv, reach = batch.placed.lv, reuse.level_reach(machine, threads)
    if cycles is None:
        return [None] * len(batch.scenarios)
    cycles, failed, comm = _rows(batch, cycles), _rows(batch, failed), [_rows(batch, c) for c in comm]
    bandwidth = {name: machine.bandwidth(name, threads) for name in lv.names}
    clock = machine.clock_hz
    if machine.state is not None:     # the floor at a tune run's measured state (model.state)
        bandwidth = {name: None if b is None else level_bandwidth(name, b, machine.state)
                     for name, b in bandwidth.items()}
        clock = machine.state.clock_hz
    out = []
    for i, n_local in enumerate(batch.placed.n_local):
        components = n_local * rpn
        # a floor assumes ideal caches: a level keeps as much of the live data as it holds
        sources = [[(name, w, bandwidth[name]) for name, w in zip(lv.names, source_shares(
            live * DOUBLE * components, reach))] for live in (STEP_VECTORS, live_vectors(method.stages))]
        if any(w > 0 and b is None for src in sources for _, w, b in src) or failed[i]:
            out.append(None)
            continue
        comm_s = min((c[i] for c in comm), default=0.0)
        out.append(step_bound(components, method.stages, method.iterations, sources[0], cycles[i],
                              clock, threads, comm_s, sources[1], machine.dp_flops_per_cycle))
    return out


def _rows(batch: Batch, value) -> list:
    """A per-scenario value as a list of Python numbers, one per scenario."""
    if batch.ops is SCALAR:
        return [value]
    import numpy as np
    return np.broadcast_to(value, (len(batch.scenarios),)).tolist()

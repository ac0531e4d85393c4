"""How a batch's fused sweeps are priced against their measurements (pipeline.sweeps,
model.sweeps): per measured level, the model's seconds for the sweep at the measured size and
threads against the measured ones, the source chosen and the factor; and which measurement
prices a result whose data comes from a given level.  In a cache level the model's figure is the
sweep's in-cache terms; in memory it is the sweep as the pool is priced there, every term and
the node's saturation (model.steptime), and the factor scales every term.  A measured sweep is
one parallel region of the solver: its time holds the region's start and end, which the model
prices on its own as the step's barriers (model.steptime), so the factor is taken over the
measured time less that (docs/node-model.md, "What a sweep costs beyond its loops")."""
from __future__ import annotations

import math

from autotune.model import regime as regmod
from autotune.model import sweeps as swmod
from autotune.model.comm import barrier_seconds
from autotune.model.ecm import ecm_numbers
from autotune.model.steptime import regime_rate
from autotune.model.streaming import stream_counts
from autotune.pipeline.layout import Unit, tile_of, walk_of
from autotune.pipeline.sweeps import PIPE
from autotune.specs.parts import DOUBLE
from autotune.specs.variants import configuration
from autotune.specs.window import extra_share

MEMORY = "MEM"     # the level name of memory (model.regime)


def sweep_factors(batch, result_of, measured: dict, as_run) -> dict[int, tuple[dict, ...]]:
    """Per unit of a measured fused sweep, how it is priced at each measured level (model.sweeps):
    the sweep's measured seconds per execution against the model's at that size and level, over
    every part of the sweep (each part's analysis as the variant runs it, before any factor:
    as_run, pipeline.pricebatch's), the source chosen and the factor k.  In memory the model's
    figure is each part in the batch's regime whose data is memory's, on the node's cores as the
    pool is priced (a batch with none has no pricing in memory)."""
    if not measured:
        return {}
    from autotune.pipeline.incore import one_core_clock
    sc, layout, placed = batch.first, batch.layout, batch.placed
    per_doubling = float(sc.machine.barrier.get("per_doubling_s") or 0.0)
    clock, per_line = one_core_clock(sc.machine), sc.machine.cacheline / DOUBLE
    names = placed.lv.names
    sweeps: dict[tuple, list[int]] = {}
    for u, got in measured.items():
        if got:     # the units of one sweep: its RHS parts (another form's sweep may measure it in memory)
            sweeps.setdefault((got[0].form or got[0].variant, got[0].group), []).append(u)
    out: dict[int, tuple[dict, ...]] = {}
    for members in sweeps.values():
        infos = []
        for i, got in enumerate(measured[members[0]]):
            model_s: float | None = 0.0
            memory = got.level >= len(names) - 1
            for u in members:
                runs = measured[u][i].executions
                unit = layout.units[u]
                code = next((c for _, _, _, codes in placed.levels[u] for c in codes), None)
                tile = tile_of(unit.tiling, sc.machine, sc.method.stages) if unit.stores_f else 0
                if memory:     # the pool's regime whose data is memory's, where it has one
                    code = next((c for level, _, _, codes in placed.levels[u] if level == len(names) - 1
                                 for c in codes), None)
                priced = None if code is None else as_run(result_of, regmod.code_regime(code, placed.lv),
                                                          unit, tile, sc)
                cycles = None if priced is None else swmod.in_cache_cycles(priced, got.level, names)
                if cycles is None or model_s is None:
                    model_s = None
                    continue
                m = math.ceil(sc.ivp.part_components(sc.ivp.rhs[unit.spec], got.n)) * unit.part.step
                if unit.extends:   # a pipelined level: the neighbours' share computed again, at this size
                    m *= 1.0 + extra_share(sc.ivp.access_distance(got.n), unit.extends, got.threads, got.n)
                    walk = walk_of(unit, sc.ivp, got.n, sc.method, sc.machine) if unit.walking else None
                    m *= 1.0 + (walk.edge_share(unit.extends) if walk else 0.0)    # and at the strips' edges
                lines = unit.part.iterations_per_m * m / (per_line / unit.part.loops[-1].step)
                if memory:     # the node's cores share memory: kerncraft's scaling, as the pool is priced
                    alpha, sigma, scaling, _ = ecm_numbers(priced)
                    rate = regime_rate(alpha, sigma, scaling, sc.machine.clock_hz, got.threads, 1)
                    model_s += runs * rate.alpha * lines / rate.divisor
                    continue
                # the threads share the lines; nothing saturates short of memory
                model_s += runs * cycles * lines / (clock if got.threads == 1 else sc.machine.clock_hz) / got.threads
                model_s += runs * streamed_seconds(unit, m, got.threads, sc.machine.streaming_stores)
            if model_s is None and memory:
                # in memory the figure is the sweep's whole time there: without a regime of the
                # batch whose data is memory's (or with a failed analysis in it) there is none, and
                # the data that memory serves keeps the factor from L2 (at_level)
                continue
            # the region's start and end: priced as one of the step's barriers, not by the factor
            region = min(barrier_seconds(got.threads, per_doubling), got.seconds / 2)
            loops_s = got.seconds - region
            source, why = swmod.choose(loops_s, model_s)
            k = loops_s / model_s if source == swmod.MEASURED and model_s else 1.0
            if got.group == PIPE:
                why = f"the pipelined step, its levels timed together: {why}"
            if got.form:
                why = f"{why}; timed in the run of the form with {differing(got.variant, got.form)}, whose sweeps are the same"
            infos.append({"source": source, "why": why if not got.error else f"not measured: {got.error}",
                          "measured_s": got.seconds, "region_s": region, "analysed_s": model_s, "factor": k, "n": got.n,
                          "level": got.level, "level_name": names[min(got.level, len(names) - 1)],
                          "threads": got.threads, "variant": got.variant, "group": got.group})
        out.update({u: tuple(infos) for u in members})
    return out | borrowed(layout, measured, out)


def differing(variant: str, form: str) -> str:
    """The values of `variant` where it differs from `form` (both variant names; a dimension a
    name leaves out is at its default): "buf=pack" for heat2d's buf=ghost form timed in buf=pack's
    run, not the whole name."""
    mine, theirs = configuration(variant), configuration(form)
    return ",".join(f"{k}={v}" for k, v in mine.items() if theirs[k] != v) or variant


def memory_units(placed) -> set[int]:
    """The units of a placed batch some of whose data comes from memory in some scenario: those a
    sweep measured in memory can price (pipeline.sweeps.ensure_sweeps measures no other there)."""
    memory = len(placed.lv.names) - 1
    return {u for u, mine in enumerate(placed.levels) if any(level == memory for level, *_ in mine)}


def borrowed(layout, measured: dict, priced: dict[int, tuple[dict, ...]]) -> dict[int, tuple[dict, ...]]:
    """Per fused unit that could not be measured in a cache level (its tiles' data does not fit
    L2: block=l2; a pipelined step's vectors do not at the least size), the pricing in cache of a
    measured sweep of the same group that stores alike (the same streams) and is pipelined alike,
    the first in the layout's order, marked as borrowed, beside its own measurement in memory
    where it has one: a sweep of another tile size measured while this one keeps its analysis
    would be priced against it by different rules, and the two rank by that alone (inverterchain
    n = 4e4: block=l1 measured 1.2-1.4 x slower than analysed, block=l2 analysed only, ranked
    first, ran 75 % slower)."""
    out = {}
    for u in measured:
        own = priced.get(u, ())
        if any(not in_memory(i) for i in own):
            continue
        unit = layout.units[u]
        donor = next((v for v in priced if layout.units[v].part.kernel == unit.part.kernel
                      and layout.units[v].streams == unit.streams
                      and layout.units[v].windowed == unit.windowed
                      and any(not in_memory(i) for i in priced[v])), None)
        if donor is None:
            continue
        what = ("the pipelined step's data does not fit L2 at the least size it runs" if unit.windowed
                else "its tiles' data does not fit L2")
        out[u] = tuple(dict(i, why=f"not measurable here ({what}): the factor of "
                                   f"{i['variant']}'s sweep ({i['why']})", borrowed=True)
                       for i in priced[donor] if not in_memory(i)) + own
    return out


def in_memory(info: dict) -> bool:
    """Whether a sweep's pricing is of its measurement in memory."""
    return info.get("level_name") == MEMORY


def streamed_seconds(unit: Unit, m: int, threads: int, stores) -> float:
    """Seconds the rows a unit stores non-temporally take to memory at a size whose data stays in
    cache (where they go all the same, and the analysis of a cache regime has no memory term):
    at the machine's measured copy_nt rate on `threads` threads (0 where it streams nothing or
    the file measured no rate)."""
    if not unit.streams:
        return 0.0
    rows = stream_counts(unit.part, unit.streams)[2]
    rate = next((s.nt_bps[min(threads, len(s.nt_bps)) - 1] for s in stores
                 if s.level == "MEM" and s.kernel == "copy" and s.nt_bps), None)
    return DOUBLE * rows * m / rate if rate else 0.0


def at_level(infos: tuple[dict, ...], data: int) -> dict | None:
    """The measurement that prices a result whose data comes from level index `data`: memory's
    where the data is memory's and the sweep was measured there (a run that failed, or a record
    the store lacks on another CPU, is no measurement); else the deepest one measured in a cache
    level at or above it (the shallowest where all lie deeper)."""
    memory = [i for i in infos if in_memory(i) and i.get("measured_s") is not None]
    if memory and data >= memory[0]["level"]:
        return memory[0]
    cached = [i for i in infos if not in_memory(i)]
    if not cached:
        return None
    held = [i for i in cached if i["level"] <= data]
    return max(held, key=lambda i: i["level"]) if held else min(cached, key=lambda i: i["level"])

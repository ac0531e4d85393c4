"""A fused sweep priced as the loops it runs over each tile.  Pure.

kerncraft analyses a fused sweep (fuse=rhs-lc) as one loop whose stage derivatives stay in
registers (codegen.parts.fused_parts), and prices it as one loop: its in-core work hidden behind
its transfers, max(in-core, transfers).  The solver runs several loops over each tile, one after
the other (codegen.parts.tile_loops): the RHS into the tile's F, the linear combination reading
F back, with store=nt a copy of the tile's new rows with streaming stores.  What one loop
computes is not hidden behind what the next one streams (docs/node-model.md, "The loops of a
fused sweep"), so the sweep is priced as the sum of its loops, each analysed on its own, each
combined as kerncraft combines a loop:

    T_sweep = sum over loops i of w_i * T_i        w_i: loop i's lines of work per line of the sweep

Each loop is analysed in the regime of the sweep's data (loop_regime); the arrays it keeps in
the tile's buffers (F, store=nt's staging rows) move only between the levels above the level
that holds the tile, and the rows it streams out move once, to memory (in_tile).  The sum keeps
each loop's terms, marked with the loop (model.learned.LOOP_MARK), so that every later step
(the measured sweep's factor, learned factors, a run's state) scales terms as before and
recombines them loop by loop.  On the node's cores each loop saturates memory alone, after
kerncraft's rule, and the loops' curves add: the threads run their tiles' loops in step, so a
loop that streams meets the other threads streaming too (on a 2-core Zen 1 guest heat2d's
predictor sweep with store=nt ran 1.33 x its loops priced so in memory, 1.71 x with the summed
transfer saturating once; docs/node-model.md, "The loops of a fused sweep").
"""
from __future__ import annotations

from autotune.arith import ordered_sum
from autotune.model.learned import LOOP_MARK, recombine, transfer_interface
from autotune.model.regime import Regime
from autotune.model.streaming import MEMORY, nt_priced, rescaled
from autotune.specs.machine import StreamingStores
from autotune.specs.parts import KernelPart, TileLoop


def loop_regime(part: KernelPart, regime: Regime) -> Regime:
    """The regime a loop of a sweep is analysed in: the sweep's data level, and its layer
    condition where the loop reuses what it reads (a stencil's window); a loop without reuse
    has none."""
    reuses = part.size_parameter is not None or part.halo not in ("0", "") or part.sweep_bytes_per_component
    return regime if reuses or regime.layer is None else Regime(regime.data, None)


def array_lines(part: KernelPart) -> dict[str, float]:
    """Lines each array of a loop moves across an interface, per row it touches: 1 for a row it
    reads; 2 for a row it writes (the write-allocate read, then the eviction) or updates (the
    read, then the eviction).  From the part's declared accesses where it has them (a method
    part), else its arrays: F and the arrays it stores are written, every other one read."""
    if not part.accesses:
        return {a: float(rows * (2 if a == "F" or a in part.stores else 1)) for a, rows in part.arrays}
    trips = {lp.var: lp.trips for lp in part.loops if lp.start.isdigit() and lp.stop.isdigit()}
    rows: dict[str, dict[str, set]] = {}
    for a in part.accesses:
        got = rows.setdefault(a.array, {})
        key = "0" if a.index is None else a.index
        got.setdefault(key, set()).add(a.mode)
    out = {}
    for array, indices in rows.items():
        total = 0.0
        for index, modes in indices.items():
            count = trips.get(index, 1) if not index.isdigit() else 1
            total += count * (1 if modes == {"r"} else 2)
        out[array] = total
    return out


def compulsory_lines(loop: TileLoop) -> float | None:
    """The lines a loop moves to and from memory per line of its work as it runs over tiles:
    each row of an array it does not keep in the tile once (array_lines: 2 for a row written or
    updated), one for a row it streams out (None for a loop with a step other than 1, whose rows
    are shared with the parts it interleaves with)."""
    part = loop.part
    if any(lp.step != 1 for lp in part.loops) or not part.iterations_per_m:
        return None
    lines = array_lines(part)
    per = [n / 2 if a in loop.streams else n for a, n in lines.items() if a not in loop.resident]
    return ordered_sum(per) / part.iterations_per_m


def interface_ratios(loop: TileLoop, home: int, names: tuple[str, ...],
                     counted: dict[str, float] | None = None) -> dict[str, float]:
    """Per interface ("L1-L2", ..., "L3-MEM"), the lines the loop moves as it runs over tiles
    over those its analysis counts.  Between caches: every array is taken to cross an interface
    alike (as model.streaming takes them), an array kept in the tile crosses none beyond the
    level that holds the tile (index `home` in names), a row stored non-temporally none.  Into
    memory, where the analysis counted its lines (`counted`, its `lines`), the loop's compulsory
    lines over those: kerncraft's cache simulation ends before the lines a loop writes are
    evicted to memory (rhs=onepass in memory: 1 line per line of work counted, its reads; its F
    writes 2 more), and its count is the whole of what the transfer term prices."""
    lines = array_lines(loop.part)
    total = ordered_sum(lines.values())
    out = {}
    for upper, lower in zip(names, names[1:]):
        iface = f"{upper}-{lower}"
        need = compulsory_lines(loop) if lower == MEMORY else None
        if need is not None and counted and counted.get(iface):
            out[iface] = need / counted[iface]
            continue
        kept = []
        for array, n in lines.items():
            if array in loop.resident and names.index(lower) > home:
                continue
            if array in loop.streams:
                kept.append(n / 2 if lower == MEMORY else 0.0)
                continue
            kept.append(n)
        out[iface] = ordered_sum(kept) / total if total else 1.0
    return out


def in_tile(result: dict, loop: TileLoop, home: int, names: tuple[str, ...], numa_cores: int,
            socket_cores: int, stores: tuple[StreamingStores, ...] = ()) -> dict:
    """A loop's analysis as it runs over tiles: each transfer term (and the lines counted at its
    interface) scaled by interface_ratios; where it streams rows out, priced as model.streaming
    prices streamed stores (its memory transfer at the machine's measured rate of non-temporal
    stores) (a failed analysis, or one without terms, as it is)."""
    if not result.get("ok") or not result.get("terms"):
        return result
    ratio = interface_ratios(loop, home, names, result.get("lines"))
    scale = lambda iface: ratio.get(iface, 1.0)     # noqa: E731
    if loop.streams:
        return nt_priced(result, scale, stores, numa_cores, socket_cores)
    return rescaled(result, scale, numa_cores, socket_cores)


def summed(loops: list[tuple[TileLoop, dict]], numa_cores: int, socket_cores: int) -> dict:
    """The sweep's result from its loops' (each as it runs: in_tile): per line of work of the
    sweep, each loop's terms times its weight, marked with the loop, recombined loop by loop
    (model.learned.recombine); the in-core cycles, the lines at each interface summed likewise;
    `loops` lists each loop's name, weight and cycles.  A failed loop fails the sweep, named."""
    for loop, r in loops:
        if not r.get("ok"):
            return dict(r, error=f"{loop.part.name}: {r.get('error', 'failed')}")
    terms: dict[str, float] = {}
    lines: dict[str, float] = {}
    entries = []
    for i, (loop, r) in enumerate(loops):
        w = loop.weight
        terms.update({f"{t}{LOOP_MARK}{i}": v * w for t, v in r["terms"].items()})
        for iface, n in (r.get("lines") or {}).items():
            lines[iface] = lines.get(iface, 0.0) + n * w
        entries.append({"name": loop.label, "part": loop.part.name, "weight": w,
                        "cy_per_cl": float(r["cy_per_cl"]) * w, "incore": (r.get("incore") or {}).get("source")})
    heaviest = max(loops, key=lambda lr: _memory_cycles(lr[1]) * lr[0].weight)[1]
    base = {"ok": True, "t_comp": ordered_sum(float(r.get("t_comp") or 0.0) * lp.weight for lp, r in loops),
            "t_regl1": ordered_sum(float(r.get("t_regl1") or 0.0) * lp.weight for lp, r in loops),
            "memory_bandwidth_kernel": heaviest.get("memory_bandwidth_kernel", ""),
            # kerncraft's curve's length (recombine fills it in)
            "scaling_cy_per_cl": list(loops[0][1].get("scaling_cy_per_cl") or []), "loops": entries,
            "loop_bandwidth_kernels": [str(r.get("memory_bandwidth_kernel") or "") for _, r in loops]}
    if all(r.get("lines") for _, r in loops):
        base["lines"] = lines
    return recombine(base, terms, numa_cores, socket_cores)


def _memory_cycles(result: dict) -> float:
    return ordered_sum(v for t, v in result["terms"].items() if (transfer_interface(t) or "").endswith("-MEM"))

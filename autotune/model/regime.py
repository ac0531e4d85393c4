"""Memory regimes: which cache level a kernel part's data lives in on one node.

An ECM result depends on the size only through the level the data comes from
and the layer condition: the level that holds what a sweep reuses (a stencil's
window of 2 * halo components, or the rows a j loop nested inside another loop
reads again).  We therefore analyse each kernel part once per regime, at a
representative size in the middle of that regime's band, and reuse the result
for every size in the same regime.  Which levels the data comes from in a step
(and in what shares) is model.reuse's answer; regime_codes gives the regime of one
such level, for one size or a batch of them (regime_in: as a Regime, for one).
regime_of places a part by its own working set, as if it ran alone in a loop
(kerncraft's steady state: what the representative sizes must satisfy).
Pure functions.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from autotune.arith import ordered_sum
from autotune.model.ops import SCALAR, Ops
from autotune.specs.parts import KernelPart
from autotune.specs.machine import Machine

DOUBLE = 8
FILL = 0.5          # a level counts as holding the data up to half its capacity
MEM_FACTOR = 3.0    # representative working set of the memory regime: 3x the last-level cache


@dataclass(frozen=True)
class Regime:
    data: str                  # level holding the working set: L1, L2, L3 ... or MEM
    layer: str | None = None   # level holding what a sweep reuses (None: the data's own, or no reuse)

    @property
    def label(self) -> str:
        return self.data if self.layer is None else f"{self.data}/lc:{self.layer}"


@lru_cache(maxsize=256)
def _levels(caches: tuple) -> tuple[str, ...]:
    return tuple(c.name for c in caches) + ("MEM",)


def working_set(part: KernelPart, m: int, halo: int) -> float:
    return part.bytes_per_component * (m + 2 * halo)


def _reuse_bytes(part: KernelPart, halo: int) -> float:
    """Bytes a sweep must keep cached so that y[j+halo] is still there at y[j-halo]."""
    inputs = ordered_sum(rows for name, rows in part.arrays if name != "F")   # rows of all but the output F
    outputs = ordered_sum(rows for name, rows in part.arrays if name == "F")
    return 2 * halo * DOUBLE * max(inputs, 1) + 2 * halo * DOUBLE * outputs  # inputs + output lines in flight


@lru_cache(maxsize=256)
def _limits(caches: tuple, threads: int, partitioned: bool) -> tuple[tuple[str, float], ...]:
    """Per level, the most bytes (of the node's total) it holds at this thread count."""
    out = []
    for c in caches:
        cap = FILL * c.bytes_per_group
        if partitioned:
            out.append((c.name, cap * threads if c.cores_per_group == 1 else cap))
        else:
            out.append((c.name, cap if c.cores_per_group == 1 else cap / min(threads, c.cores_per_group)))
    return tuple(out)


def level_index(bytes_needed: float, limits: tuple[tuple[str, float], ...]) -> int:
    """Index of the first level that holds the bytes (len(limits): memory)."""
    for i, (_, limit) in enumerate(limits):
        if bytes_needed <= limit:
            return i
    return len(limits)


@lru_cache(maxsize=256)
def _regime(data: str, layer: str | None) -> Regime:
    return Regime(data, layer)


@dataclass(frozen=True)
class NodeLevels:
    """The cache levels of one node at one thread count, as regime_at needs them."""
    names: tuple[str, ...]                      # levels and MEM
    shared: tuple[tuple[str, float], ...]       # limits for data split over the threads
    private: tuple[tuple[str, float], ...]      # limits for data every thread needs


@lru_cache(maxsize=256)
def _node_levels(caches: tuple, threads: int) -> NodeLevels:
    return NodeLevels(_levels(caches), _limits(caches, threads, True), _limits(caches, threads, False))


def node_levels(machine: Machine, threads: int) -> NodeLevels:
    return _node_levels(machine.caches, threads)


def regime_of(part: KernelPart, machine: Machine, m: int, halo: int, threads: int) -> Regime:
    """Regime of a part that sweeps m components (per node) split over `threads` cores."""
    return regime_at(part, m, halo, node_levels(machine, threads))


def regime_at(part: KernelPart, m: int, halo: int, lv: NodeLevels) -> Regime:
    """regime_of with the node's levels looked up once (a sweep asks for every part of every
    scenario): index arithmetic and interned results."""
    return regime_in(part, level_index(working_set(part, m, halo), lv.shared), m, halo, lv)


def regime_in(part: KernelPart, data: int, m: int, halo: int, lv: NodeLevels) -> Regime:
    """The regime of a part whose data comes from level index `data` (len: memory), with the layer
    condition of its own reuse (a stencil's window, a j sweep repeated inside another loop) at
    or above that level: regime_codes for one size."""
    return code_regime(regime_codes(SCALAR, part, data, m, halo, lv), lv)


def _band_middle(level: str, machine: Machine) -> float:
    """A byte count in the middle of `level`'s band for one core (kerncraft simulates one core)."""
    caps = [FILL * c.bytes_per_group for c in machine.caches]
    names = [c.name for c in machine.caches]
    if level == "MEM":
        return MEM_FACTOR * machine.caches[-1].bytes_per_group
    i = names.index(level)
    lower = caps[i - 1] if i > 0 else caps[0] / 8
    return math.sqrt(lower * caps[i])


def _closed_form(part: KernelPart, machine: Machine, regime: Regime) -> tuple[int, int]:
    halo = 0
    if part.size_parameter is not None:
        halo = max(1, int(_band_middle(regime.layer or regime.data, machine) / _reuse_bytes(part, 1)))
    elif part.halo not in ("0", ""):
        halo = int(part.halo)
    bytes_per_m, sweep = part.bytes_per_component, part.sweep_bytes_per_component
    m = int(_band_middle(regime.data, machine) / bytes_per_m) - 2 * halo
    if sweep and regime.layer:
        # the sweep fits the layer's level, the data does not: the data as large as that allows.
        # kerncraft's cache simulation holds data up to the level's full size (our bands end at
        # FILL), so a size from the middle of the band would have it find all data cached
        cap = FILL * next(c.bytes_per_group for c in machine.caches if c.name == regime.layer)
        m = int(0.9 * cap / sweep)
    elif sweep:   # no reuse across sweeps: one sweep (not only the data) in the data's band
        m = max(m, int(_band_middle(regime.data, machine) / sweep))
    return max(m, 2 * halo, 64) // 8 * 8, halo


def _search(part: KernelPart, machine: Machine, regime: Regime, halo_fixed: int | None) -> tuple[int, int]:
    """The smallest (M, halo) on a geometric grid that lies in the regime (one thread)."""
    grid = [int(16 * 1.25 ** k) // 8 * 8 for k in range(80)]
    halos = [halo_fixed] if halo_fixed is not None else sorted({max(1, g // 8) for g in grid})
    for m in grid:
        for halo in halos:
            if regime_of(part, machine, m, halo, 1) == regime:
                return m, halo
    raise ValueError(f"no representative size for {part.name} in regime {regime.label}")


def representative_constants(part: KernelPart, machine: Machine, regime: Regime) -> dict[str, int]:
    """kerncraft -D constants (M and, for a growing halo, the size parameter) for this regime.

    The closed form puts the working set (and reuse window) in the middle of the
    regime's band; where the two interact (a halo as large as the block), a
    grid search finds the nearest pair that lies in the regime.
    """
    m, halo = _closed_form(part, machine, regime)
    if regime_of(part, machine, m, halo, 1) != regime:
        m, halo = _search(part, machine, regime, None if part.size_parameter else halo)
    consts = {"M": m}
    if part.size_parameter is not None:     # the halo is the size parameter to a power
        consts[part.size_parameter] = max(1, round(halo ** (1 / part.halo_power)))
    return consts


def regime_code(data: int, layer: int, lv: NodeLevels) -> int:
    """A regime as one small integer (layer -1: none): an index into per-part tables."""
    return data * (len(lv.names) + 1) + layer + 1


def code_regime(code: int, lv: NodeLevels) -> Regime:
    data, layer = divmod(code, len(lv.names) + 1)
    return _regime(lv.names[data], lv.names[layer - 1] if layer else None)


def regime_codes(ops: Ops, part: KernelPart, data: int, m, halo, lv: NodeLevels):
    """The regime (as regime_code) of a part whose data comes from level index `data` (len:
    memory), for m and halo numbers or arrays over scenarios (ops: model.ops): the layer condition
    of the part's own reuse (a stencil's window, a j sweep repeated inside another loop) at or
    above that level."""
    sweep = part.sweep_bytes_per_component
    if part.size_parameter is None:
        if not sweep:
            return regime_code(data, -1, lv)
        layer = _index_of(ops, sweep * m, lv.shared)
        return ops.where(layer < data, regime_code(data, 0, lv) + layer, regime_code(data, -1, lv))
    layer = ops.minimum(data, _index_of(ops, _reuse_bytes(part, halo), lv.private))
    return regime_code(data, 0, lv) + layer


def _index_of(ops: Ops, bytes_needed, limits: tuple[tuple[str, float], ...]):
    """level_index elementwise."""
    index = len(limits)
    for i in range(len(limits) - 1, -1, -1):
        index = ops.where(bytes_needed <= limits[i][1], i, index)
    return index


def sweep_outgrows_faster_levels(part: KernelPart, machine: Machine, regime: Regime, m: int) -> bool:
    """Whether one component sweep's rows (sweep_bytes_per_component x m) exceed every cache level
    faster than the regime's data level, whole (as kerncraft's simulation sizes it): then no level
    serves them again on the next pass of the loops outside the sweep, and layer conditions that
    see no such reuse count what the simulation counts.  Near a level's size they do not: at
    Haswell's L2 regime (17 KB of rows against a 32 KB L1) the simulation of lc.acc.ilj finds part
    of a row again in L1 (T_L1L2 2.25 cy/CL), the layer conditions none (3.0)."""
    names = [c.name for c in machine.caches]
    faster = machine.caches[:names.index(regime.data)] if regime.data in names else machine.caches
    return all(part.sweep_bytes_per_component * m > c.bytes_per_group for c in faster)


def cache_predictor(part: KernelPart, regime: Regime) -> str:
    """The cache predictor of an analysis of the part in this regime: kerncraft's layer conditions
    ("LC", from the part's data view: instant) where they count the same lines as its cache
    simulation ("SIM", seconds), the simulation where they do not:
    - a loop of step > 1 (the layer conditions need unit steps: string-mix's interleaved equations);
    - the RHS of all s argument vectors in one sweep (rhs=onepass): its s rows of one shape, read
      at the same offsets, compete for the same cache sets, which the simulation sees (it models
      sets and ways) and the layer conditions (capacity alone) do not;
    - a component sweep nested inside another loop (the LC forms lc.*.lj, lc.acc.ijl ...) in a
      regime whose layer is a cache level: the sweep's rows are served from that level on the next
      pass of the outer loop, a reuse the layer conditions do not see (they see the reuse between
      the accesses of one sweep, such as a stencil's rows, which they count exactly)."""
    if any(lp.step != 1 for lp in part.loops):
        return "SIM"
    if part.kernel == "RHSALL":
        return "SIM"
    if part.sweep_bytes_per_component and regime.layer is not None:
        return "SIM"
    return "LC"

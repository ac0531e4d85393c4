"""Memory regimes: which cache level a kernel part's data lives in on one node.

An ECM result depends on the size only through the level the working set
(and, for stencils with a growing access distance, the layer condition) falls
into.  We therefore analyse each kernel part once per regime, at a
representative size in the middle of that regime's band, and reuse the
result for every size that falls into the same regime.  Pure functions.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..kernels import KernelPart
from ..specs.machine import Machine

DOUBLE = 8
FILL = 0.5          # a level counts as holding the data up to half its capacity
MEM_FACTOR = 3.0    # representative working set of the memory regime: 3x the last-level cache


@dataclass(frozen=True)
class Regime:
    data: str                  # level holding the working set: L1, L2, L3 ... or MEM
    layer: str | None = None   # level holding the stencil's reuse distance (growing halo only)

    @property
    def label(self) -> str:
        return self.data if self.layer is None else f"{self.data}/lc:{self.layer}"


def levels(machine: Machine) -> list[str]:
    return [c.name for c in machine.caches] + ["MEM"]


def working_set(part: KernelPart, m: int, halo: int) -> float:
    return sum(rows * (m + 2 * halo) * DOUBLE for _, rows in part.arrays)


def _reuse_bytes(part: KernelPart, halo: int) -> float:
    """Bytes a sweep must keep cached so that y[j+halo] is still there at y[j-halo]."""
    inputs = len(part.arrays) - 1  # all but the output F
    return 2 * halo * DOUBLE * max(inputs, 1) + 2 * halo * DOUBLE  # inputs + the output lines in flight


def _level_for(bytes_needed: float, machine: Machine, threads: int, partitioned: bool) -> str:
    """First level that holds the data.

    partitioned: the bytes are split over the threads (a working set); otherwise
    every thread needs them for itself (a stencil's reuse window).  Private
    levels (one core per group) see a thread's share, shared levels the node's.
    """
    for c in machine.caches:
        private = c.cores_per_group == 1
        if partitioned:
            share = bytes_needed / threads if private else bytes_needed
        else:
            share = bytes_needed if private else bytes_needed * min(threads, c.cores_per_group)
        if share <= FILL * c.bytes_per_group:
            return c.name
    return "MEM"


def regime_of(part: KernelPart, machine: Machine, m: int, halo: int, threads: int) -> Regime:
    """Regime of a part that sweeps m components (per node) split over `threads` cores."""
    data = _level_for(working_set(part, m, halo), machine, threads, partitioned=True)
    if part.size_parameter is None:
        return Regime(data)
    layer = _level_for(_reuse_bytes(part, halo), machine, threads, partitioned=False)
    order = levels(machine)
    if order.index(layer) > order.index(data):
        layer = data
    return Regime(data, layer)


def _band_middle(level: str, machine: Machine) -> float:
    """A byte count in the middle of `level`'s band for one core (kerncraft simulates one core)."""
    caps = [FILL * c.bytes_per_group for c in machine.caches]
    names = [c.name for c in machine.caches]
    if level == "MEM":
        return MEM_FACTOR * machine.caches[-1].bytes_per_group
    i = names.index(level)
    lower = caps[i - 1] if i > 0 else caps[0] / 8
    return math.sqrt(lower * caps[i])


def representative_constants(part: KernelPart, machine: Machine, regime: Regime) -> dict[str, int]:
    """kerncraft -D constants (M and, for a growing halo, the size parameter) for this regime."""
    consts: dict[str, int] = {}
    halo = 0
    if part.size_parameter is not None:
        per_halo = _reuse_bytes(part, 1)
        halo = max(8, int(_band_middle(regime.layer or regime.data, machine) / per_halo))
        consts[part.size_parameter] = halo
    elif part.halo not in ("0", ""):
        halo = int(part.halo)
    bytes_per_m = sum(rows for _, rows in part.arrays) * DOUBLE
    target = _band_middle(regime.data, machine)
    m = int(target / bytes_per_m) - 2 * halo
    m = max(m, 4 * halo, 256)
    consts["M"] = (m // 64) * 64 or 64
    return consts

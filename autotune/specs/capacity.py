"""The capacity of the last cache level that a node's cores get (pure): from a scan of a streaming
kernel's bandwidth on every core over sizes around the level's nominal capacity.

The OS gives a cache's geometry, not what a program's data get of it: a guest that shares the
socket's last level with other guests (or a node whose level is partitioned) keeps its data there
only up to a part of its nominal size.  On a 2-core Emerald Rapids guest whose L3 the OS reports as
300 MiB, a triad on both cores ran at 46 GB/s up to about 100 MiB and at memory's 14-25 GB/s from
256 MiB on: priced as in L3, a working set of 275-320 MiB ran 1.4-1.8 x its prediction.  So the
file holds the capacity measured (docs/node-model.md, "The last-level cache a node gets").
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, replace

from autotune.specs.hostmachine import Cache, HostInfo

KERNEL = "triad"
ROUNDS = 3               # rounds over the scan's sizes, round-robin; the median per size is kept
STEP = 2 ** (1 / 3)      # the scan's sizes: a geometric series, three per octave
FROM = 1 / 16            # from this share of the level's nominal capacity (all its instances) ...
BELOW = 2                # ... and at least this many times the capacity of the levels above it
TO = 2.0                 # to this multiple of it
MEMORY_FROM = 1.5        # the sizes from this multiple of the nominal capacity on are memory's
# the level holds a working set while its bandwidth is above the middle between its plateau and
# memory's: the middle of a fall that a shared level makes gradual (other guests' data)
MIDDLE = 0.5
DISTINCT = 1.2           # a level whose plateau is under this x memory's is not told apart from it


@dataclass(frozen=True)
class CapacityScan:
    level: int
    nominal: int                 # bytes per instance, the OS's figure
    cores: int                   # cores the scan ran on (all of the node's)
    sizes: tuple[int, ...]       # bytes in all, over all cores
    gbps: tuple[float, ...]      # the median GB/s of the rounds at each size
    plateau: float               # the level's bandwidth (the largest median at or under the nominal size)
    memory: float                # memory's (the median of the sizes from MEMORY_FROM x nominal on)
    capacity: int                # bytes per instance the file holds
    found: str                   # 'measured', 'as the OS says' (no fall under it), 'not told apart', 'not scanned'

    @property
    def measured(self) -> bool:
        return self.found == "measured"

    def describe(self) -> str:
        """The progress line and the file's provenance."""
        mib = 2.0 ** 20
        head = f"L{self.level}: the OS says {self.nominal / mib:.0f} MiB per instance"
        if self.found == "not scanned":
            return (f"{head}; not scanned (no level above it, or it holds less than {2 * BELOW} x them): "
                    f"as the OS says")
        curve = ", ".join(f"{s / mib:.0f} MiB {g:.1f}" for s, g in zip(self.sizes, self.gbps))
        tail = (f"; a {KERNEL} on all {self.cores} cores, {ROUNDS} rounds round-robin (GB/s by size in all: "
                f"{curve})")
        if self.found == "not told apart":
            return (f"{head}; its bandwidth ({self.plateau:.1f} GB/s) is not {DISTINCT} x memory's "
                    f"({self.memory:.1f}): as the OS says{tail}")
        if self.found == "as the OS says":
            return (f"{head}; the {KERNEL} stays above the middle between its {self.plateau:.1f} GB/s and "
                    f"memory's {self.memory:.1f} up to that size: as the OS says{tail}")
        return (f"{head}; the node's data stay in it up to {self.capacity / mib:.0f} MiB per instance "
                f"(the {KERNEL} falls past the middle between the level's {self.plateau:.1f} GB/s and "
                f"memory's {self.memory:.1f} there): the file holds that{tail}")

    def to_dict(self) -> dict:
        return {"level": f"L{self.level}", "nominal_bytes": self.nominal, "capacity_bytes": self.capacity,
                "found": self.found, "plateau_gbs": self.plateau, "memory_gbs": self.memory,
                "kernel": KERNEL, "cores": self.cores, "sizes_bytes": list(self.sizes), "gbps": list(self.gbps)}


def last_level(host: HostInfo) -> Cache | None:
    return host.caches[-1] if host.caches else None


def instances(host: HostInfo, cache: Cache) -> int:
    return max(1, host.cores // max(1, cache.shared_by))


def scan_sizes(host: HostInfo) -> list[int]:
    """Bytes in all (over every core) the scan measures the last level at; none where the level is
    too small beside the levels above it to tell a fall from their capacity."""
    cache = last_level(host)
    if cache is None or len(host.caches) < 2:
        return []
    total = cache.size * instances(host, cache)
    above = sum(c.size * instances(host, c) for c in host.caches[:-1])
    start = max(FROM * total, BELOW * above)
    if start > total / 2:
        return []
    count = int(math.floor(math.log(TO * total / start, STEP) + 1e-9)) + 1
    return [int(start * STEP ** i) // 4096 * 4096 for i in range(count)]


def effective(host: HostInfo, sizes: list[int], runs: list[list[float]]) -> CapacityScan:
    """The capacity per instance from the scan's runs (one list of GB/s per size): where the
    bandwidth first falls under the middle between the level's plateau and memory's, interpolated
    between the sizes around it on a log scale; never above the nominal size.  The host has a
    cache level (measure_capacity scans none where the OS gives none)."""
    cache = last_level(host)
    n = instances(host, cache)
    total = cache.size * n
    if not sizes:
        return CapacityScan(cache.level, cache.size, host.cores, (), (), 0.0, 0.0, cache.size, "not scanned")
    gbps = tuple(statistics.median(r) for r in runs)
    inside = [g for s, g in zip(sizes, gbps) if s <= total] or [gbps[0]]
    plateau = max(inside)
    memory = statistics.median([g for s, g in zip(sizes, gbps) if s >= MEMORY_FROM * total] or [gbps[-1]])
    scan = CapacityScan(cache.level, cache.size, host.cores, tuple(sizes), gbps, plateau, memory,
                        cache.size, "as the OS says")
    if plateau < DISTINCT * memory:
        return replace(scan, found="not told apart")
    middle = memory + MIDDLE * (plateau - memory)
    top = gbps.index(plateau)
    for i in range(top + 1, len(sizes)):
        if gbps[i] < middle:
            f = (gbps[i - 1] - middle) / (gbps[i - 1] - gbps[i])
            at = math.exp(math.log(sizes[i - 1]) + f * (math.log(sizes[i]) - math.log(sizes[i - 1])))
            unit = cache.ways * cache.line
            per = int(at / n) // unit * unit
            if per < cache.size:
                return replace(scan, capacity=max(per, unit), found="measured")
            break
    return scan


def with_capacity(host: HostInfo, scan: CapacityScan) -> HostInfo:
    """The host as the file describes it: its last level at the capacity measured."""
    if not host.caches or scan.capacity == host.caches[-1].size:
        return host
    return replace(host, caches=host.caches[:-1] + (replace(host.caches[-1], size=scan.capacity),))

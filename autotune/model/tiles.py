"""A pipelined step's fused level's tile priced where its data lives (block=l1, l2).  Pure.

A fused sweep outside a pipelined step is priced as the loops it runs (model.loops); a level of
the pipelined step (pipe=wavefront) keeps the one loop kerncraft analyses, with its tile on top.
Such a level (fuse=rhs-lc) evaluates the s stage derivatives of a tile of T components into a
buffer F of s rows, then the kernel that consumes them reads them back.  kerncraft analyses the
sweep with the derivatives in registers (codegen.parts.fused_parts), so the tile costs nothing
there and every tile size prices the same: block=l1 and block=l2 tied.  In the solver F is
stored and loaded, and while one tile is evaluated the rows the sweep reads and writes pass
through the caches beside it: the tile's working set is

    T * 8 B * (s + rows)        rows: the part's array rows (argument vectors, y, new ones)

F stays in the first cache level whose share of one core holds that; above it, each of F's
lines crosses every interface three times per line of work: the store's write-allocate read,
the eviction of the written line, and the read back.  Per cache line of work that is 3 s lines
read or written at each interface between L1 and the level that holds the tile,

    cycles = (2 s + s) / (B/cy of the lower level / line)      half-duplex (full: max(2 s, s))

added to the interface's transfer term (and its 3 s lines to the lines the analysis counted,
`lines`, at the same interfaces), and the terms recombined as kerncraft combines them
(model.learned.recombine).  A tile that no cache level holds is priced as if the last one did.
"""
from __future__ import annotations

from autotune.model.learned import recombine, transfer_interface
from autotune.model.streaming import stream_counts
from autotune.specs.machine import CacheLevel
from autotune.specs.parts import DOUBLE, KernelPart


def tile_rows(part: KernelPart) -> int:
    """Rows of the part's arrays (argument vectors, y, the new argument vectors)."""
    reads, writes, _ = stream_counts(part, ())
    return reads + writes


def home_level(tile: int, stages: int, rows: int, caches: tuple[CacheLevel, ...]) -> int:
    """Index of the first cache level whose share of one core holds the tile's working set (the
    last level where none does)."""
    need = tile * DOUBLE * (stages + rows)
    for i, c in enumerate(caches):
        if need <= c.bytes_per_group / c.cores_per_group:
            return i
    return len(caches) - 1


def tile_cycles(home: int, stages: int, caches: tuple[CacheLevel, ...], cacheline: int) -> dict[str, float]:
    """Cycles per cache line of work that F adds at each interface above its home level
    ("L1-L2": ...), from each lower level's upstream throughput (an interface without one adds
    nothing: the machine file does not say what a line costs there)."""
    loads, stores = 2 * stages, stages
    out = {}
    for upper, lower in zip(caches[:home], caches[1:home + 1]):
        if not lower.upstream_bytes_per_cycle:
            continue
        per_line = cacheline / lower.upstream_bytes_per_cycle
        lines = max(loads, stores) if lower.full_duplex else loads + stores
        out[f"{upper.name}-{lower.name}"] = lines * per_line
    return out


def tiled(result: dict, part: KernelPart, tile: int, stages: int, caches: tuple[CacheLevel, ...],
          cacheline: int, numa_cores: int, socket_cores: int) -> dict:
    """The fused part's ECM result with its tile's traffic at the interfaces above the level that
    holds the tile (a failed analysis, one without terms, or a tile that L1 holds: as it is)."""
    terms = result.get("terms")
    if not result.get("ok") or not terms or tile <= 0:
        return result
    extra = tile_cycles(home_level(tile, stages, tile_rows(part), caches), stages, caches, cacheline)
    if not extra:
        return result
    added = {term: value + extra.get(transfer_interface(term) or "", 0.0) for term, value in terms.items()}
    out = recombine(result, added, numa_cores, socket_cores)
    if result.get("lines"):     # F's 3 s lines per line of work at each interface above its home
        out["lines"] = {iface: n + (3 * stages if iface in extra else 0.0)
                        for iface, n in result["lines"].items()}
    return out

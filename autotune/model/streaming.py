"""Non-temporal stores priced: an ECM result without the write-allocate traffic of the streams a
part writes with them (store=nt).  Pure.

kerncraft's cache model write-allocates every store: a line written is first read from the next
level and later evicted to it, so each written stream moves two lines per cache line of work
across every interface.  A non-temporal store bypasses the caches: the line goes from the
core's write-combining buffers to memory once, and is never read.  kerncraft cannot be told so;
this layer takes it out of the analysis of the same code.  Per cache line of work, for a part
that reads R streams and writes W streams it never reads, S of them non-temporally:

    lines across a cache-to-cache interface   R + 2 W        ->  R + 2 (W - S)
    lines across the memory interface         R + 2 W        ->  R + 2 (W - S) + S

and each transfer term is scaled by its interface's ratio (its cycles are lines over that
interface's bandwidth), and so are the lines the analysis counted (`lines`), then the terms are
recombined as kerncraft combines them
(model.learned.recombine).  The memory interface keeps the S written lines: the floor (bound_s)
counts them, and no store can avoid them.  The read that follows such a store finds nothing in
the caches either: model.reuse prices it from memory.  Only where the step would read those
vectors back after the last-level cache had evicted them anyway (specs.step: the streamed
vectors; a scenario decides it) does this pay.

Whether non-temporal stores move a line as fast as write-allocated ones differs by machine (on
some, streamed stores are no faster at all).  Where the machine file measured the non-temporal
form of the part's bandwidth kernel in memory (its `streaming stores`: copy_nt, triad_nt), the
memory term is also scaled by the write-allocated form's rate over the non-temporal form's, both
as bytes moved per second (kerncraft's bandwidth counts the write-allocate read; the
non-temporal kernel moves the bytes it names), each the most over the thread counts kerncraft
takes its bandwidth from.  Where it did not, the lines move at the write-allocated rate, as
assumed; the result records which (`nt_memory`).  Either way the result names its memory
transfer "<kernel>_nt", so that a machine's runs (calibrate --from-runs) fit that transfer's
factor apart.
"""
from __future__ import annotations

from autotune.model.learned import recombine, transfer_interface
from autotune.specs.machine import NT_SUFFIX, StreamingStores
from autotune.specs.parts import KernelPart

MEMORY = "MEM"   # the level of main memory in a machine file (kerncraft's name)


def stream_counts(part: KernelPart, streams: tuple[str, ...]) -> tuple[int, int, int]:
    """(R, W, S) of a part: rows read, rows only written (part.stores), rows written non-temporally."""
    total = written = nt = 0
    for a, count in part.arrays:
        total += count
        written += count if a in part.stores else 0
        nt += count if a in streams else 0
    return total - written, written, nt


def line_ratios(reads: int, writes: int, streamed: int) -> tuple[float, float]:
    """(cache-to-cache, memory) ratio of the lines moved with S of the W written streams stored
    non-temporally to those moved with all of them write-allocated."""
    before = reads + 2 * writes
    if before == 0:
        return 1.0, 1.0
    inner = reads + 2 * (writes - streamed)
    return inner / before, (inner + streamed) / before


def memory_rate(stores: tuple[StreamingStores, ...], kernel: str, cores: int) -> float | None:
    """The time a byte takes to memory with non-temporal stores over its time with write-allocated
    ones, for a part whose memory transfer kerncraft prices by `kernel`: the write-allocated form's
    bytes moved per second over the non-temporal form's, each the most of its first `cores` thread
    counts, as kerncraft takes a bandwidth (None: the machine file measured no non-temporal form
    of that kernel in memory)."""
    for s in stores:
        if s.level == MEMORY and s.kernel == kernel and s.nt_bps and s.allocated_bps:
            n = max(1, cores)
            return max(s.allocated_bps[:n]) / max(s.nt_bps[:n])
    return None


def streamed(result: dict, part: KernelPart, streams: tuple[str, ...], numa_cores: int, socket_cores: int,
             stores: tuple[StreamingStores, ...] = ()) -> dict:
    """The part's ECM result with its streams' write-allocate traffic removed, its memory transfer
    at the measured rate of non-temporal stores where `stores` (the machine's) has it (a failed
    analysis, or one without terms, as it is)."""
    if not result.get("ok") or not result.get("terms") or not streams:
        return result
    inner, memory = line_ratios(*stream_counts(part, streams))
    return nt_priced(result, lambda iface: memory if iface.endswith("-MEM") else inner, stores, numa_cores,
                     socket_cores)


def nt_priced(result: dict, ratio, stores: tuple[StreamingStores, ...], numa_cores: int,
              socket_cores: int) -> dict:
    """A result (with terms) of code that stores rows non-temporally, rescaled by ratio (its lines
    as it runs over those the analysis counted, per interface), its memory transfer also by
    memory_rate where the machine measured one; that transfer named "<kernel>_nt" and `nt_memory`
    saying which rate it moves at (model.loops prices a fused sweep's streaming copy by it too)."""
    kernel = str(result.get("memory_bandwidth_kernel") or "")
    rate = memory_rate(stores, kernel, numa_cores) if kernel else None
    out = rescaled(result, ratio, numa_cores, socket_cores, rate or 1.0)
    if kernel:      # a memory transfer of its own kind: its factor is learned apart
        out["memory_bandwidth_kernel"] = f"{kernel}{NT_SUFFIX}"
        out["nt_memory"] = {"rate": "measured" if rate else "assumed", "factor": rate or 1.0}
    return out


def rescaled(result: dict, ratio, numa_cores: int, socket_cores: int, memory: float = 1.0) -> dict:
    """A result (with terms) with each transfer term and the lines counted at its interface scaled
    by ratio(interface), the memory transfer also by `memory`, recombined as kerncraft combines
    them (model.learned.recombine)."""
    scaled = {}
    for term, value in result["terms"].items():
        where = transfer_interface(term)
        scaled[term] = value if where is None else \
            value * ratio(where) * (memory if where.endswith("-MEM") else 1.0)
    out = recombine(result, scaled, numa_cores, socket_cores)
    if result.get("lines"):     # the lines each interface moves, as the terms are scaled
        out["lines"] = {iface: n * ratio(iface) for iface, n in result["lines"].items()}
    return out

"""The reference stencils of `calibrate --node` (pure): which five-point stencils a host measures,
at what row length and in which levels, and the machine file's `reference stencils` section.

The streaming kernels (load, copy, update, triad, daxpy) move each cache line through every level
once: their traffic is the same at every interface.  Under any composition rule a fitted rate per
level then prices them alike (on a 2-core Emerald Rapids guest the four rules came within 10 % of
each other on every streaming reference, and which one won changed between calibrations), while
the solver's kernels, whose rows are reused from one level and not from the next, moved by 1.4 x
with the rule.  A stencil whose three rows exceed one level and fit the next moves more lines over
the upper interface than over the lower: five against three per line of work.  Measured below
the level that holds its rows, it shows whether the upper transfer adds to the lower one or hides
behind it (docs/node-model.md, "How transfers compose: the reference kernels").
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from autotune.specs.hostmachine import HostInfo, thread_share
from autotune.specs.units import quantity

KERNEL = "stencil"     # the streaming benchmark's kernel (autotune/tools/stream.c)
ARRAYS = 2             # a and b, one stream each
BYTES = 16             # bytes named per iteration: a read once, b written (as copy)
ELEMENT = 8
LINE_ELEMENTS = 8      # rows a whole number of 64-byte lines
# three rows of MISS x a level's size per core: the layer condition misses it with room to spare ...
MISS = 2.0
# ... and hold in the next level where three rows take at most HOLD of its share per core
HOLD = 0.5
MIN_ROWS = 4           # rows of the arrays at a measured working set: one interior row and more
SECTION = "reference stencils"
NOTE = ("a five-point stencil over rows of `rows` doubles, three of which exceed the level named "
        "(stencil_l<k>: L<k>) and fit the next; measured below that level, the upper quartile of the "
        "level's rounds at 1, 2, ... threads, at the working sets of benchmarks.measurements: the reference kernels "
        "whose traffic differs between levels (calibrate --node fits the composition rule to them)")


@dataclass(frozen=True)
class Stencil:
    name: str                   # stencil_l<k>
    misses: str                 # the level whose layer condition it breaks (L<k>)
    row: int                    # doubles per row
    levels: tuple[str, ...]     # where it is measured: the levels below the one that holds its rows


def _per_core(size: int, shared_by: int) -> float:
    return size / max(shared_by, 1)


def stencils(host: HostInfo, sizes: dict[str, int]) -> tuple[Stencil, ...]:
    """The stencils the host measures: one per cache level that has a cache below it, with rows
    three of which exceed MISS x its size per core and take at most HOLD of the next level's
    share; measured in the levels below the next one (and main memory) where the arrays have
    MIN_ROWS rows at the working set per thread on every core (sizes: hostprobe.working_sets)."""
    caches = sorted(host.caches, key=lambda c: c.level)
    out = []
    for upper, lower in zip(caches, caches[1:]):
        row = math.ceil(MISS * _per_core(upper.size, upper.shared_by) / (3 * ELEMENT) / LINE_ELEMENTS) * LINE_ELEMENTS
        if 3 * row * ELEMENT > HOLD * _per_core(lower.size, lower.shared_by):
            continue
        below = [f"L{c.level}" for c in caches if c.level > lower.level] + ["MEM"]
        levels = tuple(lv for lv in below if lv in sizes
                       and thread_share(host, lv, sizes[lv], host.cores) // (BYTES * row) >= MIN_ROWS)
        if levels:
            out.append(Stencil(f"{KERNEL}_l{upper.level}", f"L{upper.level}", row, levels))
    return tuple(out)


def rows_of(stencil_row: int, working_set: int) -> int:
    """Rows of the benchmark's arrays at a working set per thread (autotune/tools/stream.c)."""
    return max(working_set // (ARRAYS * ELEMENT) // stencil_row, 3)


def section(bandwidths: dict, found: tuple[Stencil, ...]) -> dict:
    """The file's `reference stencils` section: the row of each stencil, and per level the GB/s
    at 1, 2, ... threads (bandwidths: hostprobe.measure's, {level: {kernel: [(threads, ws, GB/s,
    ...)]}}); {} where none was measured."""
    out: dict = {}
    for level, kernels in bandwidths.items():
        names = [s.name for s in found if s.name in kernels]
        if not names:
            continue
        rows = kernels[names[0]]
        out[level] = {"threads": [r[0] for r in rows], "size per thread": [f"{r[1] / 1e3:.2f} kB" for r in rows],
                      **{k: [f"{r[2]:.2f} GB/s" for r in kernels[k]] for k in names}}
    if not out:
        return {}
    return {"note": NOTE, "rows": {s.name: s.row for s in found}, **out}


def with_section(data: dict, bandwidths: dict, found: tuple[Stencil, ...]) -> dict:
    """The machine file `data` with its `reference stencils` section (section()) after the
    benchmarks' sections, where one was measured."""
    made = section(bandwidths, found)
    if not made:
        return data
    out = {}
    for key, value in data.items():
        if key == "in-core measured":
            out[SECTION] = made
        out[key] = value
    out.setdefault(SECTION, made)
    return out


def rows_in(data: dict) -> dict[str, int]:
    """Each stencil's row length in a machine file ({} where it has no `reference stencils`)."""
    return {str(k): int(v) for k, v in (((data.get(SECTION) or {}).get("rows")) or {}).items()}


def measured_in(data: dict) -> dict[str, dict]:
    """The stencils' runs in a machine file: {level: {"threads": [...], "size per thread": [...],
    kernel: [GB/s text, ...]}}."""
    section_ = data.get(SECTION) or {}
    return {str(lv): run for lv, run in section_.items() if lv not in ("note", "rows") and isinstance(run, dict)}


def with_runs(data: dict, out: dict[str, dict]) -> dict[str, dict]:
    """The streaming kernels' runs `out` ({level: {"working_set", "gbs", "threads"}}, as
    model.refkernels reads them) with the stencils' GB/s where they ran at the same thread count
    and working set (the same rounds)."""
    for level, run in measured_in(data).items():
        got = out.get(level)
        threads = [int(t) for t in run.get("threads") or []]
        if got is None or got["threads"] not in threads:
            continue
        i = threads.index(got["threads"])
        try:
            if int(quantity(run["size per thread"][i], "size")) != got["working_set"]:
                continue
        except (KeyError, IndexError, ValueError, TypeError):
            continue
        for kernel, values in run.items():
            if kernel in ("threads", "size per thread"):
                continue
            try:
                got["gbs"][str(kernel)] = quantity(values[i], "bandwidth") / 1e9
            except (ValueError, IndexError, TypeError):
                continue
    return out

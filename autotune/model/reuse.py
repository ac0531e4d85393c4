"""Where a kernel part's data comes from, decided by the whole step: a reuse-distance view of the
step's sequence of sweeps.  Pure.

One time step is a fixed sequence of sweeps (StepForm.sweeps of specs.step: each kernel group
split into the parts the variant runs, with the vectors each reads and writes).  Every sweep touches whole vectors of the node's
n_p components: y, the argument vectors Y_l, the stage derivatives F_l, dy, and the buffers B_l
(By for y) that buf=pack copies the argument vectors into.  The step repeats, so the first sweep
of a step follows the last one of the step before (the steady state).

For a vector a that sweep t touches, the bytes touched since a's previous touch (sweep t') are

    D = sum over the other vectors b:   1 if a sweep strictly between t' and t touched b,
                                        else 1/2 if t' or t touched b (1 if both)

in vectors: a vector streamed beside a in t' was swept past a[j] after a[j] was touched (on
average half of it), and in t up to a[j] (the other half).  A vector written with non-temporal
stores (store=nt: Sweep.streams) bypasses the caches: that write, and the next touch after it,
are at distance infinity (served by memory).  A level that holds R bytes of the
node's data (its capacity at the busy cores; a victim cache adds the levels above it) then
still holds the share

    h(R) = clamp((R - D V) / V, 0, 1)             V: bytes of one vector on the node

of a: what is left of it after the D V bytes touched since (a linear ramp, not LRU's cliff:
replacement in real caches keeps part of a stream that does not fit, and the sizes that users
sweep cross these borders gradually).  The share a level L serves is h(R_L) - h(R_{L-1}), the
rest comes from memory.  A part's level shares are the mean over the vectors it touches in all
its sweeps of the step.

A pipelined step (pipe=wavefront, specs.window) touches some vectors only in its window: rings
of a few tiles per thread, and y again a few lags after its first read (Sweep.window).  Such a
touch is at distance -W, where W is the number of distinct window vectors of the step: the
window holds them all, so between two touches of one row the others pass once.  Its share is
the same ramp with V the bytes of one window row on the node (all busy cores' rings):

    h(R) = clamp((R - W V_w) / V_w, 0, 1)

Window touches leave the vectors' own distances alone: they never sweep the node's vectors.
"""
from __future__ import annotations

import math
from collections import Counter
from functools import lru_cache

from autotune.arith import ordered_sum
from autotune.model.ops import Ops
from autotune.specs.machine import Machine
from autotune.specs.step import Sweep


MIN_SHARE = 0.02    # a level serving less than this of a part's data is left out (one analysis less)


def reuse_distances(sweeps: list[Sweep]) -> list[tuple[float, ...]]:
    """Per sweep, the distance D (in vectors) of each vector it touches (module docstring).

    For vector a in sweep t, last touched k sweeps before (k = n: t itself, a step ago), the
    vectors between are those the k - 1 sweeps in between touch; each other vector of those two
    sweeps counts 1/2 per sweep.  Sets of vectors are bit masks."""
    n = len(sweeps)
    own = [tuple(v for v in sw.vectors if v not in sw.window) for sw in sweeps]
    window = -float(len({v for sw in sweeps for v in sw.window}))
    bit = {v: 1 << i for i, v in enumerate(dict.fromkeys(v for vs in own for v in vs))}
    masks = [0] * n
    for t, vs in enumerate(own):
        for v in vs:
            masks[t] |= bit[v]
    last, streamed = {}, set()
    for p, sw in enumerate(sweeps):       # the step before: the last touch of every vector
        for v in own[p]:
            last[v] = p - n
        streamed = (streamed - set(sw.vectors)) | set(sw.streams)
    out = []
    for t, sw in enumerate(sweeps):
        here = masks[t]
        between = [0]      # between[k - 1]: what the sweeps 1 .. k - 1 back touched
        dists = []
        for a in sw.vectors:
            if a in sw.window:                     # the pipelined step's window (module docstring)
                dists.append(window)
                continue
            if a in sw.streams or a in streamed:   # a non-temporal store, or the read after one
                dists.append(math.inf)             # bypasses every cache: memory
                continue
            k = t - last[a]
            while len(between) < k:
                between.append(between[-1] | masks[(t - len(between)) % n])
            inside = between[k - 1]
            outside = ~inside & ~bit[a]
            halves = (masks[(t - k) % n] & outside).bit_count() + (here & outside).bit_count()
            dists.append(inside.bit_count() + 0.5 * halves)
        out.append(tuple(dists))
        for v in own[t]:
            last[v] = t
        streamed = (streamed - set(sw.vectors)) | set(sw.streams)
    return out


def windowed(distances: tuple[tuple[float, int], ...]) -> bool:
    """Whether (distance, count) pairs include a touch of a pipelined step's window (negative)."""
    return any(d < 0 for d, _ in distances)


def next_read_distances(sweeps: list[Sweep]) -> list[float]:
    """For every vector a sweep writes with non-temporal stores (Sweep.streams), the distance D of
    its next touch had it been written through the caches: whether any cache would still hold it
    then (store=nt pays only where none would)."""
    plain = [Sweep(sw.group, sw.part, sw.reads, sw.writes) for sw in sweeps]
    dists = reuse_distances(plain)
    n, out = len(plain), []
    for t, sw in enumerate(sweeps):
        for v in sw.streams:
            u = next((t + k) % n for k in range(1, n + 1) if v in plain[(t + k) % n].vectors)
            out.append(dists[u][plain[u].vectors.index(v)])
    return out


def part_distances(sweeps: list[Sweep]) -> dict[str, tuple[tuple[float, int], ...]]:
    """Per method part name, and per RHS group ("RHS", "RHSALL"), the distances of every vector it
    touches over the step as (distance, how many) pairs, sorted: a canonical key for the shares
    below, and short (a step has few distinct distances)."""
    return dict(_part_distances(tuple(sweeps)))


@lru_cache(maxsize=4096)     # one entry per step form and method: the pools of every IVP share them
def _part_distances(sweeps: tuple[Sweep, ...]) -> tuple[tuple[str, tuple[tuple[float, int], ...]], ...]:
    out: dict[str, Counter] = {}
    for sw, dists in zip(sweeps, reuse_distances(list(sweeps))):
        out.setdefault(sw.part or sw.group, Counter()).update(dists)
    return tuple((k, tuple(sorted(v.items()))) for k, v in out.items())


def level_reach(machine: Machine, cores: int) -> tuple[float, ...]:
    """Bytes of the node's data each cache level holds with `cores` busy cores (data split over
    them): private caches of every busy core, the shared caches they use; a victim cache also
    holds what the levels above it hold (they exclude each other)."""
    return _reach(machine.caches, cores)


@lru_cache(maxsize=64)
def _reach(caches: tuple, cores: int) -> tuple[float, ...]:
    out: list[float] = []
    for c in caches:
        groups = -(-cores // c.cores_per_group)
        own = float(c.bytes_per_group * (cores if c.cores_per_group == 1 else groups))
        prev = out[-1] if out else 0.0
        out.append(own + prev if c.victim else max(own, prev))
    return tuple(out)


def level_shares_of(ops: Ops, distances: tuple[tuple[float, int], ...], vector_bytes,
                    reach: tuple[float, ...], steps: dict | None = None, window_bytes=None) -> list:
    """Share of the data served by each cache level and memory (len(reach) + 1 values, summing to
    1), for the vectors at these (distance, count) pairs, with vector_bytes a number or an array
    over scenarios (ops: model.ops); shares below MIN_SHARE go to their neighbour level.
    window_bytes: one window row on the node, for the window's touches (negative distances).
    steps: a dict that keeps each distance's per-level increments for the next call with the same
    vector_bytes, window_bytes and reach."""
    if steps is None:
        steps = {}
    shares = [0.0] * (len(reach) + 1)
    for d, count in distances:
        step = steps.get(d)
        if step is None:
            step, above = [], 0.0
            size = vector_bytes if d >= 0 else window_bytes
            for r in reach:
                held = ops.minimum(1.0, ops.maximum(0.0, (r - abs(d) * size) / size))
                step.append(held - above)
                above = held
            step = steps[d] = step + [1.0 - above]
        for i, x in enumerate(step):
            shares[i] = shares[i] + (x if count == 1 else count * x)
    total = float(ordered_sum(c for _, c in distances)) or 1.0
    shares = [x / total for x in shares]
    last = len(shares)
    for i in range(last):     # fold tiny shares into the next level out (or the last kept one)
        tiny = (shares[i] > 0.0) & (shares[i] < MIN_SHARE)
        if not ops.any(tiny):
            continue
        out = -1
        for k in range(last - 1, i, -1):
            out = ops.where(shares[k] >= MIN_SHARE, k, out)
        inner = -1
        for k in range(i):
            inner = ops.where(shares[k] >= MIN_SHARE, k, inner)
        to = ops.where(out >= 0, out, inner)
        for k in range(last):
            if k != i:
                shares[k] = ops.where(tiny & (to == k), shares[k] + shares[i], shares[k])
        shares[i] = ops.where(tiny, 0.0, shares[i])
    return shares

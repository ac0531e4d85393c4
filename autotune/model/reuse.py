"""Where a kernel part's data comes from, decided by the whole step: a reuse-distance view of the
step's sequence of sweeps.  Pure.

One time step is a fixed sequence of sweeps (the schedule of model.schedule, with each kernel
group split into the parts the variant runs).  Every sweep touches whole vectors of the node's
n_p components: y, the argument vectors Y_l, the stage derivatives F_l, dy, and the buffers B_l
(By for y) that buf=pack copies the argument vectors into.  The step repeats, so the first sweep
of a step follows the last one of the step before (the steady state).

For a vector a that sweep t touches, the bytes touched since a's previous touch (sweep t') are

    D = sum over the other vectors b:   1 if a sweep strictly between t' and t touched b,
                                        else 1/2 if t' or t touched b (1 if both)

in vectors: a vector streamed beside a in t' was swept past a[j] after a[j] was touched (on
average half of it), and in t up to a[j] (the other half).  A level that holds R bytes of the
node's data (its capacity at the busy cores; a victim cache adds the levels above it) then
still holds the share

    h(R) = clamp((R - D V) / V, 0, 1)             V: bytes of one vector on the node

of a: what is left of it after the D V bytes touched since (a linear ramp, not LRU's cliff:
replacement in real caches keeps part of a stream that does not fit, and the sizes that users
sweep cross these borders gradually).  The share a level L serves is h(R_L) - h(R_{L-1}), the
rest comes from memory.  A part's level shares are the mean over the vectors it touches in all
its sweeps of the step.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

from autotune.model.schedule import step_events
from autotune.specs.machine import Machine
from autotune.specs.method import Method
from autotune.specs.parts import KernelPart

_ROW = re.compile(r"\b([A-Za-z_]\w*)\[(\w+)\]\[j\]")
MIN_SHARE = 0.02    # a level serving less than this of a part's data is left out (one analysis less)


@dataclass(frozen=True)
class Sweep:
    group: str                   # kernel group, or the RHS evaluation ("RHS", "RHSALL")
    part: str | None             # the method part it runs (None: all RHS parts of the group)
    vectors: tuple[str, ...]     # the vectors it touches


def touched_rows(part: KernelPart) -> dict[str, tuple[int, ...]]:
    """Rows of each array that the part's body touches: a literal row index is that row, a loop
    index the loop's range; a one-row array its row 0."""
    ranges = {lp.var: range(int(lp.start), int(lp.stop), lp.step) for lp in part.loops
              if lp.start.isdigit() and lp.stop.isdigit()}
    rows: dict[str, set] = {name: {0} for name, count in part.arrays if count == 1}
    for name, index in _ROW.findall(part.body):
        got = rows.setdefault(name, set())
        got.update([int(index)] if index.isdigit() else ranges.get(index, range(0)))
    return {name: tuple(sorted(r)) for name, r in rows.items()}


def _method_sweep(part: KernelPart) -> Sweep:
    """A method part's sweep: its arrays as the step's vectors (Y row l -> Y_l+1, F row i -> F_i+1)."""
    vectors = []
    for name, rows in touched_rows(part).items():
        vectors += [name] if name in ("y", "dy") else [f"{name}{r + 1}" for r in rows]
    return Sweep(part.kernel, part.name, tuple(vectors))


def step_sweeps(method: Method, parts: tuple[KernelPart, ...], pred: str, au: str, buf: str,
                rhs: str, fuse: str = "none") -> list[Sweep]:
    """The sweeps of one time step in order.  parts: the variant's method parts (model.parts).
    fuse=rhs-lc with buf=ghost alternates two sets of argument vectors (Y_l, then Z_l): a fused
    sweep reads one and writes the other."""
    s = method.stages
    by_group: dict[str, list[KernelPart]] = {}
    for p in parts:
        by_group.setdefault(p.kernel, []).append(p)
    sets = ["Y", "Z"] if fuse != "none" and buf == "ghost" else ["Y"]
    cur = 0
    vec = lambda l, k=None: f"{sets[cur if k is None else k]}{l}"   # noqa: E731 - argument vector l
    arg = (lambda l: f"B{l}") if buf == "pack" else vec
    ybuf = "By" if buf == "pack" else "y"
    every = range(1, s + 1)
    out: list[Sweep] = []
    for e in step_events(method, pred, au, rhs, fuse):
        if e.kind == "comm" and buf == "pack":
            sources = ["y"] if e.action == "communicate_y" else [vec(l) for l in every]
            out += [Sweep("PACK", "comm.pack", (v, ybuf if v == "y" else arg(int(v[1:])))) for v in sources]
        elif e.kind != "kernel":
            continue
        elif e.what == "RHSLCD":
            out.append(Sweep(e.what, None, tuple(dict.fromkeys((ybuf, "y") + tuple(vec(l) for l in every)))))
        elif e.what == "RHSLC":
            nxt = (cur + 1) % len(sets)
            out.append(Sweep(e.what, None, tuple(arg(l) for l in every) + ("y",)
                             + tuple(vec(l, nxt) for l in every if vec(l, nxt) not in (arg(l),))))
            cur = nxt
        elif e.what == "RHSAU":
            out.append(Sweep(e.what, None, tuple(arg(l) for l in every) + ("y",)))
        elif e.what == "RHS" and e.action == "rhs_first":
            out.append(Sweep("RHS", None, (ybuf, "F1")))
        elif e.what == "RHS":
            out += [Sweep("RHS", None, (arg(l), f"F{l}")) for l in every]
        elif e.what == "RHSALL":
            out.append(Sweep("RHSALL", None, tuple(arg(l) for l in every) + tuple(f"F{l}" for l in every)))
        elif e.what == "COPY":
            out += [Sweep("COPY", p.name, ("F1", f"F{l}")) for l in range(2, s + 1) for p in by_group["COPY"]]
        else:   # LC, LCD, APPROX, UPDATE: the group's parts in order
            out += [_method_sweep(p) for p in by_group.get(e.what, [])]
    return out


def reuse_distances(sweeps: list[Sweep]) -> list[tuple[float, ...]]:
    """Per sweep, the distance D (in vectors) of each vector it touches (module docstring)."""
    n = len(sweeps)
    sets = [set(sw.vectors) for sw in sweeps]
    out = []
    for t in range(n):
        dists = []
        for a in sweeps[t].vectors:
            prev = next(k for k in range(1, n + 1) if a in sets[(t - k) % n])   # k = n: itself, a step ago
            between: set = set().union(*(sets[(t - k) % n] for k in range(1, prev)))
            edge = (sets[(t - prev) % n], sets[t])
            d = 0.0
            for b in set().union(between, *edge) - {a}:
                d += 1.0 if b in between else 0.5 * ((b in edge[0]) + (b in edge[1]))
            dists.append(d)
        out.append(tuple(dists))
    return out


def part_distances(sweeps: list[Sweep]) -> dict[str, tuple[tuple[float, int], ...]]:
    """Per method part name, and per RHS group ("RHS", "RHSALL"), the distances of every vector it
    touches over the step as (distance, how many) pairs, sorted: a canonical key for the shares
    below, and short (a step has few distinct distances)."""
    out: dict[str, Counter] = {}
    for sw, dists in zip(sweeps, reuse_distances(sweeps)):
        out.setdefault(sw.part or sw.group, Counter()).update(dists)
    return {k: tuple(sorted(v.items())) for k, v in out.items()}


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


def _held(reach: float, distance: float, vector_bytes: float) -> float:
    return min(1.0, max(0.0, (reach - distance * vector_bytes) / vector_bytes))


@lru_cache(maxsize=65536)
def level_shares(distances: tuple[tuple[float, int], ...], vector_bytes: float,
                 reach: tuple[float, ...]) -> tuple[float, ...]:
    """Share of the data served by each cache level and memory (len(reach) + 1 values, summing to
    1), for the vectors at these (distance, count) pairs; shares below MIN_SHARE go to their
    neighbour level."""
    shares = [0.0] * (len(reach) + 1)
    for d, count in distances:
        above = 0.0
        for i, r in enumerate(reach):
            held = _held(r, d, vector_bytes)
            shares[i] += count * (held - above)
            above = held
        shares[-1] += count * (1.0 - above)
    total = float(sum(c for _, c in distances)) or 1.0
    shares = [x / total for x in shares]
    for i in range(len(shares)):   # fold tiny shares into the next level out (or the last kept one)
        if 0.0 < shares[i] < MIN_SHARE:
            kept = [k for k in range(i + 1, len(shares)) if shares[k] >= MIN_SHARE]
            j = kept[0] if kept else max(k for k in range(i) if shares[k] >= MIN_SHARE)
            shares[j] += shares[i]
            shares[i] = 0.0
    return tuple(shares)

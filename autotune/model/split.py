"""The split of a mixed allocation: each rank's block of components chosen so that the slowest
rank's predicted step is as short as it can be (docs/method.md "Mixed allocations").  Pure.

Every rank waits for the slowest at the step's exchange, so a split's step time is the largest
of its ranks' times, each rank priced by the full node model of its kind at its block.  The
times are given on a grid of blocks per kind (whole cache lines; every block priced in the cache
regime it lands in), and the split solved exactly on that grid: the smallest time t at which
the kinds' ranks, each taking the largest grid block that runs within t, hold all n components.
That is a search over the priced times, not a proportional guess; a time that falls as a block
moves into a faster cache level is found where it is.
"""
from __future__ import annotations

import math

import numpy as np

from autotune.arith import ordered_sum

RESOLUTION = 48        # grid blocks per even share: the split is within about 1/RESOLUTION of the best
REACH = 4              # a kind's grid runs to REACH even shares a rank (or all of n over its ranks)


def grid(n: int, ranks: list[int], granule: int, resolution: int = RESOLUTION) -> tuple[int, list[list[int]]]:
    """The step q of the grid (whole granules) and, per kind, the blocks priced: multiples of q
    up to REACH even shares or n over the kind's ranks, with the even split's block among them."""
    total = ordered_sum(ranks)
    even = math.ceil(n / total)
    q = granule * max(1, round(even / (resolution * granule)))
    out = []
    for r in ranks:
        top = min(math.ceil(n / r), REACH * even)
        blocks = set(range(q, top + q, q)) | {even}
        out.append(sorted(b for b in blocks if b <= max(top, even) or b == even))
    return q, out


def _capacity(blocks: np.ndarray, times: np.ndarray, t: float) -> int:
    """The largest block whose time is within t (0: none)."""
    ok = times <= t
    return int(blocks[ok].max()) if ok.any() else 0


def solve(blocks: list[list[int]], times: list[np.ndarray], ranks: list[int], n: int) -> list[list[int] | None]:
    """Per variant (a row of each kind's times, one column per grid block), the block of each
    kind at the smallest time t for which sum(ranks_k * block_k) >= n, each block the largest
    within t; None where a kind's times are all failed (NaN)."""
    arrays = [np.asarray(b, dtype=float) for b in blocks]
    out: list[list[int] | None] = []
    for v in range(times[0].shape[0]):
        rows = [t[v] for t in times]
        if any(not np.isfinite(row).any() for row in rows):
            out.append(None)
            continue
        candidates = np.unique(np.concatenate([row[np.isfinite(row)] for row in rows]))
        lo, hi = 0, len(candidates) - 1

        def holds(t: float) -> bool:
            return ordered_sum(r * _capacity(b, row, t) for r, b, row in zip(ranks, arrays, rows)) >= n

        if not holds(candidates[hi]):
            out.append(None)
            continue
        while lo < hi:                  # the first candidate time that holds n (holding grows with t)
            mid = (lo + hi) // 2
            if holds(candidates[mid]):
                hi = mid
            else:
                lo = mid + 1
        out.append([_capacity(b, row, candidates[lo]) for b, row in zip(arrays, rows)])
    return out


def counts(blocks: list[int], ranks: list[int], n: int, order: list[int], granule: int) -> tuple[int, ...]:
    """Per rank (kinds in order, each kind's ranks together), the components it holds: each kind's
    block, less the surplus over n, taken from the kinds in `order` first (the slowest first) in
    whole granules spread evenly over a kind's ranks (what is left of a granule from its first),
    never below one granule (or one component)."""
    per = [[b] * r for b, r in zip(blocks, ranks)]
    surplus = ordered_sum(b * r for b, r in zip(blocks, ranks)) - n
    for k in order:
        if surplus <= 0:
            break
        floor = granule if blocks[k] > granule else 1
        take = min(surplus, (blocks[k] - floor) * ranks[k])
        whole, rest = divmod(take, granule)
        cuts = [granule * (whole // ranks[k] + (1 if i < whole % ranks[k] else 0)) for i in range(ranks[k])]
        for i in range(ranks[k]):
            extra = min(rest, blocks[k] - floor - cuts[i])
            cuts[i] += extra
            rest -= extra
        per[k] = [b - c for b, c in zip(per[k], cuts)]
        surplus -= take - rest
    if surplus:
        raise ValueError(f"cannot take {surplus} components off blocks {blocks} of ranks {ranks}")
    return tuple(c for kind in per for c in kind)

"""The window of a pipelined step (pipe=wavefront): what its levels hand on lives in rings of a
few tiles, never in memory.  The solver (variants/solver.c.j2: wavefront) sizes them the same
way; the model prices the rings where they fit and the neighbours' share each thread computes
again.  Pure.

The step's m + 1 levels (the predictor with the first LC, the m - 1 correctors with the next
LC, the last RHS with APPROX+UPDATE) sweep a thread's region together, each `lag` components
behind the one before (the access distance d in whole cache lines), one tile of T components
each per position.  Level k reads what level k - 1 wrote from d before its tile to d after it,
so a ring row holds the tile being written, the lag and the window read behind it, and room for
the zeros beyond the system's ends:

    ring row = T + 4 lag + 8 s, rounded up to whole pages    (m rings of s rows per thread)

(the 8 s: each row starts 8 doubles further into its mapping than the one before, so that the
rows do not share cache sets).

A thread also computes the part of each level that its neighbours' regions need: level k
reaches (m - k) d beyond its region on either side, so that no thread waits for another inside
the step.
"""
from __future__ import annotations

from autotune.specs.parts import DOUBLE

PAGE_DOUBLES = 512      # 4 KiB pages: a ring row is mapped twice in a row, so whole pages


def lag(distance: int) -> int:
    """Components each level runs behind the one before: d in whole cache lines of 8 doubles."""
    return -(-max(1, distance) // 8) * 8


def ring_components(tile: int, distance: int, stages: int) -> int:
    """Components of one ring row (the solver's RL)."""
    need = tile + 4 * lag(distance) + 8 * stages
    return -(-need // PAGE_DOUBLES) * PAGE_DOUBLES


def window_bytes(tile: int, distance: int, stages: int, iterations: int) -> int:
    """Bytes one thread's step keeps live: its m rings of s rows, and the span of y the levels
    read between the first and the last (m lags and a tile)."""
    rings = iterations * stages * ring_components(tile, distance, stages)
    return DOUBLE * (rings + iterations * lag(distance) + tile)


def ghost_distances(iterations: int) -> int:
    """y's ghost on either side of a rank's block, in access distances: m + 1 (the predictor's
    level reads d beyond the first level's reach of m d)."""
    return iterations + 1


def extra_share(distance: int, extends: float, regions: int, n: int) -> float:
    """The share of a level's n components computed again for the neighbours, where the system is
    split into `regions` (threads of all ranks) and the level reaches `extends` access distances
    beyond each side of a region that has a neighbour there (2 regions - 2 sides)."""
    return extends * distance * max(0, 2 * regions - 2) / n if n > 0 else 0.0


def in_registers(ivp) -> bool:
    """Whether a level's stage derivatives stay in registers: one RHS part over every component
    (no coupled block), so that a level is one loop that evaluates f of the s argument vectors
    at a component and combines them at once (no tile of F to store and read back)."""
    return len(ivp.rhs) == 1 and ivp.rhs[0].step == 1 and "w" not in ivp.rhs[0].arrays


def reach(ivp, n: int) -> int:
    """How far a component's RHS reads at system size n: the access distance, and where a part
    reads the coupled block w (N components away), that block's halo beyond it (string-row's
    v_j reads u_(j-1), N + 1 away)."""
    coupled = any("w" in p.arrays for p in ivp.rhs)
    return ivp.access_distance(n) + (ivp.halo(n) if coupled else 0)

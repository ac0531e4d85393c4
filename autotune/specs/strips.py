"""The pipelined step over strips of a grid IVP (traversal=strips): its geometry.  Pure.

In row order the levels of the pipelined step (specs.window) run a lag of the access distance d
behind one another, and heat2d's d is a whole row: the window grows with N and leaves the cache.
Over strips the step visits the grid's inner dimensions (all but the outermost) in tiles of W
components each, and sweeps each strip along the outermost dimension, plane by plane, every
level one plane's reach behind the one before.  A strip's levels keep their argument vectors in
rings of a few of the strip's planes, so the window is a few planes of W (and W x W in 3D)
components whatever N is.

Level k of a strip computes (m - k) reach beyond the strip's own columns on either side, what
level k + 1 reads there (the strip's edge work, done again by the strip beside it): the strip's
local planes are L_i = W_i + 2 m r_i wide, and an offset of the flat vector (d_0, d_1, ...) per
dimension (specs.grid.split) is the local offset d_0 P + d_1 l_1 + ... with the local strides
l_i of the L_i and the local plane P.  Every component is computed from the same values in the
same order as in row order: the numbers are the same to the last bit.

A sweep that visits each component once (the fused and separate sweeps: no levels, m = 0 below)
takes strips without edge work, whole rows wide (strips_for): it runs along the innermost
dimension, strip by strip, plane by plane, and reads the flat vector in place.  Its layers are a
few of a strip's planes of each argument vector instead of the grid's (docs/method.md "Strips of
a sweep").
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from math import prod

from autotune.specs.grid import SUBSCRIPT, split, subscript_offset, uses_position
from autotune.specs.parts import DOUBLE
from autotune.specs.window import PAGE_DOUBLES, in_registers

MIN_WIDTH = 8        # components: a strip narrower than a cache line is no strip


@dataclass(frozen=True)
class Strips:
    extents: tuple[int, ...]     # the grid's, the outermost first
    reach: tuple[int, ...]       # the stencil's, per dimension
    width: tuple[int, ...]       # W_i of each inner dimension (1 .. last), at most its extent
    iterations: int              # the levels that lag within the strip: the method's m (0: a sweep)
    stages: int                  # the method's s

    @property
    def local(self) -> tuple[int, ...]:
        """L_i: the strip's local extent of each inner dimension, its own W_i and m r_i either side."""
        return tuple(w + 2 * self.iterations * r for w, r in zip(self.width, self.reach[1:]))

    @property
    def plane(self) -> int:
        """P: the components of one local plane (the product of the L_i)."""
        return prod(self.local)

    def local_strides(self) -> tuple[int, ...]:
        """From one local component to the next along each dimension, the outermost (P) first."""
        loc = self.local
        return (self.plane,) + tuple(prod(loc[i + 1:]) for i in range(len(loc)))

    def local_offset(self, offset: int) -> int:
        """The local offset of a flat offset of the stencil (specs.grid.split)."""
        d = split(offset, self.extents, self.reach)
        if d is None:
            raise ValueError(f"offset {offset} is no neighbour within the reach {self.reach}")
        return sum(a * b for a, b in zip(d, self.local_strides()))

    @property
    def distance(self) -> int:
        """The levels' access distance within a strip: the farthest local offset the reach allows."""
        return sum(r * g for r, g in zip(self.reach, self.local_strides()))

    @property
    def ring(self) -> int:
        """Components of one ring row (the solver's RL): the planes a level reads around the one it
        computes while the level before writes ahead of it (2 r_0 + 3 planes), and the rows'
        stagger of 8 s, in whole pages."""
        need = (2 * self.reach[0] + 3) * self.plane + 8 * self.stages
        return -(-need // PAGE_DOUBLES) * PAGE_DOUBLES

    def window_bytes(self) -> int:
        """Bytes one thread's step keeps live: m rings of s rows, and the planes of y the levels
        read between the first level's and the last's ((m + 1) r_0 + 1)."""
        m = self.iterations
        return DOUBLE * (m * self.stages * self.ring + ((m + 1) * self.reach[0] + 1) * self.plane)

    def layer_bytes(self) -> int:
        """Bytes a sweep's layer condition keeps live, as model.regime counts a stencil's layers
        (twice the access distance of every row the sweep reads or writes) for the widest sweep:
        the fused corrector's, which reads s argument vectors and y and writes s new ones."""
        return 2 * self.distance * DOUBLE * (2 * self.stages + 1)

    def live_bytes(self) -> int:
        """What must stay in the cache: the pipelined step's window, or a sweep's layers."""
        return self.window_bytes() if self.iterations else self.layer_bytes()

    def describe(self) -> str:
        if not self.iterations:
            return f"strips {' x '.join(map(str, self.width))} wide, swept in runs of {self.width[-1]} components"
        shape = f", {' x '.join(map(str, self.local))}" if len(self.local) > 1 else ""
        return f"strips {' x '.join(map(str, self.width))} wide (local planes of {self.plane} components{shape})"

    def edge_share(self, extends: float) -> float:
        """The share of a level's components computed again at the strips' edges, for a level that
        reaches `extends` times the reach beyond its strip on either side."""
        return prod(1.0 + 2.0 * extends * r / w for w, r in zip(self.width, self.reach[1:])) - 1.0


@lru_cache(maxsize=1024)
def strips_for(extents: tuple[int, ...], reach: tuple[int, ...], iterations: int, stages: int,
               cache_bytes: float) -> Strips | None:
    """The widest strips whose window (iterations > 0) or layers (a sweep, iterations 0) take at
    most half of `cache_bytes` (a core's share of the level they are to stay in: the streamed y
    and new y pass through the other half); None where not even the narrowest fits.

    A pipelined step's W is a multiple of 8 (MIN_WIDTH at least), the same in every inner
    dimension (its edge work grows with the narrowest).  A sweep has no edge work: it keeps the
    innermost dimension whole, so that a strip's plane is one contiguous stretch the prefetchers
    follow (3D strips of 40 x 40 columns ran a sweep 1.9 x as long as row order, strips of all
    300 columns and 16 to 152 rows 0.83 x), narrows the others (any width), and then takes as
    many strips as alike as it can (its threads share them in strip order: strips of 1816, 1816
    and 368 columns left one of two threads half the work)."""
    inner = extents[1:]
    if not iterations:
        return _sweep_strips(extents, reach, stages, cache_bytes)
    best = None
    lo, hi = MIN_WIDTH // 8, -(-max(inner) // 8)
    while lo <= hi:           # the window grows with W: the largest that fits
        mid = (lo + hi) // 2
        s = Strips(extents, reach, tuple(min(8 * mid, e) for e in inner), iterations, stages)
        if s.live_bytes() <= cache_bytes / 2:
            best, lo = s, mid + 1
        else:
            hi = mid - 1
    return best


def _sweep_strips(extents: tuple[int, ...], reach: tuple[int, ...], stages: int, cache_bytes: float) -> Strips | None:
    inner = extents[1:]
    best = None
    lo, hi = 1, max(inner[:-1], default=1)
    while lo <= hi:
        mid = (lo + hi) // 2
        s = Strips(extents, reach, tuple(min(mid, e) for e in inner[:-1]) + inner[-1:], 0, stages)
        if s.live_bytes() <= cache_bytes / 2:
            best, lo = s, mid + 1
        else:
            hi = mid - 1
    if best is None:
        return None
    even = tuple(-(-e // -(-e // w)) for e, w in zip(inner, best.width))
    return Strips(extents, reach, even, 0, stages)


def unfit(ivp) -> str | None:
    """Why an IVP's pipelined step cannot run over strips (None: it can): a grid, one RHS part
    over every component whose stage derivatives stay in registers, no coefficient in j."""
    if ivp.grid is None:
        return "the IVP declares no grid"
    if not in_registers(ivp):
        return "strips take one RHS part over every component (the IVP has coupled parts)"
    if uses_position(ivp.rhs[0].expr):
        return "the IVP's expression reads j other than in a subscript"
    return None


def strips_of(ivp, n: int, iterations: int, stages: int, cache_bytes: float) -> Strips | None:
    """The strips of a grid IVP at system size n whose window fits half of `cache_bytes` (None
    where none does, or the IVP cannot run over strips: unfit)."""
    if unfit(ivp):
        return None
    size = ivp.size_value(n)
    return strips_for(ivp.grid.extents(ivp.size_parameter, size), ivp.grid.reach, iterations, stages,
                      cache_bytes)


def local_expr(expr: str, strips: Strips, size_parameter: str, size: int) -> str:
    """An RHS expression with every subscript's flat offset renamed to its local offset in the
    strip's planes: y[j-N] -> y[j - P]."""
    def rename(m) -> str:
        o = strips.local_offset(subscript_offset(m.group(2), size_parameter, size))
        return f"{m.group(1)}[j{' - ' if o < 0 else ' + '}{abs(o)}]" if o else f"{m.group(1)}[j]"
    return SUBSCRIPT.sub(rename, expr)

"""pipe: the step's sweeps one after another over the node's block (none), or pipelined: all
levels of the step together over each thread's region, in a wavefront, while what they hand on
stays in cache (wavefront; specs.window).  Its contribution lays out the pipelined step."""
from __future__ import annotations

from autotune.specs.dimension import Dimension, PayFacts, values
from autotune.specs.step import Block, Event, Group, Kind, Sweep, barrier
from autotune.specs.window import ghost_distances, in_registers, window_bytes

def _ring(level: int, s: int) -> tuple[str, ...]:
    """The rows of the ring that level `level` - 1 writes: argument vectors Y^(level)."""
    return tuple(f"P{level}_{l}" for l in range(1, s + 1))


def _pipelined_blocks(d) -> tuple[Block, ...]:
    """One exchange of y with (m + 1) d ghost components either side, then one sweep per thread
    that runs every level: the predictor's RHS with the first LC (reads y, writes ring 1), the
    m - 1 correctors with the next LC (ring k to ring k + 1, y read again in the window), the
    last RHS with APPROX+UPDATE into the new y.  Only y and the new y are the node's vectors;
    the rings and the re-read y are the window's (specs.window)."""
    s, m = d.s, d.method.iterations
    sweep = lambda group, reads, writes, window, level: Event(   # noqa: E731
        Kind.KERNEL, group, 1, "wavefront" if level == 0 else "",
        (Sweep(group, None, reads, writes, window=window, extends=float(m - level)),), timed=False)
    blocks = [Block("pipelined step: the exchange of y, then every level in one wavefront per thread",
                    d.communicate(("y",), "communicate_y", ghost_distances(m))
                    + (sweep(Group.RHSLCD, ("y",), _ring(1, s), _ring(1, s), 0),))]
    for k in range(1, m):
        ring_in, ring_out = _ring(k, s), _ring(k + 1, s)
        blocks.append(Block(f"level {k}: corrector RHS of Y^({k}) with the next LC, in the same wavefront",
                            (sweep(Group.RHSLC, ring_in + ("y",), ring_out, ring_in + ("y",) + ring_out, k),)))
    ring_in = _ring(m, s)
    blocks.append(Block(f"level {m}: the last RHS with APPROX+UPDATE into the new y, in the same wavefront",
                        (sweep(Group.RHSAU, ring_in + ("y",), ("yn",), ring_in + ("y",), m),
                         barrier("after the pipelined step"))))
    return tuple(blocks)


def _none(d, _: str) -> None:
    """The step as the other values laid it out."""


def _wavefront(d, _: str) -> None:
    d.skeleton, d.own_parts, d.sets = _pipelined_blocks, lambda d: (), 1


def _render(value: str, r) -> dict:
    """pipe; and where the stage derivatives stay in registers (specs.window.in_registers), the
    RHS of each argument vector i of a level as an expression of row i (wave_exprs)."""
    if value == "none":
        return {"pipe": False}
    exprs = None
    if in_registers(r.ivp):
        part = r.ivp.rhs[0]
        every = r.parts.all_stages(part.expr, part.arrays)
        exprs = [every.replace("[l][", f"[{i}][") for i in range(r.method.stages)]
    return {"pipe": True, "wave_exprs": exprs}


def _pays(value: str, f: PayFacts) -> str | None:
    live = (2 * f.stages + 1) * f.vector_bytes
    if live <= f.llc_bytes:
        return (f"the step's live data ({live / 2**20:.3g} MiB) stays in the last-level cache "
                f"({f.llc_bytes / 2**20:.3g} MiB): pipelining saves no memory traffic")
    walk = f.walk      # another order than the rows' (traversal): its own window
    window = (walk.window_bytes() if walk else window_bytes(f.tile, f.distance, f.stages, f.iterations)) * f.threads
    if window > f.llc_bytes:
        return (f"{'' if walk else 'in row order, '}the threads' windows ({window / 2**20:.3g} MiB at access distance "
                f"{walk.distance if walk else f.distance}) exceed the last-level cache ({f.llc_bytes / 2**20:.3g} MiB)")
    # the neighbours' share its levels compute again is priced (specs.window.extra_share), not a
    # reason to leave the form out: a short region costs more, and the ranking weighs it
    return None


DIMENSION = Dimension(
    "pipe", 110,
    values(["none"], "solver.c.j2:pipe (false: the sweeps one by one)")
    + values(["wavefront"], "step.j2:wavefront", fuse="rhs-lc", buf="ghost", overlap="none", store="none",
             comm="allgather|neighbour"), "none",
    "pipelined step: the fused sweeps one after another over the node's block (none), or all "
    "levels of the step together over each thread's region in a wavefront, what they hand on in "
    "rings of a few tiles in cache (wavefront; y's ghosts widened to (m + 1) d, exchanged once)",
    step={"none": _none, "wavefront": _wavefront}, writes=("skeleton", "own_parts", "sets"), reads=("pack",),
    overrides=("fuse",), render=_render, pays=_pays)

"""Kernel parts: the perfectly nested loops a PIRK step is made of, as data (rendered by
autotune.codegen, analysed by kerncraft, placed in memory regimes by autotune.model.regime)."""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

DOUBLE = 8


@dataclass(frozen=True)
class Access:
    """One array reference of a part's body: array[index][j] (index: a loop variable or a literal
    row; None for a one-row array, array[j]) read ("r"), written ("w") or both ("rw")."""
    array: str
    index: str | None
    mode: str


@dataclass(frozen=True)
class Loop:
    var: str
    start: str
    stop: str
    step: int = 1

    @property
    def trips(self) -> int:
        """Trip count of a loop with literal bounds (the stage and summand loops)."""
        return (int(self.stop) - int(self.start) + self.step - 1) // self.step


@dataclass(frozen=True)
class KernelPart:
    name: str                       # e.g. "lc.acc.ijl", "rhs.heat2d.interior"
    kernel: str                     # LC, RHS, APPROX, UPDATE
    code: str                       # the kerncraft kernel file
    loops: tuple[Loop, ...]
    arrays: tuple[tuple[str, int], ...]   # (name, rows); each row holds M + 2*halo doubles
    halo: str = "0"                 # formula in the IVP's size parameter (0 for method kernels)
    size_parameter: str | None = None     # kerncraft constant besides M, if the code uses it
    halo_power: int = 1             # a growing halo is the size parameter to this power (2: a 3D plane)
    iterations_per_m: float = 1.0   # loop iterations executed = iterations_per_m * M
    unroll: int = 1                 # trip-count product of the short loops inside the j loop
    components: str | None = None   # RHS: formula of the components this part updates
    step: int = 1
    constants: tuple[str, ...] = field(default=())   # scalar names declared in the code
    body: str = ""                  # the loop body (one statement), shared with the solver
    accesses: tuple[Access, ...] = ()   # a method part's array references (specs.methodparts)
    stores: tuple[str, ...] = ()    # arrays it only writes, every other one it only reads (a fused
                                    # sweep's next argument vectors): what non-temporal stores may write

    @cached_property
    def bytes_per_component(self) -> float:
        """Bytes of the working set per component swept (every row of every array)."""
        return sum(count for _, count in self.arrays) * DOUBLE

    @cached_property
    def sweep_bytes_per_component(self) -> float:
        """Bytes per component that one sweep of the j loop touches, for a part whose j loop sits
        inside another loop (lc.acc.ilj: F[i] is read again for every l); 0 where j is outermost
        and for a stencil (whose layer condition is its halo).

        Whether that sweep fits a cache decides whether the next sweep finds the reused rows
        there: the layer condition of the method kernels, as the halo is the stencils'."""
        names = [lp.var for lp in self.loops]
        if self.size_parameter is not None or "j" not in names or names.index("j") == 0:
            return 0.0
        inner = {lp.var: lp.trips for lp in self.loops[names.index("j") + 1:]}
        # a literal row is one row; a loop index inside j sweeps all its rows, one outside j one
        refs = dict.fromkeys((a.array, a.index) for a in self.accesses)
        return float(sum(1 if index is None else inner.get(index, 1) for _, index in refs) * DOUBLE)


@dataclass(frozen=True)
class TileLoop:
    """One loop a fused sweep runs over each tile (codegen.parts.tile_loops, model.loops): its
    part, its lines of work per line of work of the sweep's fused part, the arrays it keeps in
    the tile's buffers (F; store=nt's new argument vectors before they are streamed out), and the
    arrays it stores non-temporally."""
    part: KernelPart
    weight: float
    resident: tuple[str, ...] = ()
    streams: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """Its name in a breakdown: the part's, and what it keeps in the tile or streams."""
        extra = [f"{','.join(self.resident)} in the tile"] if self.resident else []
        extra += [f"{','.join(self.streams)} streamed"] if self.streams else []
        return f"{self.part.name} ({'; '.join(extra)})" if extra else self.part.name

"""Kernel parts: the perfectly nested loops a PIRK step is made of, as data (rendered by
autotune.codegen, analysed by kerncraft, placed in memory regimes by autotune.model.regime)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property

DOUBLE = 8
_ROW = re.compile(r"\b([A-Za-z_]\w*)\[(\w+)\]\[j\]")


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
    iterations_per_m: float = 1.0   # loop iterations executed = iterations_per_m * M
    unroll: int = 1                 # trip-count product of the short loops inside the j loop
    components: str | None = None   # RHS: formula of the components this part updates
    step: int = 1
    constants: tuple[str, ...] = field(default=())   # scalar names declared in the code
    body: str = ""                  # the loop body (one statement), shared with the solver

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
        rows = {name: 1 for name, count in self.arrays if count == 1 and re.search(rf"\b{name}\[j\]", self.body)}
        indices: dict[str, set] = {}
        for name, index in _ROW.findall(self.body):
            indices.setdefault(name, set()).add(index)
        for name, idx in indices.items():
            # a literal row is one row; a loop index inside j sweeps all its rows, one outside j one
            rows[name] = sum(inner.get(x, 1) for x in idx)
        return float(sum(rows.values()) * DOUBLE)

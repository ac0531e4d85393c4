"""An IVP's right-hand side in numpy, for the reference solutions scipy integrates (the accuracy
benchmark of step-size control: benchmarks.control; the tests of the method's order).  Pure.

Each part's expression is evaluated as Python over numpy arrays of the component indices, with
the same constants and the zeros beyond each block's ends as the generated solver."""
from __future__ import annotations

import numpy as np

from autotune.specs.ivp import IVP


def numpy_rhs(ivp: IVP, n: int, y: np.ndarray) -> np.ndarray:
    """f(y) of the IVP in numpy: each part's interior expression over its block (or, interleaved,
    over the whole vector from its start by its step), zeros beyond the block ends."""
    consts = ivp.constant_values(n)
    halo = max(1, max(ivp.part_halo(p, n) for p in ivp.rhs))
    blocked = len(ivp.rhs) > 1 and all(p.step == 1 for p in ivp.rhs)
    sizes = [ivp.part_components(p, n) for p in ivp.rhs] if blocked else [n]
    offsets = [sum(sizes[:i]) for i in range(len(sizes))]

    def padded(a):
        return _Padded(np.concatenate([np.zeros(halo), a, np.zeros(halo)]), halo)

    out = np.zeros(n)
    for i, part in enumerate(ivp.rhs):
        b = i if blocked else 0
        own = padded(y[offsets[b]:offsets[b] + sizes[b]])
        other = padded(y[offsets[1 - b]:offsets[1 - b] + sizes[1 - b]]) if blocked and len(sizes) == 2 else None
        js = np.arange(part.start, sizes[b], part.step)
        env = dict(consts, y=own, w=other, j=js, fmax=np.maximum, fmin=np.minimum)
        env[ivp.size_parameter] = ivp.size_value(n)
        out[offsets[b] + js] = eval(part.expr, {"__builtins__": {}}, env)
    return out


class _Padded:
    def __init__(self, a, halo):
        self.a, self.halo = a, halo

    def __getitem__(self, idx):
        return self.a[idx + self.halo]

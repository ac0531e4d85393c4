"""The few operations the model's arithmetic needs beyond + - * / and comparisons, for plain
numbers (one scenario) or numpy arrays over a batch of scenarios (model.batch.NUMPY).  Pure.

Code written against Ops runs unchanged on both and, done in the same order, gives the same
bits: IEEE arithmetic rounds each operation alike in Python and numpy."""
from __future__ import annotations

import math
from typing import Callable, NamedTuple


class Ops(NamedTuple):
    where: Callable          # where(cond, a, b)
    minimum: Callable        # min(a, b) elementwise
    maximum: Callable
    isnan: Callable
    any: Callable            # any(cond): true for some scenario
    take: Callable           # take(table, index): table[index] elementwise


SCALAR = Ops(where=lambda c, a, b: a if c else b, minimum=min, maximum=max, isnan=math.isnan, any=bool,
             take=lambda table, i: table[i])

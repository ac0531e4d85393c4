"""numpy for the model over a batch of scenarios: the Ops of model.ops on arrays, and the ranking
and pre-selection of model.preselect for a (scenarios x variants) table.  Pure.

Imported only for batches (a sweep), so that one ranking does not pay numpy's import.
"""
from __future__ import annotations

import numpy as np

from autotune.model.ops import Ops
from autotune.model.preselect import Rule

NUMPY = Ops(where=np.where, minimum=np.minimum, maximum=np.maximum, isnan=np.isnan, any=np.any,
            take=lambda table, i: np.asarray(table, dtype=float)[i])


def column(value, size: int) -> np.ndarray:
    """A per-scenario value as an array of `size` (a number the same for every scenario)."""
    return np.broadcast_to(np.asarray(value, dtype=float), (size,))


def rank_table(totals: np.ndarray, failed: np.ndarray, by_name: np.ndarray, rule: Rule
               ) -> tuple[np.ndarray, np.ndarray]:
    """model.preselect.rank and preselect for every row of a (scenarios x variants) table: the
    order of each row (variant indices, best first: by time, ties by name; failed last, by name)
    and how many lead it pre-selected (the pre-selected variants are always the first ones).
    by_name: the variant indices in the order of their names."""
    keyed = np.where(failed, np.nan, totals)[:, by_name]      # columns in name order
    order = by_name[np.argsort(keyed, axis=1, kind="stable")]  # a stable sort keeps ties by name, NaN last
    valid = (~failed).sum(axis=1)
    if rule.kind == "all":
        return order, valid
    if rule.kind == "top":
        return order, np.minimum(valid, int(rule.value))
    best = np.take_along_axis(totals, order[:, :1], axis=1)
    within = (~failed & (totals <= best * (1.0 + rule.value / 100.0))).sum(axis=1)
    return order, np.where(valid > 0, within, 0)

"""Statistics of a measurement's repeated runs (pure): the median and the spread, the upper
quartile a bandwidth point writes, the bootstrap interval of either, and whether it settled.
"""
from __future__ import annotations

import statistics

# runs per (level, kernel, threads) point.  The file keeps their upper quartile (attainable): the
# figure the hardware gives when nothing else slows it, which a busy minute moves least.  Not the
# best run: one fast spell sets it (a shared 2-core guest once read 90 GB/s among runs of 30 for
# its memory load), and one run in four may be as fast or faster than the quartile.  A busy minute
# is the tune's to correct: its in-run state (model.state) prices the minute it ran in
# (docs/node-model.md#which-statistic-the-file-holds).
REPEATS = 5
# more rounds, up to MAX_REPEATS, while the 95 % interval of some kernel's figure at a point (a
# bootstrap of its runs, interval) is wider than STABLE of it: until the estimate settles.
MAX_REPEATS = 11
STABLE = 0.10


def median_spread(values: list[float]) -> tuple[float, float]:
    """The median of a measurement's runs and their spread, (max - min) / median."""
    if not values:
        raise ValueError("no runs to take the median of")
    mid = statistics.median(values)
    return mid, (max(values) - min(values)) / mid if mid else 0.0


def attainable(values: list[float]) -> float:
    """The figure a bandwidth point writes: the upper quartile of its runs (linear between the
    sorted runs, as numpy's default; one run: itself)."""
    if not values:
        raise ValueError("no runs to take the upper quartile of")
    return statistics.quantiles(values, n=4, method="inclusive")[2] if len(values) > 1 else values[0]


def attainable_spread(values: list[float]) -> tuple[float, float]:
    """A bandwidth point's figure (attainable) and the spread of its runs, (max - min) / median."""
    return attainable(values), median_spread(values)[1]


def interval(values: list[float], statistic=statistics.median, resamples: int = 1000) -> tuple[float, float]:
    """The 95 % interval of a statistic of the runs (the median unless given): the 2.5th and
    97.5th percentiles of its figures over `resamples` bootstrap resamples (a fixed seed: the same
    runs give the same interval)."""
    import random
    if not values:
        raise ValueError("no runs to take the interval of")
    rng = random.Random(0)
    figures = sorted(statistic(rng.choices(values, k=len(values))) for _ in range(resamples))
    return figures[int(0.025 * (resamples - 1))], figures[int(0.975 * (resamples - 1))]


def settled(runs: dict[str, list[float]], width: float = STABLE, statistic=statistics.median) -> bool:
    """Whether every kernel's figure at a point (the statistic of its runs, the median unless
    given) is known to within `width` of it (the interval of interval())."""
    for values in runs.values():
        mid = statistic(values)
        lo, hi = interval(values, statistic)
        if mid and (hi - lo) / mid > width:
            return False
    return True

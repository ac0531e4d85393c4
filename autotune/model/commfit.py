"""Fitting communication-cost models to micro-benchmark measurements.  Pure functions.

Per operation the time for a message of m bytes on p ranks is

    t(m, p) = a_k * L(p) + b_k * W(p) * m        for m in size segment k

where L(p) and W(p) are the latency and volume factors of the operation's
algorithm (allgather: ceil(log2 p) rounds and p-1 blocks through each link;
neighbour exchange: one round, one or two messages sharing the link;
pairwise: one round, one message).  The segments are separated by protocol
switch points found from the data (0, 1 or 2 breakpoints, chosen by a
penalised fit criterion).  Each segment is fitted on the per-point medians of
the repetitions with an L1 loss on relative residuals (iteratively reweighted
non-negative least squares), so a single spike moves it little.  The
p-dependent form lets node counts that were never measured be predicted.
"""
from __future__ import annotations

import math
from itertools import combinations

import numpy as np
from scipy.optimize import nnls

from autotune.arith import ordered_sum
from autotune.model.commmodel import OpFit, Segment
from autotune.specs.schemes import OPERATIONS

def _design(op: str, points: list[tuple[int, float, float]]):
    lat, vol = OPERATIONS[op].rounds, OPERATIONS[op].volume
    X = np.array([[lat(p), vol(p) * m] for p, m, _ in points], dtype=float)
    y = np.array([t for _, _, t in points], dtype=float)
    return X, y


def _robust_fit(X: np.ndarray, y: np.ndarray, iters: int = 30) -> tuple[np.ndarray, float]:
    """Non-negative coefficients minimising sum |X c - y| / y (IRLS); returns (c, loss)."""
    w = 1.0 / y
    coef = np.zeros(X.shape[1])
    for _ in range(iters):
        coef, _ = nnls(X * w[:, None], y * w)
        r = np.abs(X @ coef - y) / y
        w = 1.0 / (y * np.maximum(np.sqrt(r), 1e-3))   # L1 on relative residuals
    return coef, float(np.sum(np.abs(X @ coef - y) / y))


def _fit_segments(op, points, breaks):
    """Fit one set of breakpoints (sizes: a segment holds sizes <= its break)."""
    bounds = list(breaks) + [math.inf]
    segs, loss, lo = [], 0.0, -math.inf
    for hi in bounds:
        part = [pt for pt in points if lo < pt[1] <= hi]
        X, y = _design(op, part)
        coef, l1 = _robust_fit(X, y)
        segs.append((hi, coef))
        loss += l1
        lo = hi
    return segs, loss


def fit_operation(op: str, points: list[tuple[int, float, float]], max_breaks: int = 2,
                  min_sizes_per_segment: int = 3) -> OpFit:
    """points: (p, bytes, seconds), one per measured (p, size), p >= 2.

    The joint fit over all p predicts unmeasured node counts; each measured p
    also gets its own segments, used at exactly that p.
    """
    points = [pt for pt in points if pt[0] >= 2 and pt[2] > 0]
    joint = _fit_joint(op, points, max_breaks, min_sizes_per_segment)
    ps = sorted({p for p, _, _ in points})
    if len(ps) == 1:
        return OpFit(op, joint.segments, joint.points, ((ps[0], joint.segments),))
    per_p = tuple((p, _fit_joint(op, [pt for pt in points if pt[0] == p], max_breaks,
                                 min_sizes_per_segment).segments) for p in ps)
    return OpFit(op, joint.segments, joint.points, per_p)


def _fit_joint(op: str, points, max_breaks: int, min_sizes_per_segment: int) -> OpFit:
    sizes = sorted({m for _, m, _ in points})
    if len(sizes) < 2:
        raise ValueError(f"{op}: need at least two message sizes to fit")
    n = len(points)
    best = None
    for k in range(0, max_breaks + 1):
        for cut in combinations(range(min_sizes_per_segment - 1, len(sizes) - min_sizes_per_segment), k):
            if any(b - a < min_sizes_per_segment for a, b in zip(cut, cut[1:])):
                continue
            breaks = [sizes[i] for i in cut]
            segs, loss = _fit_segments(op, points, breaks)
            score = n * math.log(max(loss, 1e-12) / n) + (3 * k + 2) * math.log(n)  # BIC-style penalty
            if best is None or score < best[0]:
                best = (score, segs, breaks)
    _, segs, breaks = best
    # a segment ends halfway (geometrically) between its last size and the next measured one
    out = []
    for (hi, coef), b in zip(segs, breaks + [math.inf]):
        if math.isinf(b):
            end = math.inf
        else:
            nxt = sizes[sizes.index(b) + 1]
            end = math.sqrt(b * nxt)
        out.append(Segment(end, float(coef[0]), float(coef[1])))
    return OpFit(op, tuple(out), n)


def relative_errors_pct(fit: OpFit, points) -> list[float]:
    return [100.0 * abs(fit.predict(m, p) - t) / t for p, m, t in points]


def _summary(errors: list[float]) -> dict | None:
    if not errors:
        return None
    return {"median": float(np.median(errors)), "max": float(max(errors)), "points": len(errors)}


def heldout_sizes(op: str, points, every: int = 3) -> dict | None:
    """Fit without every `every`-th size (ends kept), report the error on the held-out sizes."""
    sizes = sorted({m for _, m, _ in points})
    held = set(sizes[1:-1][every - 1::every])
    train = [pt for pt in points if pt[1] not in held]
    test = [pt for pt in points if pt[1] in held]
    if not test or len({m for _, m, _ in train}) < 4:
        return None
    return _summary(relative_errors_pct(fit_operation(op, train), test))


def heldout_p(op: str, points) -> dict | None:
    """Fit without the largest measured p and predict it (needs at least two p >= 2)."""
    ps = sorted({p for p, _, _ in points if p >= 2})
    if len(ps) < 2:
        return None
    train = [pt for pt in points if pt[0] != ps[-1]]
    test = [pt for pt in points if pt[0] == ps[-1]]
    joint = fit_operation(op, train)
    joint = OpFit(op, joint.segments, joint.points)   # only the joint model may speak for an unmeasured p
    return dict(_summary(relative_errors_pct(joint, test)), p=ps[-1])


def fit_barrier(points: list[tuple[int, float]]) -> dict:
    """t(tau) = c * ceil(log2 tau), least squares over tau >= 2; points: (threads, seconds)."""
    xs = [(math.ceil(math.log2(t)), s) for t, s in points if t >= 2]
    if not xs:
        return {"per_doubling_s": 0.0, "error_pct": None}
    c = ordered_sum(x * s for x, s in xs) / ordered_sum(x * x for x, _ in xs)
    errs = [100.0 * abs(c * x - s) / s for x, s in xs]
    return {"per_doubling_s": c, "error_pct": _summary(errs)}

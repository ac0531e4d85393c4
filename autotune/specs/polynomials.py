"""Tiny dense polynomial helpers (coefficients lowest degree first), pure Python.

Used to compute collocation Runge-Kutta coefficients without importing numpy
on the command line's hot path.
"""
from __future__ import annotations

from fractions import Fraction


def mul(p: list, q: list) -> list:
    out = [0] * (len(p) + len(q) - 1)
    for i, a in enumerate(p):
        for j, b in enumerate(q):
            out[i + j] += a * b
    return out


def add(p: list, q: list, scale_q=1) -> list:
    n = max(len(p), len(q))
    return [(p[i] if i < len(p) else 0) + scale_q * (q[i] if i < len(q) else 0) for i in range(n)]


def evaluate(p: list, x):
    acc = 0
    for c in reversed(p):
        acc = acc * x + c
    return acc


def derivative(p: list) -> list:
    return [i * c for i, c in enumerate(p)][1:] or [0]


def integral(p: list) -> list:
    """Antiderivative vanishing at 0."""
    return [0] + [c / (i + 1) for i, c in enumerate(p)]


def shifted_legendre(k: int) -> list:
    """P_k(2x - 1) with exact rational coefficients (Bonnet's recursion)."""
    prev, cur = [Fraction(1)], [Fraction(-1), Fraction(2)]
    if k == 0:
        return prev
    two_x_minus_1 = [Fraction(-1), Fraction(2)]
    for n in range(1, k):
        # (n+1) P_{n+1} = (2n+1) t P_n - n P_{n-1},  t = 2x - 1
        nxt = add([Fraction(2 * n + 1) * c for c in mul(two_x_minus_1, cur)],
                  [Fraction(n) * c for c in prev], -1)
        prev, cur = cur, [c / (n + 1) for c in nxt]
    return cur


def real_roots_in_unit_interval(p: list, count: int) -> list[float]:
    """The `count` simple real roots of p in [0, 1], by bisection on a fine sign grid + Newton."""
    pf = [float(c) for c in p]
    dp = derivative(pf)
    grid = 4000
    roots: list[float] = []
    xs = [i / grid for i in range(grid + 1)]
    vals = [evaluate(pf, x) for x in xs]
    for i in range(grid + 1):
        if vals[i] == 0.0:
            roots.append(xs[i])
        elif i < grid and vals[i] * vals[i + 1] < 0:
            lo, hi = xs[i], xs[i + 1]
            for _ in range(200):
                mid = 0.5 * (lo + hi)
                if evaluate(pf, lo) * evaluate(pf, mid) <= 0:
                    hi = mid
                else:
                    lo = mid
                if hi - lo < 1e-15:
                    break
            x = 0.5 * (lo + hi)
            for _ in range(3):  # polish
                d = evaluate(dp, x)
                if d:
                    x -= evaluate(pf, x) / d
            roots.append(x)
    roots = sorted(set(roots))
    if len(roots) != count:
        raise ValueError(f"expected {count} roots in [0, 1], found {len(roots)}")
    return roots


def lagrange_basis(nodes: list[float], j: int) -> list[float]:
    p = [1.0]
    for m, xm in enumerate(nodes):
        if m != j:
            denom = nodes[j] - xm
            p = mul(p, [-xm / denom, 1.0 / denom])
    return p

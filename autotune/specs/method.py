"""ODE methods (implicit RK correctors for PIRK), computed from their definition.

A method file (autotune/data/methods/NAME.yaml) names a family, a stage count
and optionally the number of corrector iterations m (default: order - 1).
Coefficients are computed, not typed:

- Radau IIA: nodes are the zeros of P_s(2x-1) - P_{s-1}(2x-1); order 2s-1.
- Gauss-Legendre: nodes are the zeros of P_s(2x-1); order 2s.
- Lobatto IIIC: nodes are 0, 1 and the zeros of P'_{s-1}(2x-1); a_i1 = b_1,
  last row = b, other entries from the simplifying condition C(s-1); order 2s-2.

Collocation methods (Radau IIA, Gauss) have a_ij = int_0^{c_i} L_j and
b_j = int_0^1 L_j with L_j the Lagrange basis on the nodes.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from autotune.arith import ordered_sum
from autotune.specs import polynomials as poly
from autotune.errors import InputError
from autotune.specs.shipped import shipped_dir
from autotune.specs.loading import read_yaml, resolve, shipped_names, validate


@dataclass(frozen=True)
class Method:
    name: str
    family: str
    stages: int
    order: int
    iterations: int
    A: tuple[tuple[float, ...], ...]
    b: tuple[float, ...]
    c: tuple[float, ...]


def _collocation(nodes: list[float]):
    s = len(nodes)
    basis = [poly.integral(poly.lagrange_basis(nodes, j)) for j in range(s)]
    A = [[poly.evaluate(basis[j], nodes[i]) for j in range(s)] for i in range(s)]
    b = [poly.evaluate(basis[j], 1.0) for j in range(s)]
    return A, b


def radau_iia(s: int):
    p = poly.add(poly.shifted_legendre(s), poly.shifted_legendre(s - 1), -1)
    nodes = poly.real_roots_in_unit_interval(p, s)
    nodes[-1] = 1.0
    A, b = _collocation(nodes)
    return A, b, nodes, 2 * s - 1


def gauss_legendre(s: int):
    nodes = poly.real_roots_in_unit_interval(poly.shifted_legendre(s), s)
    A, b = _collocation(nodes)
    return A, b, nodes, 2 * s


def _solve(M: list[list[float]], rhs: list[float]) -> list[float]:
    """Gaussian elimination with partial pivoting (small dense systems)."""
    n = len(rhs)
    a = [row[:] + [rhs[i]] for i, row in enumerate(M)]
    for k in range(n):
        piv = max(range(k, n), key=lambda r: abs(a[r][k]))
        a[k], a[piv] = a[piv], a[k]
        for r in range(k + 1, n):
            f = a[r][k] / a[k][k]
            for c in range(k, n + 1):
                a[r][c] -= f * a[k][c]
    x = [0.0] * n
    for k in reversed(range(n)):
        x[k] = (a[k][n] - ordered_sum(a[k][c] * x[c] for c in range(k + 1, n))) / a[k][k]
    return x


def lobatto_iiic(s: int):
    if s < 2:
        raise InputError("Lobatto IIIC needs at least 2 stages")
    inner = poly.derivative(poly.shifted_legendre(s - 1))
    nodes = [0.0] + (poly.real_roots_in_unit_interval(inner, s - 2) if s > 2 else []) + [1.0]
    _, b = _collocation(nodes)
    A = []
    for i in range(s):
        if i == s - 1:
            A.append(list(b))
            continue
        # unknowns a_i2..a_is; C(s-1): sum_j a_ij c_j^(k-1) = c_i^k / k, k = 1..s-1
        M = [[nodes[j] ** (k - 1) for j in range(1, s)] for k in range(1, s)]
        rhs = [nodes[i] ** k / k - b[0] * nodes[0] ** (k - 1) for k in range(1, s)]
        A.append([b[0]] + _solve(M, rhs))
    return A, b, nodes, 2 * s - 2


FAMILIES = {"radauIIA": radau_iia, "gauss": gauss_legendre, "lobattoIIIC": lobatto_iiic}

SCHEMA = {
    "type": "object",
    "required": ["name", "family", "stages"],
    "additionalProperties": False,
    "properties": {
        "name": {"type": "string", "pattern": r"^[A-Za-z0-9_.-]+$"},
        "family": {"type": "string", "enum": sorted(FAMILIES)},
        "stages": {"type": "integer", "minimum": 1},
        "iterations": {"type": "integer", "minimum": 1},
        "description": {"type": "string"},
    },
}


@lru_cache(maxsize=None)
def build(family: str, stages: int, iterations: int | None = None, name: str = "") -> Method:
    A, b, c, order = FAMILIES[family](stages)
    m = iterations if iterations is not None else max(order - 1, 1)
    return Method(name or f"{family}{order}", family, stages, order, m,
                  tuple(tuple(r) for r in A), tuple(b), tuple(c))


def load_method(name_or_path: str) -> Method:
    path = resolve(name_or_path, shipped_dir("methods"), "method")
    data = read_yaml(path)
    validate(data, SCHEMA, path)
    return build(data["family"], data["stages"], data.get("iterations"), data["name"])


def method_names() -> list[str]:
    return shipped_names(shipped_dir("methods"))


def method_file(name: str) -> Path:
    return resolve(name, shipped_dir("methods"), "method")

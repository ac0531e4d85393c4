import math

import numpy as np
import pytest

from autotune.specs.method import build, load_method, method_names


def _order_conditions(m, p, q):
    A, b, c = np.array(m.A), np.array(m.b), np.array(m.c)
    for k in range(1, p + 1):  # B(p)
        assert b @ c ** (k - 1) == pytest.approx(1.0 / k, abs=1e-13), f"B({k})"
    for k in range(1, q + 1):  # C(q)
        np.testing.assert_allclose(A @ c ** (k - 1), c ** k / k, atol=1e-13, err_msg=f"C({k})")


def test_radau_iia7_known_coefficients():
    m = load_method("radauIIA7")
    assert (m.stages, m.order, m.iterations) == (4, 7, 6)
    np.testing.assert_allclose(m.c, [0.0885879595, 0.4094668644, 0.7876594618, 1.0], atol=1e-10)
    assert m.A[3][3] == pytest.approx(1 / 16, abs=1e-14)
    np.testing.assert_allclose(m.A[-1], m.b, atol=1e-14)  # stiffly accurate


def test_radau_iia3_matches_textbook():
    m = build("radauIIA", 2)
    np.testing.assert_allclose(m.c, [1 / 3, 1])
    np.testing.assert_allclose(m.A, [[5 / 12, -1 / 12], [3 / 4, 1 / 4]], atol=1e-14)
    s6 = math.sqrt(6)
    np.testing.assert_allclose(build("radauIIA", 3).c, [(4 - s6) / 10, (4 + s6) / 10, 1], atol=1e-14)


def test_gauss_and_lobatto_known_coefficients():
    g = build("gauss", 2)
    r3 = math.sqrt(3)
    np.testing.assert_allclose(g.c, [0.5 - r3 / 6, 0.5 + r3 / 6], atol=1e-14)
    np.testing.assert_allclose(g.A, [[0.25, 0.25 - r3 / 6], [0.25 + r3 / 6, 0.25]], atol=1e-14)
    lob = build("lobattoIIIC", 3)
    np.testing.assert_allclose(lob.A, [[1 / 6, -1 / 3, 1 / 6], [1 / 6, 5 / 12, -1 / 12], [1 / 6, 2 / 3, 1 / 6]],
                               atol=1e-14)


@pytest.mark.parametrize("s", [1, 2, 3, 4, 5])
def test_order_conditions(s):
    _order_conditions(build("radauIIA", s), 2 * s - 1, s)
    _order_conditions(build("gauss", s), 2 * s, s)
    if s >= 2:
        _order_conditions(build("lobattoIIIC", s), 2 * s - 2, s - 1)


@pytest.mark.parametrize("family,s", [("radauIIA", 3), ("gauss", 2), ("lobattoIIIC", 3)])
def test_observed_order_on_a_linear_oscillator(family, s):
    """Integrate y' = J y with the implicit method itself; the error must fall at the method's order."""
    m = build(family, s)
    A, b = np.array(m.A), np.array(m.b)
    J = np.array([[0.0, 1.0], [-1.0, 0.0]])
    y0, T = np.array([1.0, 0.0]), 1.0

    def solve(steps):
        h, y = T / steps, y0.copy()
        K = np.kron(np.eye(s), np.eye(2)) - h * np.kron(A, J)
        for _ in range(steps):
            Y = np.linalg.solve(K, np.tile(y, s)).reshape(s, 2)
            y = y + h * sum(b[i] * J @ Y[i] for i in range(s))
        return np.linalg.norm(y - np.array([math.cos(T), -math.sin(T)]))

    e1, e2 = solve(4), solve(8)
    assert math.log2(e1 / e2) == pytest.approx(m.order, abs=0.35)


def test_every_shipped_method_loads():
    names = method_names()
    assert "radauIIA7" in names
    for n in names:
        m = load_method(n)
        assert m.iterations >= 1 and len(m.A) == m.stages

"""The generated solver, compiled with mpicc and run with mpiexec: same numbers for every
variant, rank and thread count; the method's order against scipy's solve_ivp."""
import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from autotune.build import build, run
from autotune.errors import InputError
from autotune.launcher import parse_launcher
from autotune.solver import solver_source
from autotune.specs.ivp import load_ivp
from autotune.specs.method import load_method
from autotune.variants import Variant, enumerate_variants

LAUNCHER = parse_launcher(None)
METHOD = load_method("radauIIA7")


@pytest.fixture(autouse=True)
def _private_builds(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("AUTOTUNE_BUILDS", str(tmp_path_factory.getbasetemp() / "builds"))


def _solve(ivp, variant, n, steps, h, procs, threads, path):
    exe = build(solver_source(ivp, METHOD, variant, n))
    res = run(exe, LAUNCHER, procs, threads, n, ivp.size_value(n), steps, h, 0, path)
    assert res["n"] == n and res["ranks"] == procs and res["steps"] == steps
    return np.fromfile(path)


@pytest.mark.parametrize("name,n,h", [("heat2d", 64, 1e-3), ("inverterchain", 200, 0.1),
                                      ("wave1d", 256, 1e-3), ("string-mix", 200, 1e-4)])
def test_every_variant_computes_the_same_numbers(name, n, h, tmp_path):
    ivp = load_ivp(name)
    results = {}
    for v in enumerate_variants(ivp.comm):
        for procs, threads in ((1, 1), (2, 1), (1, 2)):
            results[(v.name, procs, threads)] = _solve(ivp, v, n, 3, h, procs, threads,
                                                       tmp_path / f"{v.lc}-{v.comm}-{procs}-{threads}.bin")
    ref = results[("lc=ijl,comm=allgather", 1, 1)]
    assert np.linalg.norm(ref) > 0 and np.all(np.isfinite(ref))
    y0 = _solve(ivp, Variant("ijl", "allgather"), n, 0, h, 1, 1, tmp_path / "y0.bin")
    assert np.max(np.abs(ref - y0)) > 1e-8            # the solution moved
    scale = np.max(np.abs(ref))
    for key, y in results.items():
        assert np.max(np.abs(y - ref)) <= 1e-12 * scale, key


def _reference(ivp, n, y0, T):
    """The same ODE in numpy (interior expression, zeros beyond both ends), integrated tightly."""
    N, H = ivp.size_value(n), max(ivp.access_distance(n), 1)
    consts = ivp.constant_values(n)

    class Shifted:
        def __init__(self, a):
            self.a = a

        def __getitem__(self, idx):
            return self.a[idx + H]

    def f(t, y):
        pad = np.zeros(n + 2 * H)
        pad[H:H + n] = y
        F = np.zeros(n)
        for part in ivp.rhs:
            js = np.arange(part.start, n, part.step)
            env = dict(consts, y=Shifted(pad), j=js, fmax=np.maximum, fmin=np.minimum)
            env[ivp.size_parameter] = N
            F[js] = eval(part.expr, {"__builtins__": {}}, env)
        return F

    return solve_ivp(f, (0, T), y0, method="DOP853", rtol=1e-13, atol=1e-13).y[:, -1]


@pytest.mark.parametrize("name,n,T,hs", [("heat2d", 36, 0.05, (0.0125, 0.00625, 0.003125)),
                                         ("inverterchain", 20, 1.0, (0.25, 0.125, 0.0625))])
def test_converges_at_the_method_order(name, n, T, hs, tmp_path):
    ivp = load_ivp(name)
    v = Variant("jli", "neighbour")
    y0 = _solve(ivp, v, n, 0, 0.1, 1, 1, tmp_path / "y0.bin")
    ref = _reference(ivp, n, y0, T)
    errors = []
    for h in hs:
        y = _solve(ivp, v, n, int(round(T / h)), h, 2, 1, tmp_path / f"y{h}.bin")
        errors.append(np.max(np.abs(y - ref)) / np.max(np.abs(ref)))
    orders = [math.log2(a / b) for a, b in zip(errors, errors[1:])]
    # the observed order approaches the method's (7 for Radau IIA with m = 6 iterations)
    assert errors[-1] < 1e-9 and orders[-1] == pytest.approx(METHOD.order, abs=0.6), (errors, orders)


def test_not_yet_generated_variants_say_so():
    with pytest.raises(InputError, match="not generated yet"):
        solver_source(load_ivp("medakzo"), METHOD, Variant("ijl", "allgather"), 1000)
    with pytest.raises(InputError, match="comm=sparse"):
        solver_source(load_ivp("medakzo"), METHOD, Variant("ijl", "sparse"), 1000)

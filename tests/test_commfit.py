import math

import numpy as np
import pytest

from autotune.model.commfit import OpFit, fit_barrier, fit_operation, heldout_p, heldout_sizes

SIZES = [2 ** k for k in range(3, 25)]          # 8 B .. 16 MiB


def synthetic(op, ps, lat, bw, switch=None, noise=0.0, seed=1):
    """Ground truth: two protocols, eager below `switch` bytes, rendezvous above."""
    from autotune.specs.schemes import OPERATIONS
    rng = np.random.default_rng(seed)
    L, W = OPERATIONS[op].rounds, OPERATIONS[op].volume
    pts = []
    for p in ps:
        for m in SIZES:
            a, b = (lat, 1 / bw) if switch is None or m <= switch else (3 * lat, 0.7 / bw)
            t = a * L(p) + b * W(p) * m
            pts.append((p, m, t * (1 + noise * rng.standard_normal())))
    return pts


def test_recovers_known_parameters_with_a_protocol_switch():
    pts = synthetic("allgather", [2, 4, 8], 2e-6, 5e9, switch=65536, noise=0.01)
    fit = fit_operation("allgather", pts)
    assert len(fit.segments) == 2
    small, large = fit.segments
    assert 65536 <= small.max_bytes < 131072
    assert small.latency_s == pytest.approx(2e-6, rel=0.1)
    assert small.per_byte_s == pytest.approx(1 / 5e9, rel=0.05)
    assert large.per_byte_s == pytest.approx(0.7 / 5e9, rel=0.05)
    # p-dependent: a node count never measured
    assert fit.predict(2 ** 20, 32) == pytest.approx(3 * 2e-6 * 5 + 0.7 / 5e9 * 31 * 2 ** 20, rel=0.05)


def test_spikes_do_not_move_the_fit():
    clean = synthetic("neighbour", [2, 4], 1e-6, 8e9, noise=0.005)
    spiky = [(p, m, t * (8 if m in (4096, 2 ** 20) and p == 4 else 1)) for p, m, t in clean]
    a, b = fit_operation("neighbour", clean), fit_operation("neighbour", spiky)
    for m in (64, 65536, 2 ** 22):
        assert b.predict(m, 4) == pytest.approx(a.predict(m, 4), rel=0.03)


def test_heldout_errors_small_on_clean_data_and_p_extrapolation():
    pts = synthetic("allgather", [2, 4, 8], 2e-6, 5e9, switch=65536, noise=0.01)
    hs = heldout_sizes("allgather", pts)
    hp = heldout_p("allgather", pts)
    assert hs["median"] < 3 and hp["p"] == 8 and hp["median"] < 5
    assert heldout_p("allgather", [pt for pt in pts if pt[0] == 2]) is None


def test_round_trip_and_single_rank():
    fit = fit_operation("pairwise", synthetic("pairwise", [2], 1e-6, 1e10))
    again = OpFit.from_dict("pairwise", fit.to_dict())
    assert again.predict(1e6, 2) == pytest.approx(fit.predict(1e6, 2))
    assert fit.predict(1e6, 1) == 0.0
    assert math.isinf(again.segments[-1].max_bytes)


def test_barrier_fit():
    pts = [(1, 1e-8), (2, 3e-7), (4, 6e-7), (8, 9e-7)]
    res = fit_barrier(pts)
    assert res["per_doubling_s"] == pytest.approx(3e-7)
    assert res["error_pct"]["max"] < 1e-6

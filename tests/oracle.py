"""The model written out plainly, one scenario at a time, as docs/method.md states it: what the tests
check the production model (model.steptime over numbers and arrays, model.reuse, model.regime)
against.  Not used by the package.  Sums run left to right (autotune.arith.ordered_sum), the
order the model promises, so an oracle's bits are the same on every Python.
"""
from __future__ import annotations

from dataclasses import dataclass

from autotune.arith import ordered_sum
from autotune.model.regime import NodeLevels, Regime, _reuse_bytes, level_index
from autotune.model.reuse import MIN_SHARE
from autotune.specs.parts import KernelPart


@dataclass(frozen=True)
class Term:
    """One kernel part in one regime on the slowest node (docs/method.md#the-time-of-a-step)."""
    alpha: float                     # cycles per cache line of work, one core
    sigma: float                     # saturation point in cores
    beta: float                      # loop iterations per execution
    delta: float                     # loop iterations per cache line
    executions: int
    alpha_tau: float | None = None   # cycles per cache line with tau cores (kerncraft's scaling), if known


def zeta(alpha: float, beta: float, delta: float) -> float:
    return alpha * beta / delta                                                   # eq 8


def phi(zeta_cycles: float, clock_hz: float, threads: int, sigma: float) -> float:
    return zeta_cycles / (clock_hz * min(threads, sigma))                         # eq 9


def execution(term: Term, clock_hz: float, threads: int) -> tuple[float, float]:
    """(cores used, seconds per execution): eqs 8-9, or kerncraft's scaling where known."""
    if term.alpha_tau is not None:
        return term.alpha / term.alpha_tau, zeta(term.alpha_tau, term.beta, term.delta) / clock_hz
    return min(threads, term.sigma), phi(zeta(term.alpha, term.beta, term.delta), clock_hz, threads, term.sigma)


def mixed_seconds(levels: list[tuple[float, Term]], clock_hz: float, threads: int) -> float:
    """Seconds per execution of a part whose data comes from several levels: the share-weighted
    sum of its seconds in each level's regime."""
    return ordered_sum((w * execution(t, clock_hz, threads)[1] for w, t in levels), 0.0)


@dataclass(frozen=True)
class Step:
    total_s: float
    node_s: float
    comm_s: float
    barrier_s: float
    hidden_s: float


def step(kernel_seconds: list[float], barriers: int, barrier_s: float, comm_s: float,
         interior_s: float | None = None) -> Step:
    """Eqs 10-11: theta = the parts' seconds per step + barriers; psi = theta + comm, less what an
    overlapped halo exchange hides behind the interior (interior_s)."""
    theta = ordered_sum(kernel_seconds) + barrier_s * barriers
    hidden = min(comm_s, interior_s) if interior_s is not None else 0.0
    return Step(theta + comm_s - hidden, theta, comm_s, barrier_s * barriers, hidden)


def level_shares(distances: tuple[tuple[float, int], ...], vector_bytes: float,
                 reach: tuple[float, ...]) -> tuple[float, ...]:
    """model.reuse's shares for one size, as its module docstring defines them: each vector's
    h(R) = clamp((R - D V) / V, 0, 1) per level, differences between levels, the mean over the
    vectors; shares below MIN_SHARE go to the next level out (or the last kept one)."""
    shares = [0.0] * (len(reach) + 1)
    for d, count in distances:
        above = 0.0
        for i, r in enumerate(reach):
            held = min(1.0, max(0.0, (r - d * vector_bytes) / vector_bytes))
            shares[i] += count * (held - above)
            above = held
        shares[-1] += count * (1.0 - above)
    total = float(ordered_sum(c for _, c in distances)) or 1.0
    shares = [x / total for x in shares]
    for i in range(len(shares)):
        if 0.0 < shares[i] < MIN_SHARE:
            kept = [k for k in range(i + 1, len(shares)) if shares[k] >= MIN_SHARE]
            j = kept[0] if kept else max(k for k in range(i) if shares[k] >= MIN_SHARE)
            shares[j] += shares[i]
            shares[i] = 0.0
    return tuple(shares)


def regime_in(part: KernelPart, data: int, m: int, halo: int, lv: NodeLevels) -> Regime:
    """model.regime's regime of a part whose data comes from level index `data`, by its
    definition: the layer condition of the part's own reuse at or above that level."""
    sweep = part.sweep_bytes_per_component
    if part.size_parameter is None:
        if sweep:
            layer = level_index(sweep * m, lv.shared)
            if layer < data:
                return Regime(lv.names[data], lv.names[layer])
        return Regime(lv.names[data], None)
    layer = min(data, level_index(_reuse_bytes(part, halo), lv.private))
    return Regime(lv.names[data], lv.names[layer])

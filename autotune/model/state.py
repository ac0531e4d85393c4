"""A prediction priced again at the state a tune run measured (specs.runstate.RunState).  Pure.

Every term of an ECM result counted in core cycles (the in-core terms, the cache transfers,
kerncraft's penalty cycles) is multiplied by the file's clock over the run's: the same cycles
take that much longer in the file's seconds.  The transfer from main memory is bytes over a
bandwidth, which the clock converts to cycles and back: it is multiplied by the file's
bandwidth over the run's.  The terms are then recombined as kerncraft combines them
(model.learned.recombine: single-core time, saturation, the multi-core curve), so a part that
is memory-bound at the run's bandwidth is priced memory-bound, and one that is core-bound by the
clock.  One bandwidth factor for every memory kernel: the reference kernel is the triad, and
drift of a shared node's memory interface moves every streaming kernel alike.

The floor (model.bound) at a state: memory at the run's bandwidth, the caches at the clock
ratio (their bandwidths are bytes per cycle), the in-core time at the run's clock.
docs/tuning.md#predictions-at-the-runs-state.
"""
from __future__ import annotations

import statistics

from autotune.model.learned import recombine, transfer_interface
from autotune.specs.runstate import RunState


def term_factor(term: str, state: RunState) -> float:
    """The factor on one ECM term at a state."""
    iface = transfer_interface(term)
    return state.memory_factor if iface is not None and iface.endswith("-MEM") else state.clock_factor


def at_state(result: dict, state: RunState, numa_cores: int, socket_cores: int) -> dict:
    """An analysis' result priced at the run's state (a failed analysis, or one without terms, as it is)."""
    terms = result.get("terms")
    if not result.get("ok") or not terms:
        return result
    scaled = {term: value * term_factor(term, state) for term, value in terms.items()}
    return recombine(result, scaled, numa_cores, socket_cores, state.clock_factor)


def level_bandwidth(level: str, bandwidth_Bps: float, state: RunState) -> float:
    """A level's bandwidth (the file's, B/s) at the run's state: memory at the run's bandwidth,
    a cache at the clock ratio."""
    factor = state.memory_factor if level == "MEM" else state.clock_factor
    return bandwidth_Bps / factor


# a round whose reference kernels measured this far (in %) from the run's median is noisy: its
# runs are set aside and taken again (within a limit); the machine did not run as it usually does
NOISY_PCT = 15.0
MIN_PROBES = 3


def strays(probe: dict, probes: list[dict], threshold_pct: float = NOISY_PCT) -> str | None:
    """Why a probe ({"bandwidth_Bps", "clock_hz"}) strays from the median of `probes` (which
    include it), None where it does not: "bandwidth +23 %" or "clock -17 %".  Fewer than
    MIN_PROBES probes have no median to stray from."""
    if len(probes) < MIN_PROBES:
        return None
    for key, what in (("bandwidth_Bps", "bandwidth"), ("clock_hz", "clock")):
        mid = statistics.median(p[key] for p in probes)
        off = 100.0 * (probe[key] / mid - 1.0) if mid else 0.0
        if abs(off) > threshold_pct:
            return f"{what} {off:+.0f} %"
    return None


# a round whose runs lost more than this share of the host's CPU time to the hypervisor (steal) is
# set aside and taken again: an MPI step waits for its slowest rank, so a steal share slows the
# step by at least as much, above the run-to-run spread a pick can bear (docs/tuning.md#steal)
STEAL_MAX_PCT = 5.0


def steal_why(steal_pcts, threshold_pct: float = STEAL_MAX_PCT) -> str | None:
    """Why a round's runs (their steal shares, None: not measured) were taken from: "steal 7.3 %
    of the host's CPU time", None where no run lost more than the threshold."""
    worst = max((x for x in steal_pcts if x is not None), default=None)
    if worst is None or worst <= threshold_pct:
        return None
    return f"steal {worst:.1f} % of the host's CPU time"


def retake_limit(rounds: int) -> int:
    """How many noisy rounds a run takes again: one in three of its rounds, at least one."""
    return max(1, rounds // 3)

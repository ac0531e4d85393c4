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
"""
from __future__ import annotations

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

"""A fused sweep priced with its time measured as the solver runs it, in cache and in memory.  Pure.

A fused sweep (fuse=rhs-lc) is priced as the loops it runs over each tile (model.loops: the RHS
into a buffer of F, the linear combination reading it back, store=nt's copy of the new rows
with streaming stores), each analysed on its own.  What no analysis holds is still missing:
each tile restarts its loops and its streams, and the threads share memory in turns.  So the
solver's own sweep is timed (tools.sweep_bench) at a size where its data stays in a cache level (the measured level),
and at one where it streams from memory: seconds per execution of the sweep, all its RHS parts
together.

The model's figure for the same sweep at that level is each part's in-cache terms, the in-core
terms and the transfers between L1 and the measured level (`in_cache`), combined as kerncraft
combines them loop by loop, times the part's lines of work there, summed over the parts.  Where measurement
and model differ by more than TOLERANCE, those terms are scaled by one factor k = measured /
model in every regime the sweep is priced in (`scaled`): the prediction at the measured level is
then the measurement, and the transfers beyond it (the streams from L3 and memory, where the
sweep's vectors live at the real size) stay as analysed and combine with it by the machine's
rule (docs/node-model.md, "The fused sweeps as they run").  A sweep measured in memory is compared
with its whole priced time there (pipeline.sweepprice), and at that level every term is within:
k scales them all.
"""
from __future__ import annotations

from autotune.model.learned import combined, recombine, transfer_interface

TOLERANCE = 0.10
MEASURED = "measured"
ANALYSED = "analysed"


def within(term: str, level: int, names: tuple[str, ...]) -> bool:
    """Whether a term belongs to the in-cache time at cache level index `level` (names: the
    node's levels, "L1", "L2", ..., "MEM"): every term but a transfer into a level beyond it."""
    interface = transfer_interface(term)
    if interface is None:
        return True
    lower = interface.split("-")[1]
    return lower in names and names.index(lower) <= level


def in_cache(terms: dict[str, float], level: int, names: tuple[str, ...]) -> dict[str, float]:
    """The terms of the in-cache time with the data in level `level`."""
    return {t: v for t, v in terms.items() if within(t, level, names)}


def in_cache_cycles(result: dict, level: int, names: tuple[str, ...]) -> float | None:
    """The model's cycles per cache line of work of an analysed part with its data in `level`
    (None: a failed analysis, or one without terms)."""
    terms = result.get("terms")
    if not result.get("ok") or not terms:
        return None
    return combined(in_cache(terms, level, names))


def choose(measured_s: float | None, model_s: float | None, tolerance: float = TOLERANCE) -> tuple[str, str]:
    """(source, why) of the in-cache time a sweep is priced with."""
    if measured_s is None:
        return ANALYSED, "not measured"
    if not model_s or model_s <= 0.0:
        return MEASURED, "the analysis gives no figure"
    off = measured_s / model_s - 1.0
    if abs(off) > tolerance:
        return MEASURED, f"measured {100 * off:+.0f} % off the analysed loops (tolerance {100 * tolerance:.0f} %)"
    return ANALYSED, f"measured within {100 * tolerance:.0f} % of the analysed loops ({100 * off:+.0f} %)"


def scaled(result: dict, k: float, level: int, names: tuple[str, ...], numa_cores: int,
           socket_cores: int) -> dict:
    """The analysis with its in-cache terms at `level` scaled by k, recombined (a failed analysis,
    one without terms, or k = 1: as it is); its in-core cycles (t_comp) are kept."""
    terms = result.get("terms")
    if not result.get("ok") or not terms or k == 1.0:
        return result
    out = {t: v * k if within(t, level, names) else v for t, v in terms.items()}
    # t_comp stays the in-core time: the floor counts the step's arithmetic by it (model.bound)
    return recombine(result, out, numa_cores, socket_cores)

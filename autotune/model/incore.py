"""A kernel part's in-core time measured on the target, and how it enters the ECM model.  Pure.

The port model (OSACA) predicts a part's in-core time from its assembly: T_comp, the cycles of
the ports that overlap with data transfers, and T_RegL1, those of the load ports that do not.  In
the L1 regime kerncraft's single-core time is max(T_comp, T_RegL1): what a harness running the
part on an L1-resident working set measures (tools.incore_bench).  Where the two disagree, the
measurement is the truth of this CPU: the loop overhead, the dependencies between iterations,
the front end and a port model borrowed from another core are all in it.

How the measured time enters the model (docs/node-model.md, "The in-core time of each kernel
part"): both in-core terms are scaled by one factor k = measured / max(T_comp, T_RegL1), so that
the L1 prediction equals the measurement and the port model's split between overlapping and
non-overlapping work is kept; the transfer terms are untouched; the terms are then recombined as
kerncraft combines them (model.learned.recombine: the single-core time, the saturation point and
the multi-core curve).  On a machine whose file overlaps every transfer the split does not matter;
where transfers do not overlap, the non-overlapping share of the measured time adds to them, as
kerncraft adds T_RegL1.

Which one is used: the file's `in-core measured.when` says `always` (the port model is borrowed
from another core: only its structure is trusted) or `disagree` (the port model's figure stands
while the measurement is within `tolerance` of it).
"""
from __future__ import annotations

from autotune.model import sweeps as swmod
from autotune.model.learned import IN_CORE_TERMS, base_term, recombine, transfer_interface as transfer_of

MEASURED = "measured"
PORT_MODEL = "port model"


def port_cycles(result: dict) -> float | None:
    """The port model's in-core time of a successful analysis, cycles per cache line of work."""
    if not result.get("ok"):
        return None
    return max(float(result.get("t_comp") or 0.0), float(result.get("t_regl1") or 0.0))


def cycles_per_line(seconds_per_call: float, clock_hz: float, iterations: int, per_line: float) -> float:
    """A call's seconds as cycles per cache line of work (kerncraft's unit: `per_line` iterations of
    the loop nest, whose calls run `iterations`; a cache line's elements over the innermost loop's
    step)."""
    return seconds_per_call * clock_hz / (iterations / per_line)


def choose(port: float | None, measured: float | None, when: str, tolerance: float) -> tuple[str, str]:
    """(source, why) of the in-core time a part is priced with."""
    if measured is None:
        return PORT_MODEL, "not measured"
    if port is None or port <= 0.0:
        return MEASURED, "the port model gives no figure"
    if when == "always":
        return MEASURED, "the port model is borrowed from another core"
    off = measured / port - 1.0
    if abs(off) > tolerance:
        return MEASURED, f"measured {100 * off:+.0f} % off the port model (tolerance {100 * tolerance:.0f} %)"
    return PORT_MODEL, f"measured within {100 * tolerance:.0f} % of the port model ({100 * off:+.0f} %)"


def factor(t_comp: float, t_regl1: float, measured: float) -> float:
    """The one factor both in-core terms are scaled by so that the L1 time, max(T_comp, T_RegL1),
    is the measured one (1 where the port model gives no time)."""
    port = max(t_comp, t_regl1)
    return measured / port if port > 0.0 else 1.0


def with_measured(result: dict, measured: float, numa_cores: int, socket_cores: int) -> dict:
    """The analysis with its in-core terms scaled to the measured time, recombined."""
    port = port_cycles(result)
    terms = result.get("terms")
    if not port or not terms:
        return result
    k = factor(float(result.get("t_comp") or 0.0), float(result.get("t_regl1") or 0.0), measured)
    scaled = {t: v * k if base_term(t) in IN_CORE_TERMS else v for t, v in terms.items()}
    out = recombine(result, scaled, numa_cores, socket_cores, k)
    out["t_regl1"] = float(result.get("t_regl1") or 0.0) * k
    return out


def priced(result: dict, record: dict | None, when: str, tolerance: float, numa_cores: int,
           socket_cores: int) -> dict:
    """The analysis as it is priced: with the measured in-core time where `choose` says so, then
    with its time from L2 where that was measured (from_l2), and in every case an `incore` entry
    saying which source it used and what each one gave."""
    if not result.get("ok"):
        return result
    port = port_cycles(result)
    measured = record.get("cy_per_cl") if record else None
    source, why = choose(port, measured, when, tolerance)
    if record and record.get("error"):
        why = f"not measured: {record['error']}"
    out = with_measured(result, measured, numa_cores, socket_cores) if source == MEASURED else dict(result)
    entry = {"source": source, "why": why, "port_cy_per_cl": port, "measured_cy_per_cl": measured}
    l2 = (record or {}).get("l2") or {}
    if l2.get("cy_per_cl") and out.get("terms"):
        out, entry["l2"] = from_l2(out, float(l2["cy_per_cl"]), numa_cores, socket_cores)
    out["incore"] = entry
    return out


L2_LEVELS = ("L1", "L2")
L2_TOLERANCE = 0.10


def from_l2(result: dict, measured: float, numa_cores: int, socket_cores: int) -> tuple[dict, dict]:
    """The analysis with its time from L2 measured (the part's harness with its data in L2): where
    the model's (the in-core terms and the L1-L2 transfer, combined by the file's rule) is off by
    more than L2_TOLERANCE, those terms are scaled by k = measured / model in every regime beyond
    L1, the transfers beyond L2 kept (model.sweeps does the same for a fused sweep); how is the
    second value.  A result whose data stays in L1 is as it is."""
    terms = result["terms"]
    if not any(transfer_of(t) == "L1-L2" and v > 0 for t, v in terms.items()):
        return result, {"source": "not used", "why": "the data stays in L1", "measured_cy_per_cl": measured}
    model = swmod.in_cache_cycles(result, 1, L2_LEVELS)
    source, why = swmod.choose(measured, model, L2_TOLERANCE)
    k = measured / model if source == swmod.MEASURED and model else 1.0
    out = swmod.scaled(result, k, 1, L2_LEVELS, numa_cores, socket_cores) if k != 1.0 else result
    return out, {"source": source, "why": why.replace("analysed loops", "analysed part"),
                 "measured_cy_per_cl": measured, "model_cy_per_cl": model, "factor": k}

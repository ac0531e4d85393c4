"""Learned node parameters (specs.learned) applied to an analysis' result before it is priced:
each ECM term scaled by its parameter's factor, then recombined.  Pure.

The ECM structure is kerncraft's and stays: the single-core time is max(sum of the
non-overlapping terms, each overlapping term), the memory interface saturates after
kerncraft's own utilisation rule, and which terms a part has comes from its regime (a part whose
data lives in L2 has no L3 or memory term to scale).  A factor of 1 everywhere gives kerncraft's
numbers back.
"""
from __future__ import annotations

import math
import re

from autotune.arith import ordered_sum
from autotune.specs.learned import CLOCK, parameter

IN_CORE_TERMS = ("T_comp", "T_RegL1")
_TRANSFER = re.compile(r"^T_(L\d+)(L\d+|MEM)$")
OVERLAPPING = " (overlapping)"
LOOP_MARK = " @"     # "T_L1L2 (overlapping) @1": a term of the sweep's loop 1 (model.loops)


def term_parameter(term: str, kernel: str, bandwidth_kernel: str = "") -> str | None:
    """The parameter (specs.learned) that scales one ECM term of a part of this kernel group
    (None: none does, such as kerncraft's penalty cycles).  The transfer from main memory is
    priced by the bandwidth of the benchmark kernel kerncraft matched to the part's streams."""
    if base_term(term) in IN_CORE_TERMS:
        return parameter(kernel, "core")
    name = transfer_interface(term)
    if name is None:
        return None
    return parameter(kernel, f"{name}:{bandwidth_kernel}" if name.endswith("-MEM") and bandwidth_kernel else name)


def base_term(term: str) -> str:
    """A term's name without its loop and the overlapping mark ("T_comp (overlapping) @1" ->
    "T_comp")."""
    term = term.partition(LOOP_MARK)[0]
    return term[:-len(OVERLAPPING)] if term.endswith(OVERLAPPING) else term


def loop_groups(terms: dict[str, float]) -> list[dict[str, float]]:
    """The terms of each loop a result sums (model.loops: marked " @i"), in order of first
    appearance; a result of one loop is one group."""
    groups: dict[str, dict[str, float]] = {}
    for term, v in terms.items():
        name, _, loop = term.partition(LOOP_MARK)
        groups.setdefault(loop, {})[name] = v
    return list(groups.values())


def combined(terms: dict[str, float]) -> float:
    """kerncraft's single-core time of terms, max(sum of the non-overlapping ones, each
    overlapping one), per loop; the loops of a sweep run one after the other, so their times add
    (model.loops)."""
    out = []
    for group in loop_groups(terms):
        serial = [v for t, v in group.items() if not t.endswith(OVERLAPPING)]
        overlapping = [v for t, v in group.items() if t.endswith(OVERLAPPING)]
        out.append(max(ordered_sum(serial), *overlapping) if overlapping else ordered_sum(serial))
    return ordered_sum(out)


def memory_term(terms: dict[str, float]) -> float:
    """The transfer kerncraft's scaling counts as the memory interface's: its last (cycles[-1]);
    of terms of several loops, the sum of each loop's (recombine takes each loop's apart)."""
    last = []
    for group in loop_groups(terms):
        transfers = [v for t, v in group.items() if transfer_interface(t)]
        last.append(transfers[-1] if transfers else 0.0)
    return ordered_sum(last)


def term_parameters(term: str, kernel: str, bandwidth_kernel: str = "") -> tuple[str, ...]:
    """Every parameter that scales the term: its own, and the clock for the terms counted in core
    cycles (in-core and cache transfers; the memory transfer is bytes over a bandwidth, which the
    clock converts to cycles and back)."""
    own = term_parameter(term, kernel, bandwidth_kernel)
    if own is None:
        return ()
    return (own,) if ":" in own or own.endswith("-MEM") else (own, CLOCK)


def parameters_of(result: dict, kernel: str) -> set[str]:
    """The parameters that can change this analysis' time (its non-zero terms)."""
    out = set()
    for term, value in (result.get("terms") or {}).items():
        if value:
            out.update(term_parameters(term, kernel, bandwidth_kernel(result, term)))
    return out


def bandwidth_kernel(result: dict, term: str) -> str:
    """The benchmark kernel that prices a term's transfer from main memory: its loop's, where the
    result sums a sweep's loops (model.loops: `loop_bandwidth_kernels`), else the result's."""
    loop = term.partition(LOOP_MARK)[2]
    kernels = result.get("loop_bandwidth_kernels")
    if loop and kernels:
        return str(kernels[int(loop)] or "")
    return str(result.get("memory_bandwidth_kernel") or "")


def scaling(t_ecm: float, t_mem: float, numa_cores: int, socket_cores: int) -> tuple[float, list[float]]:
    """kerncraft's saturation point and multi-core prediction (cycles per cache line on 1, 2, ...
    cores) from the single-core time and the memory term, by its rule: core c adds c * T_MEM of
    memory-interface demand until that exceeds the single-core time plus the queueing of the
    cores before it."""
    if t_mem == 0.0:
        return math.inf, [t_ecm / c for c in range(1, socket_cores + 1)]
    util, saturated = [0], math.inf
    for c in range(1, numa_cores + 1):
        load = t_ecm + util[c - 1] * (c - 1) * t_mem / 2
        if c * t_mem > load:
            util.append(1.0)
            saturated = min(saturated, c)
        else:
            util.append(c * t_mem / load)
    util = util[1:]
    out = []
    for cores in range(1, socket_cores + 1):
        in_numa = t_ecm / (t_ecm / t_mem) if cores <= saturated else t_mem
        if cores <= numa_cores:
            out.append(in_numa / util[cores - 1])
        else:
            out.append(in_numa / util[numa_cores - 1] * numa_cores / cores)
    return saturated, out


def adjust(result: dict, kernel: str, factors: dict, numa_cores: int, socket_cores: int) -> dict:
    """An analysis' result with its terms scaled by the factors and recombined as kerncraft
    combines them (a failed analysis, or one without terms, as it is)."""
    terms = result.get("terms")
    if not result.get("ok") or not terms:
        return result
    scaled = {}
    for term, value in terms.items():
        v = value
        for p in term_parameters(term, kernel, bandwidth_kernel(result, term)):
            v = v * factors.get(p, 1.0)
        scaled[term] = v
    core = factors.get(parameter(kernel, "core"), 1.0) * factors.get(CLOCK, 1.0)
    return recombine(result, scaled, numa_cores, socket_cores, core)


def transfer_interface(term: str) -> str | None:
    """The interface of a transfer term ("L1-L2", ..., "L3-MEM"), None for any other term."""
    m = _TRANSFER.match(base_term(term))
    return f"{m.group(1)}-{m.group(2)}" if m else None


def recombine(result: dict, terms: dict, numa_cores: int, socket_cores: int, core: float = 1.0) -> dict:
    """The result with new ECM terms, combined as kerncraft combines them: the single-core time
    max(sum of the non-overlapping terms, each overlapping term), the saturation point and the
    multi-core curve after its utilisation rule; core scales the in-core cycles (t_comp).  Of a
    sweep's loops (model.loops): the single-core times and the curves summed loop by loop (the
    threads run their tiles' loops in step: each loop meets the others' demand on memory alone),
    the first core count at which a loop saturates."""
    t_ecm = combined(terms)
    # each loop's curve (one loop: the result's own); the cores run each loop together
    each = [scaling(combined(g), memory_term(g), numa_cores, socket_cores) for g in loop_groups(terms)]
    curve = [ordered_sum(c[k] for _, c in each) for k in range(socket_cores)]
    saturated = min(sat for sat, _ in each)
    out = dict(result, terms=dict(terms), cy_per_cl=t_ecm, saturation_cores=saturated,
               t_comp=float(result.get("t_comp") or 0.0) * core)
    if result.get("scaling_cy_per_cl"):
        out["scaling_cy_per_cl"] = curve[:len(result["scaling_cy_per_cl"])]
    return out

"""Render the online solver: one program that carries the pre-selected few variants and picks,
while the production run goes on, the one it goes on with (docs/online.md).  Pure.

The source has a part per variant (its module, variants/solver.c.j2, whose functions are its
own) and a part for the driver (variants/driver.c.j2 with online.c.j2): each part is compiled
on its own (-DAUTOTUNE_PART=k, k = 0 the driver, 1..K the variants) and the objects linked
(tools.build), as the header of the source says for a build by hand.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass

from autotune.codegen import parts as kmod
from autotune.codegen.solver import OUTPUT_ORDER, dimension_context, variant_module
from autotune.errors import InputError
from autotune.specs.control import Control, render_context
from autotune.specs.formula import to_c
from autotune.specs.ivp import IVP
from autotune.specs.machine import Machine
from autotune.specs.method import Method
from autotune.specs.variants import Variant, ivp_for

MAX_CANDIDATES = 8
TRIAL_PCT = 5          # a trial's steps at most, in % of the steps until the next trial (or the run's end)
CLEAR = 1.25           # a candidate this much slower than the leader in every timed round leaves at once


@dataclass(frozen=True)
class OnlineSolver:
    source: str
    parts: int                 # the parts to compile: the driver and one per candidate
    candidates: tuple[str, ...]
    name: str                  # what the solver's result line calls it


def online_name(candidates: list[str] | tuple[str, ...]) -> str:
    return f"online:{len(candidates)}"


def meta_of(ivp: IVP, method: Method, machine: Machine | None, flags: list[str] | tuple[str, ...],
            predicted_s: list[float | None], control: Control | None = None) -> dict:
    """What the run is, in its JSON: the scenario's keys the store files the candidates' runs under
    (the ranks, threads and n come from the run itself; a controlled run's tolerances too)."""
    return {"ivp": ivp.name, "method": method.name, "machine": machine.name if machine else None,
            "flags": list(flags), "predicted_s": list(predicted_s),
            **({"control": control.tolerances()} if control else {})}


def online_source(ivp: IVP, method: Method, variants: list[Variant], n: int, machine: Machine | None,
                  meta: dict, quantiles: list[float], margin_pct: float, trial_pct: int = TRIAL_PCT,
                  recheck: int = 0, control: Control | None = None, uneven: bool = False) -> OnlineSolver:
    """The online solver of `variants` (in the order the model ranks them: the trial's ties go to
    the first).  meta: meta_of's; quantiles: Student's t at the race's confidence for df = 1, 2,
    ... (one per round a trial may run), margin_pct: within it a candidate is as good as the
    leader (pipeline.online: model.race's); trial_pct and recheck: the defaults the run may
    change (AUTOTUNE_TRIAL_PCT, AUTOTUNE_RECHECK); control: step-size control (specs.control; the
    trial compares the candidates per accepted step); uneven: every candidate at the blocks
    AUTOTUNE_COUNTS gives (a mixed allocation's split: docs/method.md "Uneven blocks")."""
    names = [v.name for v in variants]
    if not 1 <= len(variants) <= MAX_CANDIDATES:
        raise InputError(f"expected 1 to {MAX_CANDIDATES} variants, got {len(variants)}", field="online")
    if len(set(names)) != len(names):
        raise InputError(f"a variant is named twice: {', '.join(names)}", field="online")
    if not 1 <= trial_pct <= 100:
        raise InputError(f"{trial_pct}: expected a whole percentage from 1 to 100", field="trial_pct")
    if recheck < 0:
        raise InputError(f"{recheck}: expected 0 (no re-check) or a number of steps", field="recheck")
    if len({v.stored_as for v in variants}) > 1:
        raise InputError(f"{', '.join(names)}: the variants store {ivp.name} in different ways; one solver "
                         f"holds its vector one way (pipeline.online keeps the leader's)", field="online")
    modules = [variant_module(ivp, method, v, n, machine, symbol=f"autotune_v{i}", control=control, uneven=uneven)
               for i, v in enumerate(variants, 1)]
    ivp = ivp_for(ivp, variants[0])     # the driver's initial values and constants: the IVP as they store it
    order = dimension_context(ivp, method, variants[0], machine, n).get(OUTPUT_ORDER)
    fragment = json.dumps(meta)[1:-1].replace("\\", "\\\\").replace('"', '\\"')
    candidates = [{"symbol": f"autotune_v{i}", "name": name} for i, name in enumerate(names, 1)]
    driver = kmod.env().get_template("driver.c.j2").render(
        part=True, online=True, likwid=False, control=render_context(control, method), uneven=uneven,
        candidates=candidates,
        variant=online_name(names),
        constants=_constants(ivp), initial=ivp.initial, size_parameter=ivp.size_parameter, output_order=order,
        tq=[repr(float(q)) for q in quantiles], clear=repr(CLEAR), margin=repr(1 + margin_pct / 100.0), meta=fragment, trial_pct=trial_pct, recheck=recheck)
    head = (f"/* generated by autotune: the online solver of {ivp.name}, {method.name}: {len(names)} variants\n"
            + "".join(f"     #{i} {name}\n" for i, name in enumerate(names, 1))
            + f"   Build each part on its own, then link them (FLAGS: the variants' build flags, -fopenmp among them):\n"
            f"     for k in {' '.join(str(k) for k in range(len(names) + 1))}; do mpicc $FLAGS -DAUTOTUNE_PART=$k -c "
            f"this.c -o part$k.o; done\n"
            f"     mpicc $FLAGS part*.o -o solver -lm\n"
            f"   Run as any variant's solver; AUTOTUNE_RECHECK, AUTOTUNE_TRIAL_PCT, AUTOTUNE_ONLINE_ONLY and\n"
            f"   AUTOTUNE_ONLINE_JSON change the trial, run one candidate alone, and name the JSON file. */\n")
    body = ["#if !defined(AUTOTUNE_PART) || AUTOTUNE_PART == 0\n", driver, "\n"]
    for i, text in enumerate(modules, 1):
        body += [f"#elif AUTOTUNE_PART == {i}   /* #{i} {names[i - 1]} */\n", text, "\n"]
    return OnlineSolver(head + "".join(body) + "#endif\n", len(names) + 1, tuple(names), online_name(names))


def _constants(ivp: IVP) -> list[dict]:
    return [{"name": k, "c_expr": to_c(v)} for k, v in ivp.constants]


def trial_steps(steps: int, candidates: int, trial_pct: int = TRIAL_PCT) -> int:
    """The most steps the first trial of a run takes (variants/online.c.j2: trial_begin; it starts
    at the run's second step; at least two rounds of every candidate)."""
    return max(math.ceil((steps - 1) * trial_pct / 100), 2 * candidates)

"""The sequence of one PIRK time step, derived from the method and the kernels.

One list of blocks of events is the single source for the counts the model
needs (kernel executions, communication phases, thread barriers) and for the
sequence of the generated solver's step (each event names the solver action
that implements it; variants/step.j2 holds their code).  Pure.

    predictor:  communicate y; barrier; F_1 = f(y) (one RHS sweep); barrier;
                F_l = F_1 for l = 2..s (s - 1 copies); barrier
    m times:    LC (first, acc, fin); barrier; communicate the s argument
                vectors; barrier; s RHS sweeps (or one over all s: rhs=onepass); barrier
    finish:     APPROX; UPDATE; barrier
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from autotune.specs.method import Method


@dataclass(frozen=True)
class Event:
    kind: str        # "kernel", "comm", "barrier"
    what: str        # kernel group (LC, RHS, COPY, APPROX, UPDATE), "vector" for comm, why for a barrier
    count: int = 1   # executions (argument vectors) per occurrence
    action: str = "" # the solver's code for it: a macro of variants/step.j2 ("" where another
                     # event's action covers it, or the end of a parallel region is the barrier)


@dataclass(frozen=True)
class Block:
    """A run of events, repeated (the corrector iteration runs m times)."""
    name: str
    events: tuple[Event, ...]
    repeat: int = 1


def _iteration(lc: Event, s: int, rhs: str) -> tuple[Event, ...]:
    f = Event("kernel", "RHS", s, "rhs_all") if rhs == "stages" else Event("kernel", "RHSALL", 1, "rhs_onepass")
    return (lc, Event("barrier", "after LC"), Event("comm", "vector", s, "communicate_all"),
            Event("barrier", "after comm"), f, Event("barrier", "after RHS"))


def _fused_blocks(s: int, m: int) -> list[Block]:
    """fuse=rhs-lc: every RHS sweep carries the kernel that consumes its F (the predictor's the
    first LC, from F_1 alone; the corrector's the next iteration's LC; the last one APPROX and
    UPDATE): 1 + m s RHS evaluations and communication phases as before, m + 1 sweeps."""
    comm_all = (Event("comm", "vector", s, "communicate_all"), Event("barrier", "after comm"))
    blocks = [Block("predictor, fused with the first LC", (Event("comm", "vector", 1, "communicate_y"),
                    Event("barrier", "after comm"), Event("kernel", "RHSLCD", 1, "rhs_lcd"),
                    Event("barrier", "after RHS+LC"))),
              Block("iteration, RHS fused with the next LC", comm_all + (Event("kernel", "RHSLC", 1, "rhs_lc"),
                    Event("barrier", "after RHS+LC")), m - 1),
              Block("last iteration, RHS fused with APPROX+UPDATE", comm_all + (
                    Event("kernel", "RHSAU", 1, "rhs_au"), Event("barrier", "after RHS+UPDATE")))]
    return [b for b in blocks if b.repeat > 0]


def step_blocks(method: Method, pred: str = "copy", au: str = "split", rhs: str = "stages",
                fuse: str = "none") -> list[Block]:
    """pred: 'copy' (F_l = F_1, then m iterations of LC) or 'direct' (the first iteration's LC
    from F_1 alone: Y_l = y + h c_l F_1); au: 'split' (APPROX then UPDATE) or 'fused'; rhs:
    'stages' (s RHS sweeps an iteration) or 'onepass' (one sweep over all s argument vectors,
    kernel group RHSALL); fuse: 'none' or 'rhs-lc' (the sweeps of _fused_blocks)."""
    s, m = method.stages, method.iterations
    if fuse == "rhs-lc":
        return _fused_blocks(s, m)
    predictor = [Event("comm", "vector", 1, "communicate_y"), Event("barrier", "after comm"),
                 Event("kernel", "RHS", 1, "rhs_first"), Event("barrier", "after RHS")]
    lc = Event("kernel", "LC", 1, "lc")
    if pred == "direct":
        blocks = [Block("predictor", tuple(predictor)),
                  Block("first iteration, from F_1", _iteration(Event("kernel", "LCD", 1, "lc_direct"), s, rhs)),
                  Block("iteration", _iteration(lc, s, rhs), m - 1)]
    else:
        if s > 1:
            predictor += [Event("kernel", "COPY", s - 1, "copy_first"), Event("barrier", "after COPY")]
        blocks = [Block("predictor", tuple(predictor)), Block("iteration", _iteration(lc, s, rhs), m)]
    finish = [Event("kernel", "APPROX", 1, "approx_update")]
    if au == "split":
        finish.append(Event("kernel", "UPDATE", 1))
    finish.append(Event("barrier", "after UPDATE"))
    return [b for b in blocks if b.repeat > 0] + [Block("finish", tuple(finish))]


def step_events(method: Method, pred: str = "copy", au: str = "split", rhs: str = "stages",
                fuse: str = "none") -> list[Event]:
    """Every event of one step in order (the repeated block written out)."""
    return [e for block in step_blocks(method, pred, au, rhs, fuse) for _ in range(block.repeat)
            for e in block.events]


@dataclass(frozen=True)
class StepCounts:
    executions: dict[str, int]   # kernel group -> executions per step
    comm_phases: int             # argument vectors communicated per step
    barriers: int
    exchanges: int = 0           # communication events (each followed by the sweep that reads them)


def step_counts(method: Method, pred: str = "copy", au: str = "split", rhs: str = "stages",
                fuse: str = "none") -> StepCounts:
    execs: Counter = Counter()
    comm = barriers = exchanges = 0
    for e in step_events(method, pred, au, rhs, fuse):
        if e.kind == "kernel":
            execs[e.what] += e.count
        elif e.kind == "comm":
            comm += e.count
            exchanges += 1
        else:
            barriers += e.count
    return StepCounts(dict(execs), comm, barriers, exchanges)

"""The sequence of one PIRK time step, derived from the method and the kernels.

One list of events is the single source for the counts the model needs
(kernel executions, communication phases, thread barriers); the solver
generator walks the same list.  Pure.

    predictor:  communicate y; barrier; F_1 = f(y) (one RHS sweep); barrier;
                F_l = F_1 for l = 2..s (s - 1 copies); barrier
    m times:    LC (first, acc, fin); barrier; communicate the s argument
                vectors; barrier; s RHS sweeps; barrier
    finish:     APPROX; UPDATE; barrier
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from autotune.specs.method import Method


@dataclass(frozen=True)
class Event:
    kind: str      # "kernel", "comm", "barrier"
    what: str      # kernel group (LC, RHS, COPY, APPROX, UPDATE) or "vector" for comm
    count: int = 1


def step_events(method: Method) -> list[Event]:
    s, m = method.stages, method.iterations
    ev = [Event("comm", "vector", 1), Event("barrier", "after comm"), Event("kernel", "RHS", 1),
          Event("barrier", "after RHS")]
    if s > 1:
        ev += [Event("kernel", "COPY", s - 1), Event("barrier", "after COPY")]
    for _ in range(m):
        ev += [Event("kernel", "LC", 1), Event("barrier", "after LC"), Event("comm", "vector", s),
               Event("barrier", "after comm"), Event("kernel", "RHS", s), Event("barrier", "after RHS")]
    ev += [Event("kernel", "APPROX", 1), Event("kernel", "UPDATE", 1), Event("barrier", "after UPDATE")]
    return ev


@dataclass(frozen=True)
class StepCounts:
    executions: dict[str, int]   # kernel group -> executions per step
    comm_phases: int
    barriers: int


def step_counts(method: Method) -> StepCounts:
    execs: Counter = Counter()
    comm = barriers = 0
    for e in step_events(method):
        if e.kind == "kernel":
            execs[e.what] += e.count
        elif e.kind == "comm":
            comm += e.count
        else:
            barriers += e.count
    return StepCounts(dict(execs), comm, barriers)

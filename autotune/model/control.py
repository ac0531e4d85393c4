"""Step-size control priced (docs/method.md, "Step-size control"): what a controlled run adds to
each accepted step.  Pure functions of plain numbers.

An attempt of a step is the step itself, then the control's own work on the node's block:

    save    y copied aside before the step (a redo starts from it): one vector read, one
            written, its lines allocated first (24 bytes a component, as kerncraft counts a copy);
            the pipelined step writes the new y beside y and keeps it: no save
    norm    the weighted error of the new y against Y_s^(m), reduced by the threads: a sweep of
            its own (norm=sweep) reads three vectors (y, the saved y, Y_s: 24 bytes a
            component); fused into the sweep that writes the new y (norm=fused) it reads Y_s
            there besides (8 bytes a component); the pipelined step's last level sums it from
            the tile it has just written (no traffic)
    reduce  MPI_Allreduce of one double over the p nodes (the network's `allreduce`: its fit
            where calibrate measured it, else the data sheet's latency rounds); a nonblocking
            one (reduce=nonblocking) runs while the new y is saved for the next step, so only
            what the save does not cover, max(0, reduce - save), is added

and a rejected attempt is redone after y is copied back (restore: a copy), from y as the save
still holds it (no save again; a nonblocking reduction's copy of the new y is made on every
attempt).  With r rejected attempts per accepted step (the rate a run reported; 0 where none did):

    per accepted step = (1 + r) (step + norm + reduce) + k save + r restore

with k = 1, or 1 + r for a nonblocking reduction.  The reduction's progress during the copy rests
on the master thread's MPI_Test after each of its four pieces (no asynchronous progress): at many
ranks, whose allreduce takes ceil(log2 p) rounds, the copy may hide less than the price says.

The sweeps move their bytes at the bandwidth of the level that holds the node's vectors (the
smallest cache whose node share holds the three of them, else memory), on the node's busy cores.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

DOUBLE = 8
SAVE_BYTES = 3 * DOUBLE        # per component: read y, allocate and write the copy
NORM_BYTES = 3 * DOUBLE        # per component: y, the saved y, Y_s
FUSED_NORM_BYTES = DOUBLE      # per component: Y_s, read by the sweep that writes the new y
REDUCE_BYTES = DOUBLE          # the one double each rank adds


@dataclass(frozen=True)
class ControlCost:
    """Seconds of the control's own work per attempt, and the rejected attempts per accepted step."""
    save_s: float
    norm_s: float
    reduce_s: float
    restore_s: float
    rejected: float = 0.0
    level: str = "MEM"          # where the sweeps' data is
    overlapped: bool = False    # the reduction runs while the new y is saved (reduce=nonblocking)

    @property
    def exposed_reduce_s(self):
        """The reduction's seconds the step waits for: all of them, or what the save leaves."""
        return np.maximum(self.reduce_s - self.save_s, 0.0) if self.overlapped else self.reduce_s

    @property
    def attempt_s(self) -> float:
        return self.save_s + self.norm_s + self.exposed_reduce_s

    def per_accepted(self, step_s):
        """Seconds per accepted step of a step that takes step_s (a number or an array): a redo
        starts from the y it restored, which the save still holds (no save again), but a
        nonblocking reduction copies the new y on every attempt."""
        saves = 1.0 + self.rejected if self.overlapped else 1.0
        return (1.0 + self.rejected) * (step_s + self.attempt_s - self.save_s) + saves * self.save_s \
            + self.rejected * self.restore_s

    def added(self, step_s):
        """What the control adds to a step of step_s: per_accepted less the step."""
        return self.per_accepted(step_s) - step_s

    def to_dict(self) -> dict:
        return {"save_s": self.save_s, "norm_s": self.norm_s, "reduce_s": self.reduce_s,
                "exposed_reduce_s": float(self.exposed_reduce_s), "restore_s": self.restore_s,
                "rejected_per_step": self.rejected, "level": self.level, "overlapped": self.overlapped}


def data_level(node_bytes: float, caches, cores: int) -> str:
    """The smallest cache level whose share for `cores` cores holds node_bytes, else "MEM".
    caches: the machine's levels (name, bytes_per_group, cores_per_group), in order."""
    for c in caches:
        groups = max(1, math.ceil(cores / c.cores_per_group))
        if node_bytes <= c.bytes_per_group * groups:
            return c.name
    return "MEM"


def control_cost(n_local: int, ranks_per_node: int, nodes: int, cores: int, caches,
                 bandwidth: Callable[[str, int], float | None], op_seconds: Callable[[str, float, int], float],
                 windowed: bool, rejected: float = 0.0, fused: bool = False, overlapped: bool = False) -> ControlCost:
    """The control's cost on a node of `ranks_per_node` ranks of n_local components each, busy on
    `cores` cores, at `nodes` ranks in all.  windowed: the pipelined step keeps y and sums the
    norm in its last level; fused: the sweep that writes the new y sums the norm; overlapped: the
    reduction runs while the new y is saved."""
    comps = n_local * ranks_per_node
    level = data_level(3 * DOUBLE * comps, caches, cores)
    rate = bandwidth(level, cores) or bandwidth("MEM", cores)
    copy = SAVE_BYTES * comps / rate
    norm = 0.0 if windowed else (FUSED_NORM_BYTES if fused else NORM_BYTES) * comps / rate
    reduce = op_seconds("allreduce", REDUCE_BYTES, nodes) if nodes > 1 else 0.0
    return ControlCost(0.0 if windowed else copy, norm, reduce, copy, rejected, level, overlapped and not windowed)


def scenario_cost(sc, windowed: bool, op_seconds: Callable[[str, float, int], float],
                  **shape) -> ControlCost | None:
    """control_cost of a scenario (specs.scenario.Scenario; None: it has a fixed step), on the
    slowest node (ceil(n / nodes) components a rank), for a variant of this shape (fused,
    overlapped: pipeline.layout.control_shape)."""
    if sc.control is None:
        return None
    m = sc.machine
    return control_cost(sc.n_local, sc.ranks_per_node, sc.nodes, sc.node_threads, m.caches,
                        m.bandwidth, op_seconds, windowed, sc.control.rejected, **shape)

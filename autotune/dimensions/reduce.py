"""reduce: how a controlled step's error is reduced over the ranks (docs/method.md, "Step-size
control"): a blocking MPI_Allreduce, or a non-blocking one the save of the new y overlaps."""
from __future__ import annotations

from autotune.specs.dimension import Dimension, values


def _render(value: str, _) -> dict:
    return {"reduce_overlapped": value == "nonblocking"}


def _priced(value: str) -> dict:
    return {"overlapped": value == "nonblocking"}


DIMENSION = Dimension(
    "reduce", 150,
    values(["none"], "solver.c.j2:reduce_overlapped (none: a fixed step, no reduction)")
    + values(["blocking"], "solver.c.j2:reduce_overlapped (false: MPI_Allreduce, then the decision)")
    + values(["nonblocking"], "solver.c.j2:reduce_overlapped", pipe="none"), "none",
    "reduction of a controlled step's error over the ranks: none (a fixed step), a blocking "
    "MPI_Allreduce (blocking), or MPI_Iallreduce while the new y is saved for the next step, the "
    "decision taken after (nonblocking; a rejection restores y from the save before)",
    render=_render, control=_priced, paper=("none", "blocking"))

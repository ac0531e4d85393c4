"""buf: where the argument vectors live, copied into the communication buffer or in it."""
from __future__ import annotations

from autotune.specs import methodparts as mp
from autotune.specs.dimension import Dimension, values


def _pack(d, _: str) -> None:
    d.pack = mp.pack_spec()


def _ghost(d, _: str) -> None:
    d.pack = None


def _render(value: str, _) -> dict:
    return {"ghost": value == "ghost"}


DIMENSION = Dimension(
    "buf", 50, values(["pack"], "kernels.j2:pack") + values(["ghost"], "solver.c.j2:ghost"), "pack",
    "where the argument vectors live: copied into the communication buffer before every "
    "exchange (pack), or in it, with room for the halos, written there by LC (ghost)",
    step={"pack": _pack, "ghost": _ghost}, writes=("pack",), render=_render)

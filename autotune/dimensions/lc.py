"""lc: the linear combination's form, one of the paper's loop orders or a one-pass form."""
from __future__ import annotations

from itertools import permutations

from autotune.specs import methodparts as mp
from autotune.specs.dimension import Dimension, values

LOOPS = ("i", "j", "l")   # summand, component, argument vector
ONE_PASS_SUFFIX = "-onepass"
ORDERS = tuple(sorted("".join(p) for p in permutations(LOOPS)))
ONE_PASS = tuple(f"{a}{b}{ONE_PASS_SUFFIX}" for a, b in (("j", "l"), ("l", "j")))


def orders() -> list[str]:
    """Every order of the LC loop set, outermost first (6 for three loops): the paper's forms,
    which accumulate the stage sum over separate sweeps."""
    return list(ORDERS)


def one_pass_orders() -> list[str]:
    """The one-pass forms: the orders of the argument-vector and component loops with the stage
    sum rendered inside (s is a literal), each F_i and y read and each Y_l written in one sweep."""
    return list(ONE_PASS)


def all_values() -> list[str]:
    """Every value of the lc dimension: the paper's six orders, then the one-pass forms."""
    return orders() + one_pass_orders()


def specs(s: int, value: str) -> tuple[mp.PartSpec, ...]:
    """The LC's parts of a value: its loop order, one pass where it ends in -onepass."""
    if value.endswith(ONE_PASS_SUFFIX):
        return mp.lc_specs(s, value[:-len(ONE_PASS_SUFFIX)], one_pass=True)
    return mp.lc_specs(s, value)


def _step(d, order: str) -> None:
    d.lc = specs(d.s, order)


def _render(order: str, r) -> dict:
    return {"lc": order, "lc_parts": r.parts.lc_parts(r.method, order)}


DIMENSION = Dimension(
    "lc", 10,
    values(ORDERS, "kernels.j2:lc_first,lc_acc,lc_fin (order {})") + values(ONE_PASS, "kernels.j2:lc_onepass ({})"),
    None, "linear combination: loop order, or a one-pass form",
    step={v: _step for v in ORDERS + ONE_PASS}, writes=("lc",), render=_render, paper=ORDERS)

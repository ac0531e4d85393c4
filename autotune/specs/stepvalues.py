"""The step form of a variant, built from what each of its step-shaping values contributes
(specs.dimension: a dimension's `step` hook; the contributions live in autotune.dimensions).  Pure.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable, Iterable

from autotune.specs.dimension import Dimension, step_order
from autotune.specs.method import Method
from autotune.specs.step import Draft, StepForm
from autotune.specs.variants import DIMENSIONS, Variant

# The step-shaping dimensions in the order their hooks run (from their declarations: step_order)
HOOK_ORDER = step_order(DIMENSIONS.values())


@lru_cache(maxsize=1)
def step_keys() -> tuple[str, ...]:
    """The dimensions that shape the step, in position order (the others change only the code
    around it; DIMENSIONS is fixed once discovered)."""
    return tuple(k for k, d in DIMENSIONS.items() if d.step)


def step_form(method: Method, variant: Variant) -> StepForm:
    """The step of `variant` under `method` (built once per method and step-shaping values)."""
    return form_of(method, tuple(getattr(variant, k) for k in step_keys()))


@lru_cache(maxsize=512)
def form_of(method: Method, values: tuple[str, ...]) -> StepForm:
    """The step form of the step-shaping values (in step_keys() order)."""
    fields = dict(zip(step_keys(), values))
    return build(Draft(method, fields), [(DIMENSIONS[k], fields[k]) for k in HOOK_ORDER])


def build(d: Draft, hooks: Iterable[tuple[Dimension, str]]) -> StepForm:
    """The step form of a Draft once each (dimension, value) of `hooks` has contributed, in that
    order.  A hook, and the skeleton and own_parts a dimension installs, may change only the
    fields its dimension declares it writes: another is an error."""
    owner: dict[str, Dimension] = {}        # field -> the dimension that last wrote it
    for dim, value in hooks:
        contribution = dim.step.get(value)
        if contribution is None:
            raise ValueError(f"no step contribution for {dim.key}={value}")
        owner.update(dict.fromkeys(_watched(dim, d, contribution, d, value)[1], dim))
    if "skeleton" not in owner or "own_parts" not in owner:
        raise ValueError("no step hook lays out the step (writes skeleton and own_parts)")
    # after every contribution: the skeleton may settle what several decide (the sets)
    blocks = _watched(owner["skeleton"], d, d.skeleton, d)[0]
    parts = _watched(owner["own_parts"], d, d.own_parts, d)[0]
    return StepForm(d.method.stages, tuple(d.values.items()), blocks, parts, d.sets)


def _watched(dim: Dimension, d: Draft, call: Callable, *args) -> tuple[Any, list[str]]:
    """call(*args) with the Draft's fields compared before and after: its result and the fields
    it changed, each one that `dim` declares it writes."""
    before = dict(vars(d))
    out = call(*args)
    now = vars(d)
    changed = [k for k in now if k not in before or now[k] is not before[k]]
    wrong = next((k for k in changed if k not in dim.writes), None)
    if wrong:
        raise ValueError(f"dimension {dim.key!r} writes {wrong!r} to the step's Draft, which it does not "
                         f"declare (writes: {', '.join(dim.writes)})")
    return out, changed

"""The step form of a variant, built from what each of its step-shaping values contributes
(specs.dimension: a dimension's `step` hook; the contributions live in autotune.dimensions).  Pure.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Iterable

from autotune.specs.dimension import Dimension, step_order
from autotune.specs.method import Method
from autotune.specs.step import Draft, StepForm
from autotune.specs.variants import DIMENSIONS, Variant

# The step-shaping dimensions in the order their hooks run (from their declarations: step_order)
HOOK_ORDER = step_order(DIMENSIONS.values())


def step_keys() -> tuple[str, ...]:
    """The dimensions that shape the step, in position order (the others change only the code
    around it)."""
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
    order."""
    for dim, value in hooks:
        contribution = dim.step.get(value)
        if contribution is None:
            raise ValueError(f"no step contribution for {dim.key}={value}")
        contribution(d, value)
    blocks = d.skeleton(d)      # after every contribution: it may settle what several decide (the sets)
    return StepForm(d.method.stages, tuple(d.values.items()), blocks, d.own_parts(d), d.sets)

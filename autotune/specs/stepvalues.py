"""The step form of a variant, built from what each of its step-shaping values contributes
(specs.dimension: a dimension's `step` hook; the contributions live in autotune.dimensions).  Pure.
"""
from __future__ import annotations

from functools import lru_cache

from autotune.specs.method import Method
from autotune.specs.step import Draft, StepForm
from autotune.specs.variants import DIMENSIONS, Variant


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
    d = Draft(method, fields)
    for key, value in fields.items():
        contribution = DIMENSIONS[key].step.get(value)
        if contribution is None:
            raise ValueError(f"no step contribution for {key}={value}")
        contribution(d, value)
    blocks = d.skeleton(d)      # after every contribution: it may settle what several decide (the sets)
    return StepForm(method.stages, tuple(fields.items()), blocks, d.own_parts(d), d.sets)

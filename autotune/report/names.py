"""Variant names sized for a terminal: the values the rows of a table share are said once, above
it, and each row names only the values in which it differs from them.  Pure; CSV and JSON keep
the full names.

The full name of a row is the variant of the shared values, overridden by the row's (a dimension
named by neither is at its default, as in every name): "lc=jli,au=split" under the shared
"lc=jl-onepass,comm=neighbour,au=fused" is lc=jli,comm=neighbour.
"""
from __future__ import annotations

from autotune.specs.variants import DIMENSIONS, Variant

NOTHING = "-"    # a row with exactly the shared values


def shared_values(variants: list[Variant]) -> dict[str, str]:
    """The values that every one of `variants` has and its name says (a value at its dimension's
    default is left out of names, so of this too), in position order; {} for none."""
    if not variants:
        return {}
    first = variants[0].fields()
    return {k: v for k, v in first.items()
            if v != DIMENSIONS[k].default and all(getattr(x, k) == v for x in variants[1:])}


def short_name(variant: Variant, shared: dict[str, str]) -> str:
    """The variant's key=value items that differ from the shared values (and, for a dimension they
    do not name, from its default), in position order; NOTHING where none does."""
    items = [f"{k}={v}" for k, v in variant.fields().items() if v != shared.get(k, DIMENSIONS[k].default)]
    return ",".join(items) or NOTHING

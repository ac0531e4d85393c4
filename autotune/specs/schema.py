"""A small JSON-Schema-subset validator for our data files.

It supports what our schemas use (type, required, properties,
additionalProperties, items, prefixItems, enum, minimum, exclusiveMinimum,
maximum, exclusiveMaximum, minItems, pattern, and the annotations title,
description, $schema, $id) and reports the first problem as (field path,
expectation).  A schema with any other keyword is refused (check_keywords):
a keyword this validator skipped would pass what it was meant to stop.
We keep it in-house because the full jsonschema package costs more start-up
time than a warm `autotune rank` may spend in total.

One keyword of our own: "quantity" names a kind of units.QUANTITIES ("size"):
the value is a number in the base unit or kerncraft's text ('32 kB'), and
minimum / exclusiveMinimum bound its value in the base unit; "names" lists
words allowed in its place ('full socket memory bandwidth').
"""
from __future__ import annotations

import re

from autotune.specs.units import QUANTITIES, kerncraft_form, quantity

_TYPES = {
    "object": dict,
    "array": list,
    "string": str,
    "boolean": bool,
}


def _type_ok(value, expected: str) -> bool:
    if expected == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if expected == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if expected == "null":
        return value is None
    return isinstance(value, _TYPES[expected])


# how a message words a bound of 0: "expected a positive size"
_BOUND_WORDS = {"exclusiveMinimum": ("positive", ">"), "minimum": ("non-negative", ">="),
                "exclusiveMaximum": ("negative", "<"), "maximum": ("non-positive", "<=")}
_BREAKS = {"exclusiveMinimum": lambda x, b: x <= b, "minimum": lambda x, b: x < b,
           "exclusiveMaximum": lambda x, b: x >= b, "maximum": lambda x, b: x > b}

# every keyword first_error reads ("quantity" and "names": ours), and the annotations it may skip
KEYWORDS = frozenset({"type", "required", "properties", "additionalProperties", "items", "prefixItems",
                      "enum", "minItems", "pattern", "quantity", "names", *_BOUND_WORDS})
ANNOTATIONS = frozenset({"title", "description", "$schema", "$id", "$comment", "default", "examples"})


def check_keywords(schema, path: tuple = ()) -> None:
    """Raise ValueError naming the first keyword of schema (and its sub-schemas) that
    first_error does not implement."""
    if not isinstance(schema, dict):
        raise ValueError(f"schema at {'/'.join(map(str, path)) or '(top)'}: expected an object")
    for key, sub in schema.items():
        where = path + (key,)
        if key not in KEYWORDS and key not in ANNOTATIONS:
            raise ValueError(f"schema keyword {key!r} at {'/'.join(map(str, path)) or '(top)'} "
                             f"is not implemented (specs.schema)")
        if key == "properties":
            for name, prop in sub.items():
                check_keywords(prop, where + (name,))
        elif key in ("items", "additionalProperties") and isinstance(sub, dict):
            check_keywords(sub, where)
        elif key == "prefixItems":
            for i, item in enumerate(sub):
                check_keywords(item, where + (i,))


def _bound_error(number: float, schema: dict) -> tuple[str, str, float] | None:
    """(keyword, operator, bound) of the first bound that number breaks."""
    for key, (_, op) in _BOUND_WORDS.items():
        bound = schema.get(key)
        if bound is not None and _BREAKS[key](number, bound):
            return key, op, bound
    return None


def _quantity_error(value, schema: dict) -> str | None:
    kind = QUANTITIES[schema["quantity"]]
    names = schema.get("names", ())
    if isinstance(value, str) and value in names:
        return None
    try:
        number = quantity(value, schema["quantity"])
    except ValueError:
        alt = "".join(f" or {n!r}" for n in names)
        return f"expected a {kind.what} such as {kind.example!r}{alt}, got {value!r}"
    broken = _bound_error(number, schema)
    if broken:
        key, op, bound = broken
        wanted = _BOUND_WORDS[key][0] + f" {kind.what}" if bound == 0 else f"{kind.what} {op} {bound:g}"
        return f"expected a {wanted}, got {value!r}"
    if not kerncraft_form(value):
        return f"expected a {kind.what} such as {kind.example!r} (a number, a space, the unit), got {value!r}"
    return None


def first_error(value, schema: dict, path: tuple = ()) -> tuple[tuple, str] | None:
    """Return (path, message) for the first violation, or None if valid."""
    expected = schema.get("type")
    kinds = [] if expected is None else expected if isinstance(expected, list) else [expected]
    if kinds and not any(_type_ok(value, k) for k in kinds):
        bounds = [f" {op} {schema[k]}" for k, (_, op) in _BOUND_WORDS.items() if k in schema]
        if kinds == ["integer"] and bounds:     # a count: "expected an integer >= 1, got 2.5"
            return path, f"expected an integer{bounds[0]}, got {value!r}"
        return path, f"expected {' or '.join(kinds)}, got {type(value).__name__} {value!r}"
    if "enum" in schema and value not in schema["enum"]:
        return path, f"expected one of {schema['enum']}, got {value!r}"
    if "quantity" in schema:
        message = None if value is None and "null" in kinds else _quantity_error(value, schema)
        return (path, message) if message else None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        broken = _bound_error(value, schema)
        if broken:
            noun = "an integer" if "integer" in kinds and "number" not in kinds else "a number"
            return path, f"expected {noun} {broken[1]} {broken[2]}, got {value!r}"
    if isinstance(value, str) and "pattern" in schema and not re.search(schema["pattern"], value):
        return path, f"expected a string matching {schema['pattern']!r}, got {value!r}"
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            return path, f"expected at least {schema['minItems']} item(s)"
        prefix = schema.get("prefixItems", [])
        for i, item in enumerate(value):
            sub = prefix[i] if i < len(prefix) else schema.get("items")
            err = first_error(item, sub, path + (i,)) if sub is not None else None
            if err:
                return err
    if isinstance(value, dict):
        for key in schema.get("required", []):
            if key not in value:
                return path + (key,), "required field is missing"
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        for key, item in value.items():
            where = path + (str(key),)      # a key 1 is a name, not a list index
            if key in props:
                err = first_error(item, props[key], where)
            elif extra is False:
                err = (where, f"unknown field (allowed: {', '.join(sorted(props))})")
            elif isinstance(extra, dict):
                err = first_error(item, extra, where)
            else:
                err = None
            if err:
                return err
    return None

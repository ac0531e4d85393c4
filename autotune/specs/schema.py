"""A small JSON-Schema-subset validator for our data files.

It supports what our schemas use (type, required, properties,
additionalProperties, items, enum, minimum, exclusiveMinimum, minItems,
pattern) and reports the first problem as (field path, expectation).  We keep
it in-house because the full jsonschema package costs more start-up time than
a warm `autotune rank` may spend in total.
"""
from __future__ import annotations

import re

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


def first_error(value, schema: dict, path: tuple = ()) -> tuple[tuple, str] | None:
    """Return (path, message) for the first violation, or None if valid."""
    expected = schema.get("type")
    if expected is not None:
        kinds = expected if isinstance(expected, list) else [expected]
        if not any(_type_ok(value, k) for k in kinds):
            return path, f"expected {' or '.join(kinds)}, got {type(value).__name__} {value!r}"
    if "enum" in schema and value not in schema["enum"]:
        return path, f"expected one of {schema['enum']}, got {value!r}"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            return path, f"expected a number >= {schema['minimum']}, got {value!r}"
        if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
            return path, f"expected a number > {schema['exclusiveMinimum']}, got {value!r}"
    if isinstance(value, str) and "pattern" in schema and not re.search(schema["pattern"], value):
        return path, f"expected a string matching {schema['pattern']!r}, got {value!r}"
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            return path, f"expected at least {schema['minItems']} item(s)"
        if "items" in schema:
            for i, item in enumerate(value):
                err = first_error(item, schema["items"], path + (i,))
                if err:
                    return err
    if isinstance(value, dict):
        for key in schema.get("required", []):
            if key not in value:
                return path + (key,), "required field is missing"
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        for key, item in value.items():
            if key in props:
                err = first_error(item, props[key], path + (key,))
            elif extra is False:
                err = (path + (key,), f"unknown field (allowed: {', '.join(sorted(props))})")
            elif isinstance(extra, dict):
                err = first_error(item, extra, path + (key,))
            else:
                err = None
            if err:
                return err
    return None

"""Our data files' schemas as JSON Schema (draft 2020-12) documents, for editors and other tools
(docs/usage.md#schemas).  Pure.

The validator (specs.schema) reads a subset of JSON Schema plus one keyword of our own,
"quantity" (a number in the base unit, or kerncraft's text such as '2.4 GHz', with "names" allowed
in its place): here it becomes an anyOf of the number with its bounds, the text by its pattern,
and the names.  Every other keyword is JSON Schema's own and is copied as it is."""
from __future__ import annotations

import re

from autotune.specs.units import QUANTITIES

DIALECT = "https://json-schema.org/draft/2020-12/schema"
_BOUNDS = ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum")
_NUMBER = r"(?:\d+(?:\.\d+)?|inf)"
_PREFIX = "[kMGTP]?"


def _quantity(schema: dict) -> dict:
    kind = QUANTITIES[schema["quantity"]]
    types = schema.get("type", [])
    types = [types] if isinstance(types, str) else list(types)
    text = {"type": "string", "pattern": f"^{_NUMBER} {_PREFIX}{re.escape(kind.unit)}$"}
    options = [dict({"type": "number"}, **{k: schema[k] for k in _BOUNDS if k in schema}), text]
    if schema.get("names"):
        options.append({"enum": list(schema["names"])})
    if "null" in types:
        options.append({"type": "null"})
    return {"description": f"a {kind.what}: a number in {kind.unit}, or text such as '{kind.example}'",
            "anyOf": options}


def convert(schema):
    """One of our schemas (or a part of it) in JSON Schema's own keywords."""
    if not isinstance(schema, dict):
        return schema
    if "quantity" in schema:
        return _quantity(schema)
    out = {}
    for key, sub in schema.items():
        if key == "properties":
            out[key] = {name: convert(prop) for name, prop in sub.items()}
        elif key in ("items", "additionalProperties") and isinstance(sub, dict):
            out[key] = convert(sub)
        elif key == "prefixItems":
            out[key] = [convert(s) for s in sub]
        else:
            out[key] = sub
    return out


def json_schema(name: str, version: int, title: str, schema: dict) -> dict:
    """The whole document: dialect, identity (a URN: name and version), title and the schema."""
    return {"$schema": DIALECT, "$id": f"urn:autotune:schema:{name}:v{version}", "title": title,
            **convert(schema)}

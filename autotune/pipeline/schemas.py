"""The data files a user writes, by name, with their schemas: what `autotune schema NAME`
prints and the package ships as JSON Schema files (autotune/data/schemas, kept equal to these by
a test; docs/usage.md#schemas)."""
from __future__ import annotations

import json

from autotune.errors import InputError
from autotune.pipeline.plan import FILE_SCHEMA
from autotune.specs import ivp, machine_schema, method
from autotune.specs.schemafiles import json_schema

# name -> (version: raised when a file valid before is refused, what the file is, its schema)
SCHEMAS = {
    "machine": (1, "autotune machine file: kerncraft's machine description and a cluster section",
                machine_schema.SCHEMA),
    "ivp": (1, "autotune IVP file: an initial value problem's right-hand side", ivp.SCHEMA),
    "method": (1, "autotune method file: a PIRK method's Butcher tableau", method.SCHEMA),
    "plan": (1, "autotune scenarios file: the batch `autotune plan` pre-selects for", FILE_SCHEMA),
}


def schema_document(name: str) -> dict:
    if name not in SCHEMAS:
        raise InputError(f"{name!r}: expected one of {', '.join(SCHEMAS)}", field="name")
    version, title, schema = SCHEMAS[name]
    return json_schema(name, version, title, schema)


def schema_text(name: str) -> str:
    """The document as the shipped file holds it."""
    return json.dumps(schema_document(name), indent=2) + "\n"

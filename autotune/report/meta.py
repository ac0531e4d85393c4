"""What every JSON document the command line writes says about itself, in its first field
`meta`: the document's schema and version, when it was made (UTC), the versions of autotune, the
analysis libraries and Python, and the machine file it rests on (its name and the SHA-256 of its
text) where the result has one (docs/usage.md#json-output).  A script that keeps results can tell
which runs are comparable; the rest of the document is the result's to_dict()."""
from __future__ import annotations

import json
import sys
from datetime import datetime, timezone

SCHEMA_VERSION = 1       # of every document's layout: a field renamed or removed raises it


def machine_of(result):
    """The Machine a result rests on (None: it has none, or only a name)."""
    for path in (("scenario", "machine"), ("ranking", "scenario", "machine"), ("results", 0, "scenario", "machine")):
        obj = result
        for step in path:
            try:
                obj = obj[step] if isinstance(step, int) else getattr(obj, step)
            except (AttributeError, IndexError, KeyError, TypeError):
                obj = None
                break
        if obj is not None and hasattr(obj, "kerncraft_digest"):
            return obj
    return None


def document_meta(result, now: datetime | None = None) -> dict:
    from autotune.tools.toolchain import package_version
    machine = machine_of(result)
    name = machine.name if machine else getattr(result, "machine", None)
    digest = machine.sha256 if machine else getattr(result, "machine_sha256", None)
    return {"schema": f"autotune/{type(result).__name__}", "schema_version": SCHEMA_VERSION,
            "created": (now or datetime.now(timezone.utc)).isoformat(timespec="seconds"),
            "versions": {"autotune": package_version("autotune"), "kerncraft": package_version("kerncraft"),
                         "osaca": package_version("osaca"), "python": ".".join(map(str, sys.version_info[:3]))},
            "machine": {"name": name, "sha256": digest or None} if isinstance(name, str) else None}


def with_meta(text: str, result) -> str:
    """A JSON object's text with `meta` as its first field (the text's own layout kept)."""
    if not text.startswith("{"):
        return text
    head = f'"meta": {json.dumps(document_meta(result))}'
    rest = text[1:].lstrip(" ")
    if rest.startswith("}"):
        return "{" + head + rest
    nl = "\n  " if rest.startswith("\n") else " "
    return "{" + nl + head + "," + (rest if rest.startswith("\n") else " " + rest)

"""Small helpers shared by the renderers."""
from __future__ import annotations

import csv
import io
import json


def fmt_s(x) -> str:
    return "failed" if x is None else f"{x:.4e}"


def csv_text(rows: list[dict], fields: list[str]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(fields)
    w.writerows([r.get(k) for k in fields] for r in rows)
    return buf.getvalue()


def json_text(result) -> str:
    """The result's dict as JSON: one field per line at the top level and one line per row of a
    list of records (a variant, a kernel part), each row written by json's C encoder (indenting
    every level goes through the pure-Python encoder: a third of a warm 256-variant rank)."""
    return pretty_json(result.to_dict())


def pretty_json(d: dict) -> str:
    def value(v) -> str:
        if isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            return "[\n" + ",\n".join("    " + json.dumps(x) for x in v) + "\n  ]"
        return json.dumps(v)
    if not d:
        return "{}"
    return "{\n" + ",\n".join(f"  {json.dumps(k)}: {value(v)}" for k, v in d.items()) + "\n}"


def name_width(names, least: int = 28) -> int:
    """Column width for names (variants': at least the paper's longest, 28)."""
    return max([least, *map(len, names)])

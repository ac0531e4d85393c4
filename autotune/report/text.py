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


def json_text(result, indent: int = 2) -> str:
    return json.dumps(result.to_dict(), indent=indent)


def name_width(names) -> int:
    """Column width for variant names (at least the paper's longest, 28)."""
    return max([28, *map(len, names)])

"""Rendering sweeps: the long format as CSV and JSON for scripts, one line per scenario for people."""
from __future__ import annotations

import csv
import gc
import io
import json
import re
from contextlib import contextmanager
from typing import Iterator

from autotune.report.registry import renderer
from autotune.report.text import name_width
from autotune.results.frames import DIMENSION_KEYS
from autotune.results.sweep import FIELDS as SWEEP_FIELDS
from autotune.results.sweep import Block, SweepResult

# a scenario's first fields formatted once, then one f-string per row, with each float's repr
# made once per scenario (a sweep's bound, barrier and most communication seconds repeat in every
# row of it): what csv.writer writes, at a third of its time on a sweep of two million rows.
# Rows it cannot take (a failed prediction, text that would need quoting) go through csv.writer.
_HEAD = "%s,%s,%s,%d,%d,%d,%d,"
_SPECIAL = re.compile(r'[,"\r\n]')


class _Encoded(dict):
    """json.dumps of each string asked, made once."""

    def __missing__(self, x):
        text = self[x] = json.dumps(x)
        return text


class _Reprs(dict):
    """repr of each float asked, made once.  Keys are the rows' seconds, all Python floats (the
    results' tolist()): 1, 1.0 and True would be one key.  0.0 and -0.0 are one key too, so the
    caller asks only for values that are not zero."""

    def __missing__(self, x):
        text = self[x] = repr(x)
        return text


@contextmanager
def _collector_paused():
    """Python's cycle collector off while a sweep's rows are made: they are millions of tuples
    and strings, none in a cycle, and each collection walks all of them again (an eighth of a
    large sweep's time)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


@renderer(SweepResult, "csv", chunks=True)
def sweep_csv(res: SweepResult) -> Iterator[str]:
    """The long format as CSV, a scenario at a time, a scenario's rows a column at a time: each
    column of seconds formatted by one repr of its list (Python's own float repr, in C), each row
    joined by str.join.  A scenario with a row that failed, or text that would need quoting,
    goes through csv.writer row by row."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(SWEEP_FIELDS)
    yield buf.getvalue()
    named: dict[int, str | None] = {}     # a variant's name and dimension values as CSV text (None: needs quoting)
    ranks: list[str] = []
    for block in res.column_blocks():
        with _collector_paused():
            lines = _csv_lines(block, named, ranks)
            if lines is None:
                out = []
                for t in block.tails():
                    buf.seek(0)
                    buf.truncate()
                    w.writerow((*block.head, *t[:2], *t[2], *t[3:]))
                    out.append(buf.getvalue())
                lines = "".join(out)
        yield lines


def _reprs(values: list[float]) -> list[str]:
    """repr of each float of the list: one repr of the list, split (a float's repr has no ', ')."""
    return repr(values)[1:-1].split(", ") if values else []


def _repeated_reprs(values: list[float]) -> list[str]:
    """_reprs of a list whose values repeat (a scenario's barrier and most of its communication
    seconds): each distinct value's made once.  A zero is repr'ed where it stands (0.0 and -0.0
    are one key)."""
    distinct = list(set(values))
    text = dict(zip(distinct, _reprs(distinct)))
    return [text[x] if x else repr(x) for x in values]


def _csv_lines(block: Block, named: dict, ranks: list) -> str | None:
    """One scenario's CSV lines, or None where its rows need csv.writer (a failed row, no bound,
    text that would need quoting)."""
    head, cols, bound = block.head, block.columns, block.bound_s
    if cols is None or not bound or any(_SPECIAL.search(x) for x in head[:3]):
        return None
    if not cols.variants:
        return ""
    texts = []
    for v in cols.variants:
        text = named.get(id(v), False)         # the variants are the layout's own: one text each
        if text is False:
            dims = v.fields().values()
            text = named[id(v)] = None if '"' in v.name or any(_SPECIAL.search(x) for x in dims) else \
                f'"{v.name}",' + ",".join(dims)
        if text is None:
            return None
        texts.append(text)
    k = len(texts)
    while len(ranks) < k:
        ranks.append(str(len(ranks) + 1))
    lead = _HEAD % head
    tail = f",{block.beyond},,{bound!r}"
    pre = ["True"] * cols.chosen + ["False"] * (k - cols.chosen)
    schemes = [block.basis(v.comm) for v in cols.variants]
    ratio = _reprs([t / bound for t in cols.total])
    cells = zip([lead + r for r in ranks[:k]], texts, _reprs(cols.total), _reprs(cols.node), _repeated_reprs(cols.comm),
                _repeated_reprs(cols.barrier), pre, [b + tail for b in schemes], ratio)
    return "\n".join(map(",".join, cells)) + "\n"


@renderer(SweepResult, "json")
@_collector_paused()
def sweep_json(res: SweepResult) -> str:
    """{..., "rows": [...]}: pandas.DataFrame(json.load(f)["rows"]) is the long table.

    Each row object is written by one %-format with its strings encoded once (json.dumps of
    72,000 dicts costs more than the whole prediction); a row with a failed prediction goes
    through json.dumps."""
    meta, k = res.meta(), len(DIMENSION_KEYS)
    E = _Encoded()                                           # noqa: N806 - encoded strings
    B = {True: "true", False: "false"}                       # noqa: N806
    field = lambda f: f'"{f}": %{"r" if f.endswith("_s") else "s"}'    # noqa: E731
    lead = "{" + ", ".join(map(field, SWEEP_FIELDS[:9])) + ", "
    tail = ", " + ", ".join(map(field, SWEEP_FIELDS[9 + k:])) + "}"
    dims_text: dict[int, str] = {}       # a variant's dimension fields, by its values' tuple (shared by the rows)
    out = []
    for head, tails in res.blocks():
        ivp, method, machine = E[head[0]], E[head[1]], E[head[2]]
        for t in tails:
            rank, name, dims, total, node, comm_s, barrier, pre, basis, beyond, failed, bound, ratio = t
            if ratio is None:
                out.append(json.dumps(dict(zip(SWEEP_FIELDS, (*head, rank, name, *dims, *t[3:])))))
                continue
            text = dims_text.get(id(dims))
            if text is None:
                text = dims_text[id(dims)] = ", ".join(f'"{f}": {E[v]}' for f, v in zip(DIMENSION_KEYS, dims))
            out.append(lead % (ivp, method, machine, *head[3:], rank, E[name]) + text
                       + tail % (total, node, comm_s, barrier, B[pre], E[basis], B[beyond], E[failed], bound, ratio))
    head = json.dumps(dict(meta, rows=[]))
    return head[:-3] + "[" + ", ".join(out) + "]}"


@renderer(SweepResult, "table")
def sweep_table(res: SweepResult) -> str:
    meta, rows = res.meta(), [r._asdict() for r in res.rows()]
    w = name_width(r["name"] for r in rows if r["rank"] == 1)
    iw = max([14] + [len(r["ivp"]) for r in rows if r["rank"] == 1])      # a twin's name is longer
    lines = [f"sweep on machine {meta['machine']}: {meta['scenarios']} scenarios, {len(rows)} predictions, "
             f"selection {meta['selection']}, {meta['analyses_run']} kerncraft analyses run", "",
             f"{'ivp':{iw}} {'n':>11} {'nodes':>5} {'thr':>3}  {'best variant':{w}} {'s/step':>11} {'sel':>3}  comm model"]
    best: dict[tuple, dict] = {}
    count: dict[tuple, int] = {}
    for r in rows:
        key = (r["ivp"], r["n"], r["nodes"], r["threads"])
        count[key] = count.get(key, 0) + bool(r["preselected"])
        if r["rank"] == 1:
            best[key] = r
    for key, r in best.items():
        s = "failed" if r["predicted_s"] is None else f"{r['predicted_s']:.4e}"
        lines.append(f"{r['ivp']:{iw}} {r['n']:>11,} {r['nodes']:>5} {r['threads']:>3}  {r['name']:{w}} {s:>11} "
                     f"{count[key]:>3}  {r['comm_basis']}")
    for s in meta["skipped"]:
        lines.append(f"skipped {s['ivp']} n={s['n']} nodes={s['nodes']} threads={s['threads']}: {s['reason']}")
    lines += [f"note: {n}" for n in meta["notes"]]
    return "\n".join(lines) + "\n"

"""Rendering sweeps: the long format as CSV and JSON for scripts, one line per scenario for people."""
from __future__ import annotations

import csv
import gc
import io
import json
import re
from contextlib import contextmanager

from autotune.report.registry import renderer
from autotune.report.text import name_width
from autotune.results.frames import DIMENSION_KEYS
from autotune.results.sweep import FIELDS as SWEEP_FIELDS
from autotune.results.sweep import SweepResult

# a scenario's first fields formatted once, then one f-string per row, with each float's repr
# made once per scenario (a sweep's bound, barrier and most communication seconds repeat in every
# row of it): what csv.writer writes, at a third of its time on a sweep of two million rows.
# Rows it cannot take (a failed prediction, text that would need quoting) go through csv.writer.
_HEAD = "%s,%s,%s,%d,%d,%d,%d,"
_SPECIAL = re.compile(r'[,"\r\n]')


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


@renderer(SweepResult, "csv")
@_collector_paused()
def sweep_csv(res: SweepResult) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(SWEEP_FIELDS)
    out = [buf.getvalue()]
    joined: dict[tuple, str | None] = {}      # a variant's dimension values as CSV text (None: needs quoting)
    for head, tails in res.blocks():
        plain = not any(_SPECIAL.search(x) for x in head[:3])
        lead, r = _HEAD % head, _Reprs()
        for t in tails:
            rank, name, dims, total, node, comm_s, barrier, pre, basis, beyond, failed, bound, ratio = t
            if plain and ratio is not None and not failed and '"' not in name:
                text = joined.get(dims)
                if text is None:
                    text = joined[dims] = ",".join(dims) if not any(_SPECIAL.search(x) for x in dims) else None
            if plain and ratio is not None and not failed and '"' not in name and text is not None:
                out.append(f'{lead}{rank},"{name}",{text},{r[total] if total else repr(total)},'
                           f'{r[node] if node else repr(node)},{r[comm_s] if comm_s else repr(comm_s)},'
                           f'{r[barrier] if barrier else repr(barrier)},{pre},{basis},{beyond},,'
                           f'{r[bound] if bound else repr(bound)},{ratio!r}\n')
            else:
                buf.seek(0)
                buf.truncate()
                w.writerow((*head, *t[:2], *dims, *t[3:]))
                out.append(buf.getvalue())
    return "".join(out)


@renderer(SweepResult, "json")
@_collector_paused()
def sweep_json(res: SweepResult) -> str:
    """{..., "rows": [...]}: pandas.DataFrame(json.load(f)["rows"]) is the long table.

    Each row object is written by one %-format with its strings encoded once (json.dumps of
    72,000 dicts costs more than the whole prediction); a row with a failed prediction goes
    through json.dumps."""
    meta, rows = res.meta(), res.rows()
    k = len(DIMENSION_KEYS)
    text = {s for t in rows for s in (t.ivp, t.method, t.machine, t.name, *t[9:9 + k], t.comm_basis,
                                       t.failed_kernels)}
    E = {x: json.dumps(x) for x in text}                     # noqa: N806 - encoded strings
    B = {True: "true", False: "false"}                       # noqa: N806
    form = "{" + ", ".join(f'"{k}": %{"r" if k.endswith("_s") else "s"}' for k in SWEEP_FIELDS) + "}"
    out = [json.dumps(t._asdict()) if t.bound_ratio is None else
           form % (E[t.ivp], E[t.method], E[t.machine], t.n, t.n_requested, t.nodes, t.threads, t.rank,
                   E[t.name], *(E[x] for x in t[9:9 + k]), t.predicted_s, t.node_s, t.comm_s, t.barrier_s,
                   B[t.preselected], E[t.comm_basis], B[t.beyond_machine], E[t.failed_kernels], t.bound_s,
                   t.bound_ratio) for t in rows]
    head = json.dumps(dict(meta, rows=[]))
    return head[:-3] + "[" + ", ".join(out) + "]}"


@renderer(SweepResult, "table")
def sweep_table(res: SweepResult) -> str:
    meta, rows = res.meta(), [r._asdict() for r in res.rows()]
    w = name_width(r["name"] for r in rows if r["rank"] == 1)
    lines = [f"sweep on machine {meta['machine']}: {meta['scenarios']} scenarios, {len(rows)} predictions, "
             f"selection {meta['selection']}, {meta['analyses_run']} kerncraft analyses run", "",
             f"{'ivp':14} {'n':>11} {'nodes':>5} {'thr':>3}  {'best variant':{w}} {'s/step':>11} {'sel':>3}  comm model"]
    best: dict[tuple, dict] = {}
    count: dict[tuple, int] = {}
    for r in rows:
        key = (r["ivp"], r["n"], r["nodes"], r["threads"])
        count[key] = count.get(key, 0) + bool(r["preselected"])
        if r["rank"] == 1:
            best[key] = r
    for key, r in best.items():
        s = "failed" if r["predicted_s"] is None else f"{r['predicted_s']:.4e}"
        lines.append(f"{r['ivp']:14} {r['n']:>11,} {r['nodes']:>5} {r['threads']:>3}  {r['name']:{w}} {s:>11} "
                     f"{count[key]:>3}  {r['comm_basis']}")
    for s in meta["skipped"]:
        lines.append(f"skipped {s['ivp']} n={s['n']} nodes={s['nodes']} threads={s['threads']}: {s['reason']}")
    lines += [f"note: {n}" for n in meta["notes"]]
    return "\n".join(lines) + "\n"

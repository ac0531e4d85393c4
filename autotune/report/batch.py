"""Rendering sweeps, scaling studies and plans (tables for people, CSV/JSON for scripts)."""
from __future__ import annotations

import csv
import io
import json
import re

from autotune.pipeline.batch import FIELDS as SWEEP_FIELDS
SCALE_FIELDS = ["variant", "nodes", "predicted_s", "speedup", "efficiency", "efficiency_bound", "node_share",
                "comm_share", "bottleneck", "superlinear", "node_seconds", "comm_basis", "beyond_machine"]


def _csv(rows: list[dict], fields: list[str]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(fields)
    w.writerows([r.get(k) for k in fields] for r in rows)
    return buf.getvalue()


# one %-format per row writes what csv.writer writes, 40 % faster on a 72,000-row sweep; rows it
# cannot take (a failed prediction, text that would need quoting) go through csv.writer
_ROW = '%s,%s,%s,%d,%d,%d,%d,%d,"%s",%s,%s,%r,%r,%r,%r,%s,%s,%s,%s'
_SPECIAL = re.compile(r'[,"\r\n]')


def sweep_csv(meta: dict, rows: list[tuple]) -> str:
    """rows: tuples in SWEEP_FIELDS order (batch.long_tuples)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(SWEEP_FIELDS)
    plain = not any(_SPECIAL.search(x) for x in {t[i] for t in rows for i in (0, 1, 2)})
    out = [buf.getvalue()]
    for t in rows:
        if plain and t[11] is not None and not t[18] and '"' not in t[8]:
            out.append(_ROW % t + "\n")
        else:
            buf.seek(0)
            buf.truncate()
            w.writerow(t)
            out.append(buf.getvalue())
    return "".join(out)


def sweep_json(meta: dict, rows: list[tuple]) -> str:
    """{..., "rows": [...]}: pandas.DataFrame(json.load(f)["rows"]) is the long table.

    rows: tuples in SWEEP_FIELDS order.  Each row object is written by one %-format with its
    strings encoded once (json.dumps of 72,000 dicts costs more than the whole prediction);
    a row with a failed prediction goes through json.dumps."""
    text = {t[i] for t in rows for i in (0, 1, 2, 8, 9, 10, 16, 18)}
    E = {x: json.dumps(x) for x in text}                     # noqa: N806 - encoded strings
    B = {True: "true", False: "false"}                       # noqa: N806
    form = "{" + ", ".join(f'"{k}": %{"r" if k.endswith("_s") else "s"}' for k in SWEEP_FIELDS) + "}"
    out = [json.dumps(dict(zip(SWEEP_FIELDS, t))) if t[11] is None else
           form % (E[t[0]], E[t[1]], E[t[2]], t[3], t[4], t[5], t[6], t[7], E[t[8]], E[t[9]], E[t[10]],
                   t[11], t[12], t[13], t[14], B[t[15]], E[t[16]], B[t[17]], E[t[18]]) for t in rows]
    head = json.dumps(dict(meta, rows=[]))
    return head[:-3] + "[" + ", ".join(out) + "]}"


def sweep_table(meta: dict, rows: list[dict]) -> str:
    lines = [f"sweep on machine {meta['machine']}: {meta['scenarios']} scenarios, {len(rows)} predictions, "
             f"selection {meta['selection']}, {meta['analyses_run']} kerncraft analyses run", "",
             f"{'ivp':14} {'n':>11} {'nodes':>5} {'thr':>3}  {'best variant':28} {'s/step':>11} {'sel':>3}  comm model"]
    best: dict[tuple, dict] = {}
    count: dict[tuple, int] = {}
    for r in rows:
        key = (r["ivp"], r["n"], r["nodes"], r["threads"])
        count[key] = count.get(key, 0) + bool(r["preselected"])
        if r["rank"] == 1:
            best[key] = r
    for key, r in best.items():
        s = "failed" if r["predicted_s"] is None else f"{r['predicted_s']:.4e}"
        lines.append(f"{r['ivp']:14} {r['n']:>11,} {r['nodes']:>5} {r['threads']:>3}  {r['name']:28} {s:>11} "
                     f"{count[key]:>3}  {r['comm_basis']}")
    for s in meta["skipped"]:
        lines.append(f"skipped {s['ivp']} n={s['n']} nodes={s['nodes']} threads={s['threads']}: {s['reason']}")
    lines += [f"note: {n}" for n in meta["notes"]]
    return "\n".join(lines) + "\n"


def scale_table(res: dict) -> str:
    a = res["analysis"]
    lines = [f"scaling of {res['ivp']} on machine {res['machine']}: n = {res['n']:,}, {res['threads']} threads per "
             f"node, nodes {res['nodes'][0]}..{res['nodes'][-1]}; speedup and efficiency against the best "
             f"variant on {a['base_nodes']} node(s) ({a['base_variant']}, {a['base_s']:.4e} s)", "",
             f"{'nodes':>5}  {'best variant':28} {'s/step':>11} {'speedup':>8} {'eff':>6} {'bound':>6} "
             f"{'node %':>6} {'comm %':>6}  bottleneck     comm model"]
    by = {(r["variant"], r["nodes"]): r for r in a["rows"]}
    for w in a["winners"]:
        r = by[(w["variant"], w["nodes"])]
        bound = "-" if r["efficiency_bound"] is None else f"{r['efficiency_bound']:.3f}"
        flag = " superlinear" if r["superlinear"] else ""
        lines.append(f"{w['nodes']:>5}  {w['variant']:28} {r['predicted_s']:11.4e} {r['speedup']:8.2f} "
                     f"{r['efficiency']:6.3f} {bound:>6} {100 * r['node_share']:6.1f} {100 * r['comm_share']:6.1f}  "
                     f"{r['bottleneck']:14} {r['comm_basis']}{' beyond machine' if r['beyond_machine'] else ''}{flag}")
    lines.append("")
    if a["crossovers"]:
        for c in a["crossovers"]:
            lines.append(f"crossover: between {c['from_nodes']} and {c['to_nodes']} nodes the best variant changes "
                         f"from {c['from']} to {c['to']}")
    else:
        lines.append(f"no crossover: {a['winners'][0]['variant']} is best at every node count")
    f, rec = a["fastest"], a["recommended"]
    last = res["nodes"][-1]
    lines.append(f"fastest: {f['nodes']} nodes with {f['variant']} ({f['predicted_s']:.4e} s/step); "
                 + ("the time per step still falls at the largest count asked" if f["nodes"] == last
                    else "more nodes stop paying beyond it"))
    lines.append(f"recommended: {rec['nodes']} nodes with {rec['variant']} ({rec['predicted_s']:.4e} s/step, "
                 f"efficiency {rec['efficiency']:.3f}) -- rule: {rec['rule']}"
                 + ("" if rec["met"] else " (no node count meets it: the smallest is given)"))
    lines += [f"note: {n}" for n in res["notes"]]
    return "\n".join(lines) + "\n"


def scale_csv(res: dict) -> str:
    return _csv(res["analysis"]["rows"], SCALE_FIELDS)

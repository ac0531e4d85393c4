"""Rendering a scaling study (table, CSV, JSON)."""
from __future__ import annotations

from autotune.report.registry import renderer
from autotune.report.text import csv_text, json_text, name_width
from autotune.results.scale import COLUMNS, ScaleResult


@renderer(ScaleResult, "table")
def scale_table(result: ScaleResult) -> str:
    res = result.to_dict()
    wd = name_width(w["variant"] for w in res["analysis"]["winners"])
    a = res["analysis"]
    lines = [f"scaling of {res['ivp']} on machine {res['machine']}: n = {res['n']:,}, {res['threads']} threads per "
             f"node, nodes {res['nodes'][0]}..{res['nodes'][-1]}; speedup and efficiency against the best "
             f"variant on {a['base_nodes']} node(s) ({a['base_variant']}, {a['base_s']:.4e} s)", "",
             f"{'nodes':>5}  {'best variant':{wd}} {'s/step':>11} {'speedup':>8} {'eff':>6} {'bound':>6} "
             f"{'node %':>6} {'comm %':>6}  bottleneck     comm model"]
    by = {(r["variant"], r["nodes"]): r for r in a["rows"]}
    for w in a["winners"]:
        r = by[(w["variant"], w["nodes"])]
        bound = "-" if r["efficiency_bound"] is None else f"{r['efficiency_bound']:.3f}"
        flag = " superlinear" if r["superlinear"] else ""
        lines.append(f"{w['nodes']:>5}  {w['variant']:{wd}} {r['predicted_s']:11.4e} {r['speedup']:8.2f} "
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


@renderer(ScaleResult, "csv")
def scale_csv(res: ScaleResult) -> str:
    return csv_text(res.rows(), COLUMNS)


@renderer(ScaleResult, "json")
def scale_json(res: ScaleResult) -> str:
    return json_text(res)

"""Rendering scale over mixed node counts (table, CSV, JSON)."""
from __future__ import annotations

from autotune.report.registry import renderer
from autotune.report.text import csv_text, fmt_s, json_text
from autotune.results.mixedscale import MixedScaleResult


@renderer(MixedScaleResult, "json")
def mixed_scale_json(res: MixedScaleResult) -> str:
    return json_text(res)


@renderer(MixedScaleResult, "csv")
def mixed_scale_csv(res: MixedScaleResult) -> str:
    return csv_text(res.rows(), res.columns())


@renderer(MixedScaleResult, "table")
def mixed_scale_table(res: MixedScaleResult) -> str:
    sc = res.rankings[0].scenario
    kinds = [k.name for k in sc.kinds]
    lines = [f"IVP {sc.ivp.name}, method {sc.method.name}, n = {sc.n:,}, kinds "
             + ", ".join(f"{k.name} ({k.machine.name}, {k.threads} thread{'s' * (k.threads != 1)})" for k in sc.kinds)
             + f"; interconnect: {sc.network_from}",
             f"{'nodes':>20} {'s/step':>11} {'even s/step':>11} {'vs even':>7} {'speed-up':>8}  "
             + "  ".join(f"{k + ' share':>11}" for k in kinds) + "  best variant"]
    for row in res.rows():
        vs = f"{row['vs_even']:7.3f}" if row["vs_even"] else "      -"
        up = f"{row['speedup']:8.2f}" if row["speedup"] else "       -"
        shares = "  ".join(f"{100 * row[k + '_share']:10.1f}%" if row[k + "_share"] is not None else f"{'-':>11}"
                           for k in kinds)
        lines.append(f"{row['nodes']:>20} {fmt_s(row['predicted_s']):>11} {fmt_s(row['even_s']):>11} {vs} {up}  "
                     f"{shares}  {row['variant'] or 'failed'}")
    lines.append("each allocation's best variant at its split; speed-up: over the first allocation's")
    return "\n".join(lines) + "\n"

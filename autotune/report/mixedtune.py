"""Rendering tune over a mixed allocation (table, CSV, JSON)."""
from __future__ import annotations

from autotune.report.registry import renderer
from autotune.report.text import csv_text, fmt_s, json_text
from autotune.results.mixedtune import MixedTuneResult


@renderer(MixedTuneResult, "json")
def mixed_tune_json(res: MixedTuneResult) -> str:
    return json_text(res)


@renderer(MixedTuneResult, "csv")
def mixed_tune_csv(res: MixedTuneResult) -> str:
    return csv_text(res.rows(), res.columns())


def _pct(x) -> str:
    return "-" if x is None else f"{100 * x:+.1f}%"


@renderer(MixedTuneResult, "table")
def mixed_tune_table(res: MixedTuneResult) -> str:
    sc = res.ranking.scenario
    lines = [f"IVP {sc.ivp.name}, n = {sc.n:,}, mixed allocation {sc.label} ({sc.ranks} ranks); "
             f"{res.reps} runs of {res.steps} steps ({res.warmup} warm-up) per split, round-robin",
             f"{'split':6} {'predicted':>11} {'measured':>11} {'dev':>7}   "
             + "   ".join(f"{k.name + ' share':>12} {'node pred':>10} {'busy':>10} {'dev':>7}" for k in sc.kinds)]
    last = None
    for c, row in zip(res.configs, res.rows()):
        if c.row.variant.name != last:
            lines.append(f"{c.row.variant.name}:")
            last = c.row.variant.name
        kinds = res.kinds(c)
        lines.append(f"{c.which:6} {fmt_s(row['predicted_s']):>11} {fmt_s(row['measured_s']):>11} "
                     f"{_pct(row['deviation']):>7}   "
                     + "   ".join(f"{100 * k['share']:11.1f}% {fmt_s(k['predicted_node_s']):>10} "
                                  f"{fmt_s(k['measured_busy_s']):>10} {_pct(k['node_deviation']):>7}" for k in kinds))
        for e in c.errors:
            lines.append(f"  failed: {e}")
    lines.append("dev: predicted / measured - 1; busy: the slowest rank of the kind, outside the exchange")
    return "\n".join(lines) + "\n"

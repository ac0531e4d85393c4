"""Rendering `calibrate --from-runs`: the parameters and the cross-validation table."""
from __future__ import annotations

from autotune.report.registry import renderer
from autotune.report.text import csv_text, json_text
from autotune.results.learn import FOLD_COLUMNS, LearnResult


@renderer(LearnResult, "json")
def learn_json(res: LearnResult) -> str:
    return json_text(res)


@renderer(LearnResult, "csv")
def learn_csv(res: LearnResult) -> str:
    return csv_text(res.rows(), ["kind"] + FOLD_COLUMNS)


def _f(x, spec: str) -> str:
    return "-" if x is None else format(x, spec)


def _fold_lines(rows) -> list[str]:
    w = max([len(r.label) for r in rows] + [8])
    out = [f"{'held out':{w}} {'runs':>5} {'|dev|% ecm':>10} {'learned':>8} {'spearman ecm':>12} {'learned':>8} "
           f"{'top-1% ecm':>10} {'learned':>8}"]
    for r in rows:
        out.append(f"{r.label:{w}} {r.runs:>5} {_f(r.median_abs_dev_before_pct, '10.1f')} "
                   f"{_f(r.median_abs_dev_after_pct, '8.1f')} {_f(r.spearman_before, '12.3f')} "
                   f"{_f(r.spearman_after, '8.3f')} {_f(r.top1_loss_before_pct, '10.1f')} "
                   f"{_f(r.top1_loss_after_pct, '8.1f')}")
    return out


@renderer(LearnResult, "table")
def learn_table(res: LearnResult) -> str:
    lines = [f"machine {res.machine}: {res.runs} measured runs in {res.scenarios} scenarios"
             + (f" ({res.skipped} stored runs skipped: IVP, method or variant no longer known)" if res.skipped else ""),
             ""]
    shown = [p for p in res.parameters if p.observations]
    w = max([len(p.name) for p in shown] + [9])
    lines.append(f"{'parameter':{w}} {'benchmarked':>11} {'fitted':>8} {'observations':>12}")
    for p in shown:
        lines.append(f"{p.name:{w}} {p.benchmarked:11.3f} {p.fitted:8.3f} {p.observations:>12}")
    idle = [p.name for p in res.parameters if not p.observations]
    if idle:
        lines.append(f"(no measured phase moves with {', '.join(idle)}: they stay at 1)")
    lines.append(f"phase residual (median |measured/predicted - 1|): {_f(res.residual_before_pct, '.1f')} % with ECM "
                 f"alone, {_f(res.residual_after_pct, '.1f')} % fitted")
    if res.left_to_fit:
        lines.append(res.left_to_fit["line"])
    lines += ["", f"cross-validation, one {res.folds} left out at a time (step time of runs the fit did not see):"]
    lines += _fold_lines(res.cross_validation)
    p = res.pooled
    lines.append(f"median over the folds: |deviation| {_f(p.get('median_abs_dev_before_pct'), '.1f')} % with ECM alone, "
                 f"{_f(p.get('median_abs_dev_after_pct'), '.1f')} % learned")
    if res.held_out:
        lines += ["", "held-out IVPs, predicted by the fit of all the others:"]
        lines += _fold_lines(res.held_out)
    lines.append("")
    lines.append("dry run: nothing written" if res.dry_run or not res.machine_file else
                 f"wrote the fitted factors to {res.machine_file} (cluster.learned); rank, explain and tune use them "
                 f"from now on (--model ecm: without)")
    return "\n".join(lines) + "\n"

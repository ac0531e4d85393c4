"""Rendering a mixed allocation's ranking (table, CSV, JSON)."""
from __future__ import annotations

from autotune.report.names import shared_values, short_name
from autotune.report.registry import renderer
from autotune.report.text import csv_text, fmt_s, json_text, name_width
from autotune.request.defaults import TABLE_ROWS
from autotune.results.mixed import MixedExplainResult, MixedRankResult, MixedRow


@renderer(MixedRankResult, "json")
def mixed_json(res: MixedRankResult) -> str:
    return json_text(res)


@renderer(MixedRankResult, "csv")
def mixed_csv(res: MixedRankResult) -> str:
    return csv_text(res.rows(), res.columns())


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


@renderer(MixedRankResult, "table")
def mixed_table(res: MixedRankResult, every_row: bool = False) -> str:
    """The pre-selected variants and the next up to TABLE_ROWS, each with its split's step, the
    even split's and each kind's share; then the best variant's split kind by kind."""
    sc = res.scenario
    rows = res.ordered if every_row else res.ordered[:max(TABLE_ROWS, len(res.preselected))]
    shared = shared_values([r.variant for r in rows])
    names = [short_name(r.variant, shared) for r in rows]
    w = name_width(names)
    kinds = ", ".join(f"{k.name}:{k.nodes} ({k.machine.name}, {k.threads} thread{'s' * (k.threads != 1)})" for k in sc.kinds)
    lines = [f"IVP {sc.ivp.name}, method {sc.method.name}, n = {sc.n:,}, mixed allocation {kinds}; "
             f"{sc.ranks} ranks, one a node",
             f"interconnect: {sc.network_from}",
             ("names below: what differs from " + ",".join(f"{k}={v}" for k, v in shared.items())) if shared else "",
             f"{'rank':>4}  {'sel':3}  {'variant':{w}} {'s/step':>11} {'even s/step':>11} {'vs even':>7}  "
             + "  ".join(f"{k.name + ' share':>12}" for k in sc.kinds)]
    for i, (r, name) in enumerate(zip(rows, names), 1):
        shares = sc.shares(r.split) if r.split else [None] * len(sc.kinds)
        gain = f"{r.gain:7.3f}" if r.gain else "      -"
        mark = " *" if r.variant.name in res.preselected else "  "
        lines.append(f"{i:>4}  {mark:3}  {name:{w}} {fmt_s(r.step_s):>11} {fmt_s(r.even_s):>11} {gain}  "
                     + "  ".join(f"{_pct(s):>12}" for s in shares))
    lines.append("")
    lines.append(f"* pre-selected: {res.rule.describe()} ({len(res.preselected)} of {len(res.ordered)})")
    if res.best is not None:
        lines += split_lines(res, res.best)
    left = len(res.ordered) - len(rows)
    if left:
        lines.append(f"{left} of {len(res.ordered)} variants not shown: --all lists every one")
    return "\n".join(lines) + "\n"


def split_lines(res: MixedRankResult, r: MixedRow) -> list[str]:
    """A variant's split kind by kind beside the even split: share, largest block, predicted step."""
    sc = res.scenario
    even = sc.even()
    kw = max([4] + [len(k.name) for k in sc.kinds])
    mw = max([7] + [len(k.machine.name) for k in sc.kinds])
    lines = [f"split of {r.variant.name} (solved on blocks {res.grid_step:,} components apart, whole "
             f"{sc.granule}-component cache lines): {fmt_s(r.step_s)} s/step, even split {fmt_s(r.even_s)} s/step",
             f"  {'kind':{kw}} {'machine':{mw}} {'nodes':>5} {'share':>7} {'block':>11} {'s/step':>11}    "
             f"{'even share':>10} {'block':>11} {'s/step':>11}"]
    for a, b in zip(res.kinds_of(r.split, r.kind_s), res.kinds_of(even, r.even_kind_s)):
        lines.append(f"  {a['kind']:{kw}} {a['machine']:{mw}} {a['nodes']:>5} {_pct(a['share']):>7} {a['block']:>11,} "
                     f"{fmt_s(a['predicted_s']):>11}    {_pct(b['share']):>10} {b['block']:>11,} "
                     f"{fmt_s(b['predicted_s']):>11}")
    lines.append(f"  blocks per rank (AUTOTUNE_COUNTS): {','.join(map(str, r.split))}")
    return lines


@renderer(MixedExplainResult, "json")
def mixed_explain_json(ex: MixedExplainResult) -> str:
    return json_text(ex)


@renderer(MixedExplainResult, "table")
def mixed_explain_table(ex: MixedExplainResult) -> str:
    """The variant's split kind by kind, then each kind's breakdown at its block."""
    from autotune.report.render import render
    res, r = ex.ranking, ex.row
    sc = res.scenario
    lines = [f"variant {ex.name} of {sc.ivp.name}: rank {res.ordered.index(r) + 1} of {len(res.ordered)}, "
             f"n = {sc.n:,}, mixed allocation {sc.label}, interconnect: {sc.network_from}"]
    if r.split is None:
        lines.append("no prediction: kerncraft failed on a kind's kernel parts")
        return "\n".join(lines) + "\n"
    lines += split_lines(res, r)
    for k, kind_ex in zip(sc.kinds, ex.kinds):
        lines += ["", f"--- kind {k.name}: one of its {k.nodes} ranks at its block ---",
                  render(kind_ex, "table").rstrip("\n")]
    return "\n".join(lines) + "\n"

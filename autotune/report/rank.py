"""Rendering one scenario's ranking and one variant's breakdown (tables, CSV, JSON)."""
from __future__ import annotations

from autotune.report.registry import renderer
from autotune.report.text import csv_text, fmt_s, json_text, name_width
from autotune.results.rank import COLUMNS, ExplainResult, RankResult


@renderer(RankResult, "json")
def rank_json(res: RankResult) -> str:
    return json_text(res)


@renderer(RankResult, "csv")
def rank_csv(res: RankResult) -> str:
    return csv_text(res.rows(), COLUMNS)


@renderer(RankResult, "table")
def rank_table(res: RankResult) -> str:
    d = res.to_dict()
    w = name_width(v["name"] for v in d["variants"])
    lines = [
        f"IVP {d['ivp']}, method {d['method']}, machine {d['machine']}, n = {d['n']:,}, "
        f"nodes = {d['nodes']}, threads = {d['threads']}" + (f", model {d['model']}" if "model" in d else ""),
        "",
        f"{'rank':>4}  {'sel':3}  {'variant':{w}} {'s/step':>11} {'node %':>7} {'comm %':>7}",
    ]
    for v in d["variants"]:
        t = v["predicted_s"]
        node = f"{100 * v['node_s'] / t:6.1f}" if t else "     -"
        com = f"{100 * v['comm_s'] / t:6.1f}" if t else "     -"
        mark = " * " if v["preselected"] else "   "
        lines.append(f"{v['rank']:>4}  {mark}  {v['name']:{w}} {fmt_s(t):>11} {node:>7} {com:>7}")
    lines.append("")
    lines.append(f"* pre-selected: {d['selection']['description']} "
                 f"({sum(v['preselected'] for v in d['variants'])} of {len(d['variants'])})")
    if d["bound_s"]:
        b, best = d["bound"], d["variants"][0]["predicted_s"]
        lines.append(f"floor of the step: {d['bound_s']:.4e} s ({b['bytes'] / 1e9:.3g} GB compulsory traffic from "
                     f"{b['level']}, RHS in-core {b['core_s']:.3e} s, communication {b['comm_s']:.3e} s)"
                     + (f"; the best variant is {best / d['bound_s']:.2f} x the floor" if best else ""))
        lines.append(f"floor with write-allocate (bound_wa_s): {d['bound_wa_s']:.4e} s ({b['wa_bytes'] / 1e9:.3g} GB: "
                     f"every written vector read first, as stores through the caches do)")
    for n in d["notes"]:
        lines.append(f"note: {n}")
    return "\n".join(lines) + "\n"



@renderer(ExplainResult, "json")
def explain_json(ex: ExplainResult) -> str:
    return json_text(ex)


@renderer(ExplainResult, "table")
def explain_table(ex: ExplainResult) -> str:
    res, name, r = ex.ranking, ex.name, ex.result
    d = r.to_dict(res.rank_of(name), name in res.preselected)
    sc = res.scenario
    lines = [f"variant {name} of {sc.ivp.name}: rank {d['rank']} of {len(res.ordered)}, "
             f"n = {sc.n:,}, nodes = {sc.nodes}, threads = {sc.threads}, machine {sc.machine.name}, "
             f"f = {sc.machine.clock_hz / 1e9:.2f} GHz", ""]
    if r.prediction is None:
        lines.append(f"no prediction: kerncraft failed on {', '.join(r.failed_parts)}")
        return "\n".join(lines) + "\n"
    total = r.prediction.total_s
    learned = ex.ecm is not None
    lines.append(f"{'kernel part':26} {'regime':12} {'alpha cy/CL':>11} {'sigma':>6} {'beta':>12} "
                 f"{'exec':>5} {'seconds':>11} {'share':>6}" + (f" {'ECM alone':>11}" if learned else ""))
    for k in ex.kernel_rows():
        sig = "-" if k["sigma"] is None else f"{k['sigma']:g}"
        lines.append(f"{k['name']:26} {k['regime']:12} {k['alpha']:11.2f} {sig:>6} {k['beta']:12.4g} "
                     f"{k['executions']:>5} {k['seconds']:11.4e} {100 * k['seconds'] / total:5.1f}%"
                     + (f" {k['ecm_s']:11.4e}" if learned else ""))
    lines += ["",
              f"barriers: {r.barriers} per step, {r.prediction.barrier_s:.4e} s",
              f"node total (theta): {r.prediction.node_s:.4e} s",
              f"communication: {r.comm_phases} phases of comm={r.variant.comm}, {r.prediction.comm_s:.4e} s"
              + (f", {r.prediction.hidden_s:.4e} s of it behind the interior (overlap)" if r.prediction.hidden_s else ""),
              f"predicted (psi): {total:.4e} s per step"
              + (f" ({res.model}; ECM alone {ex.ecm.variant(name).predicted_s:.4e} s)" if learned else "")]
    if res.bound_s:
        lines.append(f"floor: bound_s {res.bound_s:.4e} s ({total / res.bound_s:.2f} x), with write-allocate "
                     f"bound_wa_s {res.bound_wa_s:.4e} s ({total / res.bound_wa_s:.2f} x)")
    for n in res.notes():
        lines.append(f"note: {n}")
    return "\n".join(lines) + "\n"

"""Rendering one scenario's ranking, one per IVP (rank --ivp all), and one variant's breakdown
(tables, CSV, JSON)."""
from __future__ import annotations

import json

from autotune.report.names import shared_values, short_name
from autotune.report.registry import renderer
from autotune.report.text import csv_text, fmt_s, json_text, name_width
from autotune.request.defaults import TABLE_ROWS
from autotune.results.rank import COLUMNS, ExplainResult, RankResult
from autotune.results.rankset import RankSet


@renderer(RankResult, "json")
def rank_json(res: RankResult) -> str:
    return json_text(res)


@renderer(RankResult, "csv")
def rank_csv(res: RankResult) -> str:
    return csv_text(res.rows(), COLUMNS)




def shown_rows(rows: list[tuple], every_row: bool = False) -> list[tuple]:
    """Of a ranking's rows (RankResult.brief: rank, variant, predicted seconds, ..., pre-selected
    seventh), those a person sees first: every one, or the pre-selected ones and then the next
    ones up to TABLE_ROWS in all."""
    return rows if every_row else rows[:max(TABLE_ROWS, sum(1 for r in rows if r[6]))]


def best_paper_form(rows: list[tuple]) -> tuple | None:
    """The best-ranked of the paper's forms with a prediction (None: none has one)."""
    return next((r for r in rows if r[1].is_paper_form and r[2] is not None), None)


@renderer(RankResult, "table")
def rank_table(res: RankResult, every_row: bool = False) -> str:
    """The pre-selected variants, the next ones up to TABLE_ROWS rows, the best of the paper's forms
    (marked p), the floor and the notes; the values the rows share said once above them
    (report.names).  every_row: every variant."""
    sc, rows = res.scenario, res.brief()
    main, paper = shown_rows(rows, every_row), best_paper_form(rows)
    shared = shared_values([r[1] for r in main])
    table = main + ([paper] if paper is not None and paper[0] > len(main) else [])
    names = [short_name(r[1], shared) for r in table]
    w = name_width(names)
    lines = [
        f"IVP {sc.ivp.name}, method {sc.method.name}, machine {sc.machine.name}, n = {sc.n:,}, "
        f"nodes = {sc.nodes}, threads = {sc.threads}" + (f", model {res.model}" if sc.machine.learned else ""),
        ("names below: what differs from " + ",".join(f"{k}={v}" for k, v in shared.items())) if shared else "",
        f"{'rank':>4}  {'sel':3}  {'variant':{w}} {'s/step':>11} {'node %':>7} {'comm %':>7}",
    ]
    for r, name in zip(table, names):
        rank_no, _, t, node_s, comm_s = r[:5]
        node = f"{100 * node_s / t:6.1f}" if t else "     -"
        com = f"{100 * comm_s / t:6.1f}" if t else "     -"
        mark = " " + ("*" if r[6] else " ") + ("p" if r is paper else " ")
        lines.append(f"{rank_no:>4}  {mark}  {name:{w}} {fmt_s(t):>11} {node:>7} {com:>7}")
    lines.append("")
    lines.append(f"* pre-selected: {res.rule.describe()} ({sum(r[6] for r in rows)} of {len(rows)})"
                 + ("; p: the best of the paper's forms" if paper else ""))
    lines += _floor_lines(res, rows[0][2] if rows else None)
    lines += [f"note: {n}" for n in res.notes()]
    left = len(rows) - len(table)
    if left:
        lines.append(f"{left} of {len(rows)} variants not shown: --all lists every one")
    return "\n".join(lines) + "\n"


def _floor_lines(res: RankResult, best: float | None) -> list[str]:
    if not res.bound_s:
        return []
    b = res.bound.to_dict()
    lines = [f"floor of the step: {res.bound_s:.4e} s ({b['bytes'] / 1e9:.3g} GB compulsory traffic from "
             f"{b['level']}, in-core {b['core_s']:.3e} s (RHS {b['core_rhs_s']:.3e}, LC {b['core_lc_s']:.3e}), communication {b['comm_s']:.3e} s; with "
             f"write-allocate, bound_wa_s, {res.bound_wa_s:.4e} s)"
             + (f"; the best variant is {best / res.bound_s:.2f} x the floor" if best else "")]
    if b.get("sweep"):
        sw = b["sweep"]
        lines.append(f"floor of a step of sweeps (bound_sweep_s): {res.bound_sweep_s:.4e} s "
                     f"({sw['bytes'] / 1e9:.3g} GB from {sw['level']}; with write-allocate, every written "
                     f"vector read first, bound_sweep_wa_s {res.bound_sweep_wa_s:.4e} s)")
    return lines


@renderer(RankSet, "table")
def rank_set_table(res: RankSet, every_row: bool = False) -> str:
    """One ranking's table per IVP, a blank line between them; then the IVPs skipped."""
    text = "\n".join(rank_table(r, every_row) for r in res.results)
    return text + "".join(f"skipped {s['ivp']} n={s['n']} nodes={s['nodes']} threads={s['threads']}: "
                          f"{s['reason']}\n" for s in res.skipped)


@renderer(RankSet, "csv")
def rank_set_csv(res: RankSet) -> str:
    return csv_text(res.rows(), COLUMNS)


@renderer(RankSet, "json")
def rank_set_json(res: RankSet) -> str:
    """{"ivps": {name: ranking}, "skipped": [...]}, each ranking as rank_json writes it."""
    inner = ",\n".join(f"    {json.dumps(name)}: " + rank_json(r).replace("\n", "\n    ")
                        for name, r in res.by_ivp().items())
    return f'{{\n  "ivps": {{\n{inner}\n  }},\n  "skipped": {json.dumps(res.skipped)}\n}}'


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
    rows = ex.kernel_rows()
    w, rw = _width(k["name"] for k in rows), max([12] + [len(k["regime"]) for k in rows])
    lines.append(f"{'kernel part':{w}} {'regime':{rw}} {'alpha cy/CL':>11} {'sigma':>6} {'beta':>12} "
                 f"{'exec':>5} {'seconds':>11} {'share':>6}" + (f" {'ECM alone':>11}" if learned else ""))
    for k in rows:
        sig = "-" if k["sigma"] is None else f"{k['sigma']:g}"
        lines.append(f"{k['name']:{w}} {k['regime']:{rw}} {k['alpha']:11.2f} {sig:>6} {k['beta']:12.4g} "
                     f"{k['executions']:>5} {k['seconds']:11.4e} {100 * k['seconds'] / total:5.1f}%"
                     + (f" {k['ecm_s']:11.4e}" if learned else ""))
    lines += _incore_lines(ex)
    lines += _loop_lines(ex)
    lines += _sweep_lines(ex)
    lines += _traffic_lines(ex)
    lines += _window_lines(ex.window)
    lines += ["",
              f"barriers: {r.barriers} per step, {r.prediction.barrier_s:.4e} s",
              f"node total (theta): {r.prediction.node_s:.4e} s",
              f"communication: {r.comm_phases} phases of comm={r.variant.comm}, {r.prediction.comm_s:.4e} s"
              + (f", {r.prediction.hidden_s:.4e} s of it behind the interior (overlap)" if r.prediction.hidden_s else ""),
              *_control_lines(ex.control, r.prediction.control_s),
              f"predicted (psi): {total:.4e} s per {'accepted ' if ex.control else ''}step"
              + (f" ({res.model}; ECM alone {ex.ecm.variant(name).predicted_s:.4e} s)" if learned else "")]
    if res.bound_s:
        lines.append(f"floor: bound_s {res.bound_s:.4e} s ({total / res.bound_s:.2f} x), with write-allocate "
                     f"bound_wa_s {res.bound_wa_s:.4e} s ({total / res.bound_wa_s:.2f} x)")
        if res.bound_sweep_s:
            lines.append(f"floor of a step of sweeps: bound_sweep_s {res.bound_sweep_s:.4e} s "
                         f"({total / res.bound_sweep_s:.2f} x)")
    for n in res.notes():
        lines.append(f"note: {n}")
    return "\n".join(lines) + "\n"


def _control_lines(c: dict | None, added_s: float) -> list[str]:
    """Step-size control's terms (pipeline.applicable.control_terms), what they add per accepted step."""
    if not c:
        return []
    return [f"step control (rtol {c['rtol']:g}, atol {c['atol']:g}): {added_s:.4e} s per accepted step: saving y "
            f"{c['save_s']:.4e} s, the norm {c['norm_s']:.4e} s ({c['norm']}; its data in {c['level']}), its "
            f"{c['reduce_op']} {c['reduce_s']:.4e} s per attempt ({c['exposed_reduce_s']:.4e} s waited for); {c['rejected_per_step']:g} rejected attempts "
            f"per accepted step, each restoring y {c['restore_s']:.4e} s"]


def _window_lines(w: dict | None) -> list[str]:
    """A pipelined step's window: its order, where it lives, what it moves there."""
    if not w:
        return []
    order = f"{w['order']}: {w['geometry']}" if "geometry" in w else "in row order"
    edge = f"; the predictor's level computes {100 * w['edge_share']:.1f} % again at the strips' edges" \
        if "edge_share" in w else ""
    return ["", f"window: {order}; the levels read {w['distance']} components back; a ring row of "
                f"{w['ring_components']} components; {w['bytes_per_thread'] / 1024:.1f} KiB a thread, "
                f"{w['bytes_node'] / 2**20:.2f} MiB on the node, in {w['level']}; its rings move "
                f"{w['ring_bytes_per_step'] / 1e9:.3g} GB a step there{edge}"]


def _sweep_lines(ex: ExplainResult) -> list[str]:
    """Each fused sweep's part: the sweep measured as the solver runs it against its analysed
    loops, and which the prediction used (model.sweeps); `region`: the start and end of the
    sweep's parallel region, in the measured time and priced as a barrier, not by k."""
    entries = ex.sweeps()
    if not entries:
        return []
    w = _width(entries)
    out = ["", f"{'fused sweep, s':{w}} {'analysed':>10} {'measured':>10} {'region':>9} {'k':>5} {'at':>12} "
               f"{'used':9} why"]
    for name, infos in entries.items():
        for i, e in enumerate(infos):      # one row per measurement its data takes
            an, meas, region = e.get("analysed_s"), e.get("measured_s"), e.get("region_s")
            out.append(f"{name if i == 0 else '':{w}} {'-' if an is None else f'{an:.3e}':>10} "
                       f"{'-' if meas is None else f'{meas:.3e}':>10} "
                       f"{'-' if region is None else f'{region:.2e}':>9} {e['factor']:5.2f} "
                       f"{'n=' + str(e['n']) + ' ' + e['level_name']:>12} {e['source']:9} {e['why']}")
    return out


def _width(names) -> int:
    """The name column of explain's tables: the longest of these kernel parts' names (26 at least)."""
    return name_width(names, least=25) + 1


def _loop_lines(ex: ExplainResult) -> list[str]:
    """Each fused sweep's part as the loops it runs over a tile (model.loops): each loop's analysed
    cycles per line of work of the sweep in each regime its data takes, their sum, and the
    cycles the part is priced with there (its sweep's measurement may scale them)."""
    entries = ex.loops()
    if not entries:
        return []
    out = ["", f"{'loops of a fused sweep':48} {'weight':>6} {'cy/CL':>8} in-core"]
    for name, infos in entries.items():
        for i in infos:
            out.append(f"{name} in {i['regime']}")
            for lp in i["loops"]:
                out.append(f"  {lp['name']:46} {lp['weight']:6.2f} {lp['cy_per_cl']:8.2f} {lp['incore'] or '-'}")
            out.append(f"  {'the loops, summed':46} {'':6} {i['sum_cy_per_cl']:8.2f}")
            out.append(f"  {'priced (the measured sweep may scale it)':46} {'':6} {i['priced_cy_per_cl']:8.2f}")
    return out


def _traffic_lines(ex: ExplainResult) -> list[str]:
    """The bytes each kernel part moves across each interface in a step, as predicted: what
    likwid-perfctr -m measures per region of a solver generate --likwid made."""
    traffic = ex.traffic()
    names = list(dict.fromkeys(row["name"] for row in ex.kernel_rows()))
    w = _width(names)
    if not traffic:
        return ["", "predicted traffic: the stored analyses keep no line counts (analyses stored before "
                    "they were kept; a new store runs them again)"] if names else []
    ifaces = list(dict.fromkeys(i for v in traffic.values() for i in v))
    out = ["", f"{'predicted traffic, MB/step':{w}} " + " ".join(f"{i:>9}" for i in ifaces)]
    for name in names:
        if name in traffic:
            out.append(f"{name:{w}} " + " ".join(f"{traffic[name].get(i, 0.0) / 1e6:9.2f}" for i in ifaces))
    out.append(f"{'all parts':{w}} " + " ".join(f"{sum(v.get(i, 0.0) for v in traffic.values()) / 1e6:9.2f}"
                                             for i in ifaces))
    left = [n for n in names if n not in traffic]
    if left:
        out.append(f"  without line counts (analyses stored before they were kept): {', '.join(left)}")
    return out


def _incore_lines(ex: ExplainResult) -> list[str]:
    """The in-core time of each of the variant's parts by the port model and measured on the CPU,
    and which one the prediction used (model.incore)."""
    entries = ex.incore()
    w = _width(entries)
    if not entries:
        m = ex.ranking.scenario.machine
        return ["", f"in-core times: the port model (OSACA {m.incore_model}); the machine file measures none "
                    f"(calibrate --node on the target writes a file that does)"]
    out = ["", f"{'in-core time, cy/CL':{w}} {'port model':>10} {'measured':>9} {'used':11} why"]
    for name, e in entries.items():
        port, meas = e.get("port_cy_per_cl"), e.get("measured_cy_per_cl")
        out.append(f"{name:{w}} {'-' if port is None else f'{port:.2f}':>10} {'-' if meas is None else f'{meas:.2f}':>9} "
                   f"{e['source']:11} {e['why']}")
    from_l2 = {name: e["l2"] for name, e in entries.items() if e.get("l2") and e["l2"].get("model_cy_per_cl")}
    if from_l2:
        out += ["", f"{'time from L2, cy/CL':{w}} {'analysed':>10} {'measured':>9} {'k':>5} {'used':9} why"]
        for name, e in from_l2.items():
            out.append(f"{name:{w}} {e['model_cy_per_cl']:10.2f} {e['measured_cy_per_cl']:9.2f} {e['factor']:5.2f} "
                       f"{e['source']:9} {e['why']}")
    return out

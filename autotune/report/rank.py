"""Rendering results for people (tables) and scripts (JSON, CSV).  No computation here."""
from __future__ import annotations

import csv
import io
import json
import math

from autotune.pipeline.predict import RankResult, VariantResult


def _num(x):
    if x is None or (isinstance(x, float) and math.isinf(x)):
        return None
    return x


def kernel_rows(r: VariantResult) -> list[dict]:
    if r.prediction is None:
        return []
    return [{
        "name": c.term.name, "kernel": c.term.kernel, "regime": c.term.regime,
        "alpha": c.term.alpha, "sigma": _num(c.term.sigma), "beta": c.term.beta,
        "executions": c.term.executions, "cores_used": _num(c.cores_used),
        "seconds": c.seconds,
    } for c in r.prediction.kernels]


def variant_dict(r: VariantResult, rank_no: int, preselected: bool) -> dict:
    p = r.prediction
    return {
        "name": r.variant.name, "rank": rank_no, "lc": r.variant.lc, "comm": r.variant.comm,
        "predicted_s": p.total_s if p else None,
        "node_s": p.node_s if p else None,
        "comm_s": p.comm_s if p else None,
        "barrier_s": p.barrier_s if p else None,
        "preselected": preselected,
        "failed_kernels": r.failed_parts,
        "comm_phases": r.comm_phases, "barriers": r.barriers,
        "kernels": kernel_rows(r),
    }


def rank_dict(res: RankResult) -> dict:
    sc = res.scenario
    m = sc.machine
    return {
        "ivp": sc.ivp.name, "method": sc.method.name, "machine": m.name,
        "n": sc.n, "nodes": sc.nodes, "threads": sc.threads,
        "selection": {"rule": res.rule.kind, "value": res.rule.value, "description": res.rule.describe()},
        "comm_model": dict(m.network), "barrier_model": dict(m.barrier),
        "notes": notes(res),
        "ecm": {"analyses_run": res.analyses_run, "failures": res.failures},
        "excluded_comm": res.excluded,
        "variants": [variant_dict(r, i + 1, r.variant.name in res.preselected)
                     for i, r in enumerate(res.ordered)],
    }


def notes(res: RankResult) -> list[str]:
    sc, out = res.scenario, []
    net = sc.machine.network
    if net.get("model") == "datasheet":
        out.append(f"communication model from the data sheet, not calibrated ({net['provenance']})")
    else:
        out.append(f"communication model fitted on {net.get('calibrated', '?')} ({net['provenance']})")
    if sc.ranks_per_node > 1:
        out.append(f"machine {sc.machine.name} has one node: its {sc.nodes} ranks share it "
                   f"({sc.node_threads} cores busy)")
    elif sc.beyond_machine:
        out.append(f"{sc.nodes} nodes exceed the {sc.machine.nodes} of machine {sc.machine.name}: extrapolated")
    for scheme, why in res.excluded.items():
        out.append(f"comm={scheme} excluded: {why}")
    for part, info in res.failures.items():
        out.append(f"kernel {part} ({info.get('regime')}) failed in kerncraft: {info.get('error')} (log: {info.get('log')})")
    return out


def to_json(res: RankResult) -> str:
    return json.dumps(rank_dict(res), indent=2)


CSV_FIELDS = ["ivp", "method", "machine", "n", "nodes", "threads", "rank", "name", "lc", "comm",
              "predicted_s", "node_s", "comm_s", "barrier_s", "preselected", "failed_kernels"]


def to_csv(res: RankResult) -> str:
    d = rank_dict(res)
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=CSV_FIELDS, lineterminator="\n")
    w.writeheader()
    for v in d["variants"]:
        row = {k: d[k] for k in CSV_FIELDS[:6]}
        row.update({k: v[k] for k in CSV_FIELDS[6:] if k != "failed_kernels"})
        row["failed_kernels"] = ";".join(v["failed_kernels"])
        w.writerow(row)
    return buf.getvalue()


def _fmt_s(x) -> str:
    return "failed" if x is None else f"{x:.4e}"


def to_table(res: RankResult) -> str:
    d = rank_dict(res)
    lines = [
        f"IVP {d['ivp']}, method {d['method']}, machine {d['machine']}, n = {d['n']:,}, "
        f"nodes = {d['nodes']}, threads = {d['threads']}",
        "",
        f"{'rank':>4}  {'sel':3}  {'variant':28} {'s/step':>11} {'node %':>7} {'comm %':>7}",
    ]
    for v in d["variants"]:
        t = v["predicted_s"]
        node = f"{100 * v['node_s'] / t:6.1f}" if t else "     -"
        com = f"{100 * v['comm_s'] / t:6.1f}" if t else "     -"
        mark = " * " if v["preselected"] else "   "
        lines.append(f"{v['rank']:>4}  {mark}  {v['name']:28} {_fmt_s(t):>11} {node:>7} {com:>7}")
    lines.append("")
    lines.append(f"* pre-selected: {d['selection']['description']} "
                 f"({sum(v['preselected'] for v in d['variants'])} of {len(d['variants'])})")
    for n in d["notes"]:
        lines.append(f"note: {n}")
    return "\n".join(lines) + "\n"


def explain_table(res: RankResult, name: str) -> str:
    r = next(x for x in res.ordered if x.variant.name == name)
    d = variant_dict(r, res.ordered.index(r) + 1, name in res.preselected)
    sc = res.scenario
    lines = [f"variant {name} of {sc.ivp.name}: rank {d['rank']} of {len(res.ordered)}, "
             f"n = {sc.n:,}, nodes = {sc.nodes}, threads = {sc.threads}, machine {sc.machine.name}, "
             f"f = {sc.machine.clock_hz / 1e9:.2f} GHz", ""]
    if r.prediction is None:
        lines.append(f"no prediction: kerncraft failed on {', '.join(r.failed_parts)}")
        return "\n".join(lines) + "\n"
    total = r.prediction.total_s
    lines.append(f"{'kernel part':26} {'regime':12} {'alpha cy/CL':>11} {'sigma':>6} {'beta':>12} "
                 f"{'exec':>5} {'seconds':>11} {'share':>6}")
    for k in d["kernels"]:
        sig = "-" if k["sigma"] is None else f"{k['sigma']:g}"
        lines.append(f"{k['name']:26} {k['regime']:12} {k['alpha']:11.2f} {sig:>6} {k['beta']:12.4g} "
                     f"{k['executions']:>5} {k['seconds']:11.4e} {100 * k['seconds'] / total:5.1f}%")
    lines += ["",
              f"barriers: {r.barriers} per step, {r.prediction.barrier_s:.4e} s",
              f"node total (theta): {r.prediction.node_s:.4e} s",
              f"communication: {r.comm_phases} phases of comm={r.variant.comm}, {r.prediction.comm_s:.4e} s",
              f"predicted (psi): {total:.4e} s per step"]
    for n in notes(res):
        lines.append(f"note: {n}")
    return "\n".join(lines) + "\n"


def calibration_table(res: dict) -> str:
    lines = [f"calibrated {res['machine']} in {res['wall_s']:.1f} s ({res['runs']} benchmark runs; "
             f"written to {res['machine_file']})", ""]
    for op, r in res["operations"].items():
        lines.append(f"{op}: measured p = {', '.join(map(str, r['measured_p']))}")
        groups = [("all p (joint, for unmeasured p)", r["fit"]["segments"])]
        groups += [(f"p = {q}", segs) for q, segs in r["fit"].get("per_p", {}).items()]
        for label, segs in groups:
            lines.append(f"  {label}:")
            for s in segs:
                upto = "end" if s["max_bytes"] is None else f"{s['max_bytes']:.0f} B"
                bw = f"{1e-9 / s['per_byte_s']:.2f} GB/s" if s["per_byte_s"] > 0 else "inf"
                lines.append(f"    up to {upto:>12}: latency {s['latency_s'] * 1e6:8.3f} us, bandwidth {bw}")
        for label, key in (("held-out sizes", "heldout_error_pct"), ("held-out p", "heldout_p_error_pct")):
            e = r[key]
            lines.append(f"  {label}: " + ("n/a" if not e else
                         f"median {e['median']:.1f} %, max {e['max']:.1f} % over {e['points']} points"
                         + (f" (p = {e['p']})" if "p" in e else "")))
    if "barrier" in res:
        b = res["barrier"]
        lines.append(f"barrier: {b['per_doubling_s'] * 1e9:.1f} ns per doubling of the thread count")
    return "\n".join(lines)


TUNE_FIELDS = ["ivp", "machine", "n", "nodes", "threads", "name", "predicted_s", "measured_s", "deviation_pct",
               "rank_predicted", "rank_measured", "preselected", "error"]


def tune_csv(res: dict) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=TUNE_FIELDS, lineterminator="\n")
    w.writeheader()
    for v in res["variants"]:
        w.writerow({k: res[k] if k in ("ivp", "machine", "n", "nodes", "threads") else v.get(k) for k in TUNE_FIELDS})
    return buf.getvalue()


def tune_table(res: dict) -> str:
    s = res["summary"]
    lines = [f"IVP {res['ivp']}, machine {res['machine']}, n = {res['n']:,}, nodes = {res['nodes']}, "
             f"threads = {res['threads']}, {res['reps']} x {res['steps']} steps ({res['warmup']} warm-up), "
             f"h = {res['h']:.3g}, flags {' '.join(res['flags'])}", "",
             f"{'variant':28} {'predicted s':>12} {'measured s':>12} {'dev %':>8} {'rank p/m':>9}"]
    for v in res["variants"]:
        if v["measured_s"] is None:
            lines.append(f"{v['name']:28} {_fmt_s(v['predicted_s']):>12} {'failed':>12}  {v['error']}")
            continue
        lines.append(f"{v['name']:28} {_fmt_s(v['predicted_s']):>12} {v['measured_s']:12.4e} "
                     f"{v['deviation_pct']:8.1f} {v['rank_predicted']:>4}/{v['rank_measured']:<4}")
    fmt = lambda x: "n/a" if x is None else f"{x:.3f}"  # noqa: E731
    lines += ["", f"Spearman {fmt(s['spearman'])}, Kendall {fmt(s['kendall'])}, top-1 loss "
              + ("n/a" if s["top1_loss_pct"] is None else f"{s['top1_loss_pct']:.1f} %"
                 + (f" (mean over {len(s['predicted_best_tied'])} tied, worst {s['top1_loss_worst_pct']:.1f} %)"
                    if len(s.get("predicted_best_tied", [])) > 1 else ""))
              + ("" if not s["deviation_pct_range"] else
                 f", deviation {s['deviation_pct_range'][0]:.1f} .. {s['deviation_pct_range'][1]:.1f} %")]
    if s.get("phase_ratio"):
        lines.append("measured / predicted by phase (median over variants, range): " + ", ".join(
            f"{ph} {q['median']:.2f} ({q['min']:.2f}..{q['max']:.2f})" for ph, q in s["phase_ratio"].items()))
    if s["skipped"]:
        lines.append(f"pre-selection ({res['selection']}) skipped {s['skipped']} variants: about "
                     f"{s['skipped_predicted_cost_s']:.1f} s of runs saved (predicted)")
    return "\n".join(lines) + "\n"

"""Rendering empirical runs: one scenario (tune) and a plan's batch (tune --plan, plan)."""
from __future__ import annotations

import csv
import io

from autotune.report.online import online_csv, online_table
from autotune.report.registry import renderer
from autotune.report.text import fmt_s, json_text, name_width
from autotune.results.plan import PlanResult, PlanStatusResult
from autotune.model.state import STEAL_MAX_PCT
from autotune.results.frames import SCENARIO_COLUMNS, configuration
from autotune.results.tune import ROW_COLUMNS, PlanRunResult, TuneResult, TuneRow
from autotune.specs.step import SWEEP_PREFIX


@renderer(TuneResult, "json")
def tune_json(res: TuneResult) -> str:
    return json_text(res)


TUNE_FIELDS = ROW_COLUMNS     # the CSV's columns: the frame's


@renderer(TuneResult, "csv")
def tune_csv(result: TuneResult) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=TUNE_FIELDS, lineterminator="\n")
    w.writeheader()
    for v in result.variants:
        dims = configuration(v.name)
        w.writerow({k: dims[k] if k in dims else getattr(result if k in SCENARIO_COLUMNS else v, k)
                    for k in TUNE_FIELDS})
    return buf.getvalue()


@renderer(TuneResult, "table")
def tune_table(result: TuneResult) -> str:
    res = result.to_dict()
    s = res["summary"]
    w = name_width(v.name for v in result.variants)
    runs = (f"raced (at most {res['reps']} rounds)" if res.get("design") == "auto" else f"{res['reps']}") \
        + f" x {res['steps']} steps"
    adjusted = s.get("state") is not None
    lines = [f"IVP {res['ivp']}, machine {res['machine']}, n = {res['n']:,}, nodes = {res['nodes']}, "
             f"threads = {res['threads']}, {runs} ({res['warmup']} warm-up), "
             f"h = {res['h']:.3g}, flags {' '.join(res['flags'])}"
             + (f", model {res['model']}" if res.get("model", "ecm") != "ecm" else ""), "",
             f"{'variant':{w}} {'predicted s':>12} {'measured s':>12} {'dev %':>8}"
             + (f" {'state %':>8}" if adjusted else "") + f" {'runs':>4} {'rank p/m':>9} {'x bound':>8}"]
    for v in result.variants:
        if v.measured_s is None:
            lines.append(f"{v.name:{w}} {fmt_s(v.predicted_s):>12} {'failed':>12}  {v.error}")
            continue
        over = f"{v.measured_s / s['bound_s']:8.2f}" if s.get("bound_s") else "       -"
        state = (f" {v.deviation_state_pct:8.1f}" if v.deviation_state_pct is not None else f" {'-':>8}") \
            if adjusted else ""
        left = v.race or {}
        lines.append(f"{v.name:{w}} {fmt_s(v.predicted_s):>12} {v.measured_s:12.4e} "
                     f"{v.deviation_pct:8.1f}{state} {len(v.runs_s):>4} "
                     f"{v.rank_predicted:>4}/{v.rank_measured:<4} {over}"
                     + ("  sampled" if v.sampled else "") + ("  paper" if v.baseline else "")
                     + (f"  left: {left['out']} after {left['rounds']}" if left.get("out") else ""))
    lines += control_lines(result.variants)
    fmt = lambda x: "n/a" if x is None else f"{x:.3f}"  # noqa: E731
    iv = s.get("intervals") or {}
    lines += ["", f"Spearman {fmt(s['spearman'])}{_iv(iv.get('spearman'), 3)}, Kendall {fmt(s['kendall'])}"
              f"{_iv(iv.get('kendall'), 3)}, top-1 loss "
              + ("n/a" if s["top1_loss_pct"] is None else f"{s['top1_loss_pct']:.1f} %{_iv(iv.get('top1_loss_pct'), 1)}"
                 + (f" (mean over {len(s['predicted_best_tied'])} tied, worst {s['top1_loss_worst_pct']:.1f} %)"
                    if len(s.get("predicted_best_tied", [])) > 1 else ""))
              + ("" if not s["deviation_pct_range"] else
                 f", deviation {s['deviation_pct_range'][0]:.1f} .. {s['deviation_pct_range'][1]:.1f} %"
                 + ("" if s.get("median_abs_deviation_pct") is None else
                    f" (median |deviation| {s['median_abs_deviation_pct']:.1f} %"
                    f"{_iv(iv.get('median_abs_deviation_pct'), 1)})"))]
    if iv:
        lines.append(f"  [a .. b]: {100 * iv['confidence']:.0f} % bootstrap intervals over the repetitions")
    lines += state_lines(s)
    ratios = s.get("phase_ratio") or {}
    for what, keep in (("phase", lambda ph: not ph.startswith(SWEEP_PREFIX)),
                       ("fused sweep", lambda ph: ph.startswith(SWEEP_PREFIX))):
        mine = {ph: q for ph, q in ratios.items() if keep(ph)}
        if mine:
            lines.append(f"measured / predicted by {what} (median over variants, range): " + ", ".join(
                f"{ph} {q['median']:.2f} ({q['min']:.2f}..{q['max']:.2f})" for ph, q in mine.items()))
    lines += sweep_lines(result.variants)
    if s.get("best_over_bound") is not None:
        lines.append(f"floor of the step (bound_s) {s['bound_s']:.4e} s: the measured best is "
                     f"{s['best_over_bound']:.2f} x the bound"
                     + (f" ({s['best_over_bound'] * s['bound_s'] / s['bound_wa_s']:.2f} x bound_wa_s "
                        f"{s['bound_wa_s']:.4e} s, with write-allocate)" if s.get("bound_wa_s") else "")
                     + (f", {s['best_over_paper_form']:.2f} x the best paper form ({s['best_paper_form']})"
                        if s.get("best_paper_form") else "")
                     + ("  -- below the floor: a model or measurement bug" if s["best_over_bound"] < 1 else ""))
    if s.get("bound_state_s"):
        lines.append(f"floor at the run's measured state {s['bound_state_s']:.4e} s: the measured best is "
                     f"{s['best_over_bound_state']:.2f} x it")
    if s["skipped"]:
        lines.append(f"pre-selection ({res['selection']}) skipped {s['skipped']} variants: about "
                     f"{s['skipped_predicted_cost_s']:.1f} s of runs saved (predicted)")
    lines += race_lines(s.get("race"), result.variants)
    if s.get("check"):
        lines += check_lines(s["check"])
    return "\n".join(lines) + "\n"


def control_lines(variants: list[TuneRow]) -> list[str]:
    """Step-size control: each variant's steps, per accepted step and per unit of simulated time."""
    rows = [v for v in variants if v.control and v.measured_s is not None]
    if not rows:
        return []
    w = name_width(v.name for v in rows)
    out = ["", "step control: seconds per accepted step (above), per unit of simulated time, and the steps taken",
           f"{'variant':{w}} {'s per time':>12} {'accepted':>9} {'rejected':>9} {'per step':>9}"]
    for v in rows:
        c = v.control
        per = "-" if c.get("s_per_time") is None else f"{c['s_per_time']:12.4e}"
        rate = "-" if c.get("rejected_per_step") is None else f"{c['rejected_per_step']:9.3f}"
        out.append(f"{v.name:{w}} {per:>12} {c['accepted']:>9} {c['rejected']:>9} {rate:>9}")
    return out


def _iv(interval, digits: int) -> str:
    return "" if not interval else f" [{interval[0]:.{digits}f} .. {interval[1]:.{digits}f}]"


def state_lines(s: dict) -> list[str]:
    """The machine's state in the run, the state-adjusted deviations, the noisy rounds."""
    st = s.get("state")
    if not st:
        return []
    out = [f"machine state in the run (median of its rounds): memory triad {st['bandwidth_gbs']:.1f} GB/s "
           f"(the file: {st['file_bandwidth_gbs']:.1f}"
           + (f", its runs spread {st['file_spread_pct']:.0f} %" if st.get("file_spread_pct") is not None else "")
           + f"), clock {st['clock_ghz']:.2f} GHz (the file: {st['file_clock_ghz']:.2f}); "
           f"{st['probes']} probes, {st['probe_s']:.1f} s"
           + (f", {s['probe_cost_pct']:.1f} % of the tune" if s.get("probe_cost_pct") is not None else "")]
    if s.get("median_abs_deviation_state_pct") is not None:
        lo, hi = s["deviation_state_pct_range"]
        out.append(f"state-adjusted (each variant priced at the state of its own rounds): deviation {lo:.1f} .. "
                   f"{hi:.1f} % (median |deviation| {s['median_abs_deviation_state_pct']:.1f} %, raw "
                   f"{s['median_abs_deviation_pct']:.1f} %)")
    if s.get("noisy_rounds"):
        out.append(f"noisy rounds (a reference kernel strayed): {s['noisy_rounds']}, {s['retaken_rounds']} taken again")
    st = s.get("steal")
    if st and st.get("median_pct") is not None:
        ratio = f"; wall over CPU time median {st['wall_over_cpu_median']:.2f}" if st.get("wall_over_cpu_median") else ""
        aside = (f"; runs above {STEAL_MAX_PCT:g} %: {st['runs_set_aside']} set aside and taken again"
                 + (f", {st['runs_kept_over']} kept (no retake left)" if st["runs_kept_over"] else "")
                 if st["runs_set_aside"] or st["runs_kept_over"] else "")
        out.append(f"steal (the hypervisor's share of the host's CPU time): median {st['median_pct']:.2f} %, max "
                   f"{st['max_pct']:.2f} % over {st['runs']} runs{ratio}{aside}")
    return out


def race_lines(race: dict | None, variants: list[TuneRow]) -> list[str]:
    """How the race went: the best with its interval, why it stopped, the runs each variant got."""
    if not race:
        return []
    iv = race.get("best_interval_s")
    aside = sum(len(v.noisy_runs_s) for v in variants)
    others = [n for n in race["left_in_race"] if n != race["best"]]
    if race["separated"]:
        told = "separated from every other"
    elif others:
        told = "not separated from " + ", ".join(others)
    else:
        told = "the others left within the margin"
    out = ["", race["policy"], f"  stopped after {race['rounds']} rounds and {race['runs']} runs"
           + (f" ({aside} of a noisy round set aside)" if aside else "") + f": {race['stop']}",
           f"  best (the lowest against its rounds' medians) {race['best']}"
           + (f", median {iv[0]:.4e} .. {iv[1]:.4e} s (95 % bootstrap)" if iv else "") + f": {told}"]
    return out


def sweep_lines(variants: list[TuneRow]) -> list[str]:
    """The measured-best fused variant's sweeps, each against the prediction of the parts it runs."""
    fused = [v for v in variants if v.measured_s and any(ph.startswith(SWEEP_PREFIX) for ph in v.phases or {})]
    if not fused:
        return []
    best = min(fused, key=lambda v: v.measured_s)
    out = ["", f"per sweep of {best.name}:", f"  {'sweep':14} {'predicted s':>12} {'measured s':>12} {'m/p':>6}"]
    for ph, q in best.phases.items():
        if ph.startswith(SWEEP_PREFIX):
            ratio = f"{q['measured_s'] / q['predicted_s']:6.2f}" if q.get("predicted_s") and q.get("measured_s") else "     -"
            out.append(f"  {ph:14} {fmt_s(q.get('predicted_s')):>12} {fmt_s(q.get('measured_s')):>12} {ratio}")
    return out


def check_lines(c: dict) -> list[str]:
    """The check of the pre-selection against a random sample (tune --sample)."""
    best = lambda b: "none measured" if b is None else f"{b['name']}  {b['measured_s']:.4e} s"  # noqa: E731
    drawn = f"{c['sampled']} variant" + ("" if c["sampled"] == 1 else "s")
    out = ["", f"check of the pre-selection: {drawn} drawn at random (seed {c['seed']}) from the "
               f"{c['pool'] - c['preselected']} it leaves out",
           f"  best pre-selected  {best(c['preselected_best'])}",
           f"  best sampled       {best(c['sample_best'])}",
           f"  {c['verdict']}"]
    if c["runs_saved_pct"] is not None:
        out.append(f"  running only the {c['preselected']} pre-selected saves {c['runs_saved_pct']:.1f} % of the "
                   f"runs of an exhaustive search of the {c['pool']} variants")
    return out


@renderer(PlanRunResult, "json")
def plan_run_json(res: PlanRunResult) -> str:
    return json_text(res)


@renderer(PlanRunResult, "csv")
def plan_run_csv(res: PlanRunResult) -> str:
    """The variants of every scenario (a scenario that ran online: its candidates, in the online
    columns; tune --plan --online runs every scenario so)."""
    parts = [(tune_csv if isinstance(s.result, TuneResult) else online_csv)(s.result) for s in res.scenarios
             if s.result and not _mixed(s.result)]
    return parts[0] + "".join(p.split("\n", 1)[1] for p in parts[1:]) if parts else ""


def _mixed(result) -> bool:
    """A scenario over nodes of several kinds ran (results.mixedtune; its CSV is its own)."""
    return type(result).__name__ == "MixedTuneResult"


@renderer(PlanRunResult, "table")
def plan_run_table(res: PlanRunResult) -> str:
    out = []
    for s in res.scenarios:
        job = f" (job {s.job})" if s.job else ""
        if s.result is None:
            out.append(f"{s.id}: {s.status}{job}\n" if s.status in ("queued", "running")
                       else f"{s.id}: failed{job}: {s.error}\n")
            continue
        if _mixed(s.result):                          # nodes of several kinds: its runs at their splits
            from autotune.report.mixedtune import mixed_tune_table
            out.append(f"{s.id}{job}:\n" + mixed_tune_table(s.result))
            continue
        if not isinstance(s.result, TuneResult):       # tune --plan --online: the scenario's online run
            out.append(online_table(s.result))
            continue
        reused = sum(1 for v in s.result.variants if v.reused)
        out.append(tune_table(s.result) + (f"{reused} of {len(s.result.variants)} variants measured before "
                                           f"(from the store)\n" if reused else ""))
    t = res.totals
    out.append(f"plan {res.plan}: {t.scenarios} scenarios, {t.ran} variant(s) run now, {t.reused} "
               f"from the store, {t.failed} failed, {t.scenario_errors} scenario(s) failed"
               + (f", {t.pending} waiting for their batch job" if t.pending else "") + "\n")
    return "".join(out)


@renderer(PlanResult, "json")
def plan_json(res: PlanResult) -> str:
    import json
    return json.dumps({"scenarios": len(res.scenarios), "variants": res.variant_runs, "skipped": res.skipped},
                      indent=2)


@renderer(PlanResult, "table")
def plan_table(res: PlanResult) -> str:
    lines = [f"{s.id}: {len(s.variants)} variant(s) ({s.selection}): " + ", ".join(v.name for v in s.variants)
             for s in res.scenarios]
    lines += [f"skipped {s['ivp']} n={s['n']} nodes={s['nodes']} threads={s['threads']}: {s['reason']}"
              for s in res.skipped]
    lines.append(f"{len(res.scenarios)} scenarios, {res.variant_runs} variant runs")
    return "\n".join(lines) + "\n"


@renderer(PlanStatusResult, "json")
def plan_status_json(res: PlanStatusResult) -> str:
    return json_text(res)


@renderer(PlanStatusResult, "csv")
def plan_status_csv(res: PlanStatusResult) -> str:
    return res.to_frame().to_csv(index=False)


@renderer(PlanStatusResult, "table")
def plan_status_table(res: PlanStatusResult) -> str:
    width = max((len(s.id) for s in res.scenarios), default=8)
    lines = [f"{'#':>3}  {'scenario':{width}}  {'status':13}  {'job':>8}  {'slurm':11}  measured"]
    for s in res.scenarios:
        lines.append(f"{s.index:3d}  {s.id:{width}}  {s.status:13}  {s.job or '-':>8}  "
                     f"{s.scheduler_state or '-':11}  {s.measured}/{s.variants}")
    lines += [f"submitted {x}" for x in res.submitted]
    lines.append(f"plan {res.plan}: " + ", ".join(f"{v} {k}" for k, v in sorted(res.counts().items()))
                 + f" (state: {res.state})")
    if res.store:
        lines.append(f"store {res.store}" + (f": {res.store_mode}" if res.store_mode else ""))
    return "\n".join(lines) + "\n"

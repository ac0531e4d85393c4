"""tune's summary: predicted against measured (model.compare), raw and at the state each
variant's rounds measured (model.state, priced by pipeline.tunestate), the floor at the file's
and at the run's state, the race, the figures' bootstrap intervals (model.confidence), the
pre-selection's check and what the reference kernels cost."""
from __future__ import annotations


from autotune.arith import ordered_sum
from autotune.model.check import check_sample
from autotune.model.compare import compare
from autotune.model.confidence import gain_interval, median_interval, summary_intervals
from autotune.pipeline.tunerounds import RoundLog
from autotune.pipeline.tunestate import bound_at, priced_at, reference_of, state_of
from autotune.request.run import RunPlan
from autotune.request.selection import Sample
from autotune.results.rank import RankResult
from autotune.results.tune import TuneCheck, TuneResult, TuneRow, TuneSummary
from autotune.specs.runstate import Reference, RunState
from autotune.specs.stepvalues import step_form
from autotune.storage.store import Store

CONFIDENCE = 0.95


def _steal(rows, log) -> dict | None:
    """The runs' steal shares of the host's CPU time, and their wall over CPU time (None: no run
    was measured on this host)."""
    import statistics
    steal = [x for r in rows for x in r.runs_steal_pct if x is not None]
    ratio = [x for r in rows for x in r.runs_wall_over_cpu if x is not None]
    if not steal and not ratio:
        return None
    return {"runs": len(steal), "median_pct": statistics.median(steal) if steal else None,
            "max_pct": max(steal) if steal else None,
            "wall_over_cpu_median": statistics.median(ratio) if ratio else None,
            "runs_set_aside": sum(1 for n in log.noisy if "variant" in n and n["retaken"]),
            "runs_kept_over": sum(1 for n in log.noisy if "variant" in n and not n["retaken"])}

def _state_dict(st: RunState) -> dict:
    return {"bandwidth_gbs": st.bandwidth_Bps / 1e9, "clock_ghz": st.clock_hz / 1e9,
            "file_bandwidth_gbs": st.file_bandwidth_Bps / 1e9, "file_clock_ghz": st.file_clock_hz / 1e9}


def adjust_row(ranked: RankResult, row: TuneRow, ref: Reference | None, store: Store) -> RunState | None:
    """A measured row priced again at the median state of its own runs: predicted_state_s,
    deviation_state_pct, state, and state_factor (the file's prediction over the state's, in all
    and per phase: what turns the row's measured seconds into seconds at the file's state, the
    observations calibrate --from-runs fits).  Returns the row's state (None: none measured)."""
    st = state_of(ref, row.runs_state) if row.measured_s else None
    row.predicted_state_s = row.deviation_state_pct = row.state = row.state_factor = None
    if st is None:
        return None
    base = next((r for r in ranked.ordered if r.variant.name == row.name), None)
    res = priced_at(ranked, {row.name: st}, store).get(row.name)
    at = res.ordered[0] if res and res.ordered else None
    if base is None or at is None or not at.prediction or not base.prediction:
        return st
    timers = step_form(ranked.scenario.method, base.variant).timers
    file_ph, state_ph = base.predicted_phases(timers), at.predicted_phases(timers)
    row.predicted_state_s, row.state = at.prediction.total_s, _state_dict(st)
    row.deviation_state_pct = 100.0 * (at.prediction.total_s - row.measured_s) / row.measured_s
    row.state_factor = {"total": base.prediction.total_s / at.prediction.total_s,
                        "phases": {ph: file_ph[ph] / state_ph[ph] for ph in file_ph if file_ph[ph] and state_ph.get(ph)}}
    return st


def state_adjusted(ranked: RankResult, rows: list[TuneRow], store: Store) -> RunState | None:
    """Every measured row priced again at its own state (adjust_row: the rows this run measured
    were as they finished, here those measured before, from the store); returns the run's state
    (the median over every run)."""
    ref = reference_of(ranked)
    for r in rows:
        if r.reused:
            adjust_row(ranked, r, ref, store)
    return state_of(ref, [s for r in rows for s in r.runs_state])


def _race(plan: RunPlan, log: RoundLog, rows: list[TuneRow]) -> dict | None:
    if plan.race is None or log.race is None:
        return None
    best = log.race.leader
    interval = None
    runs = {r.name: r.runs_s for r in rows if r.name == best and r.runs_s}
    if runs:
        interval = median_interval(runs[best], CONFIDENCE)
    return {"policy": (log.policy or plan.race).describe(), "stop": log.race.stop, "separated": log.race.separated,
            "best": best, "best_interval_s": interval, "rounds": log.rounds, "runs": log.runs,
            "left_in_race": list(log.race.alive)}


def summarize(ranked: RankResult, sel, plan: RunPlan, sample: Sample | None, store: Store,
              log: RoundLog | None = None, wall_s: float | None = None) -> TuneResult:
    sc = ranked.scenario
    log = log or RoundLog()
    by_name = {r.variant.name: r for r in ranked.ordered}
    skipped = [(r.variant.name, r.prediction.total_s) for r in ranked.ordered
               if r.variant.name not in sel.rows and r.prediction]
    rows = list(sel.rows.values())
    summary = TuneSummary(**compare(rows))
    summary.bound_s, summary.bound_wa_s = ranked.bound_s, ranked.bound_wa_s
    ok = [r for r in rows if r.measured_s]
    if ok and ranked.bound_s:
        summary.best_over_bound = min(r.measured_s for r in ok) / ranked.bound_s
    run_state = state_adjusted(ranked, rows, store)
    if run_state:
        adjusted = [TuneRow(r.name, r.predicted_state_s, r.measured_s) for r in ok if r.predicted_state_s]
        figures = compare(adjusted)
        summary.median_abs_deviation_state_pct = figures.get("median_abs_deviation_pct")
        summary.deviation_state_pct_range = figures.get("deviation_pct_range")
        spread = sc.machine.bandwidth_spread("MEM", sc.node_threads)   # how firm the file's own figure is
        summary.state = dict(_state_dict(run_state), probes=len(log.probes), probe_s=log.probe_s,
                             file_spread_pct=None if spread is None else 100.0 * spread)
        floor = bound_at(ranked, run_state, store)
        if floor:
            summary.bound_state_s = floor.total_s
            summary.best_over_bound_state = min(r.measured_s for r in ok) / floor.total_s if ok else None
    summary.probe_cost_pct = 100.0 * log.probe_s / wall_s if wall_s and log.probes else None
    rounds = [n for n in log.noisy if "variant" not in n]     # a run set aside for its steal names its variant
    summary.noisy_rounds = len(rounds)
    summary.retaken_rounds = sum(1 for n in rounds if n["retaken"])
    summary.steal = _steal(rows, log)
    summary.race = _race(plan, log, rows)
    summary.intervals = summary_intervals(ok, CONFIDENCE) if ok else None
    paper = [r for r in ok if by_name[r.name].variant.is_paper_form]
    if paper:
        best_paper = min(paper, key=lambda r: r.measured_s)
        summary.best_paper_form = best_paper.name
        summary.best_over_paper_form = min(r.measured_s for r in ok) / best_paper.measured_s
    summary.skipped = len(skipped)
    summary.skipped_predicted_cost_s = ordered_sum(t for _, t in skipped) * (plan.steps * plan.reps)
    if sample:
        checked = [r for r in rows if not r.baseline]     # the baseline is no part of the check
        gain = gain_interval([r for r in checked if r.measured_s], CONFIDENCE)
        summary.check = TuneCheck(**check_sample(checked, len(sel.pool), ranked.rule.describe(), sample.seed,
                                                 gain_interval=gain))
    return TuneResult(sc.ivp.name, sc.method.name, sc.machine.name, sc.n, sc.nodes, sc.threads, plan.steps,
                      plan.warmup, plan.reps, plan.h, list(plan.flags), ranked.rule.describe(),
                      rows, summary, ranked.model, "auto" if plan.race else "fixed", sc.machine.sha256 or None)

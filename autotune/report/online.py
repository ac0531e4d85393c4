"""Rendering online runs (tune --online, tune --ingest) and the online solver's source (generate --online)."""
from __future__ import annotations

from autotune.report.registry import renderer
from autotune.report.text import csv_text, fmt_s, json_text, name_width
from autotune.results.frames import scenario_head
from autotune.results.online import CANDIDATE_COLUMNS, OnlineResult, OnlineSourceResult


@renderer(OnlineResult, "json")
def online_json(res: OnlineResult) -> str:
    return json_text(res)


@renderer(OnlineResult, "csv")
def online_csv(res: OnlineResult) -> str:
    return csv_text([dict(scenario_head(res), **c, **c["configuration"]) for c in res.to_dict()["candidates"]],
                    CANDIDATE_COLUMNS)


@renderer(OnlineResult, "table")
def online_table(res: OnlineResult) -> str:
    w = name_width(c.name for c in res.candidates)
    built = f", built in {res.build_s:.1f} s" if res.build_s is not None else ""
    ran = f", {res.wall_s:.2f} s launch to exit" if res.wall_s is not None else ""
    lines = [f"IVP {res.ivp}, machine {res.machine}, n = {res.n:,}, nodes = {res.nodes}, threads = {res.threads}: "
             f"online solver of {len(res.candidates)} variants, {res.steps} steps{built}{ran}"
             + ("" if res.source == "run" else f" (from {res.source})"), ""]
    lines += res.log
    if res.log:
        lines.append("")
    lines.append(f"{'#':>2} {'variant':{w}} {'predicted s':>12} {'trial s':>12} {'dev %':>7} {'timed':>5} "
                 f"{'steps':>6}  left")
    for i, c in enumerate(res.candidates, 1):
        dev = f"{c.deviation_pct:7.1f}" if c.deviation_pct is not None else f"{'-':>7}"
        trial = f"{c.trial_s:12.4e}" if c.trial_s is not None else f"{'-':>12}"
        left = f"{c.out} after round {c.out_after}, x{c.ratio:.3f}" if c.out else ("chosen" if c.chosen else "")
        lines.append(f"{i:>2} {c.name:{w}} {fmt_s(c.predicted_s):>12} {trial} {dev} {c.trial_steps:>5} {c.steps:>6}  "
                     f"{left}")
    median = f"{res.median_step_s:.4e} s" if res.median_step_s is not None else "n/a"
    lines += ["", f"choice: {res.choice}; the run's median step {median}; trial {res.trial_steps} of {res.steps} steps "
              f"({100.0 * res.trial_steps / max(1, res.steps):.1f} %), {res.switches} switches"
              + (f", re-checked every {res.recheck} steps ({len(res.trials)} trials)" if res.recheck else ""),
              f"stored: {sum(c.stored for c in res.candidates)} runs, marked online (the trial's timed steps of "
              f"each candidate)"]
    c = res.control
    if c:
        lines.append(f"step control (rtol {c['rtol']:g}, atol {c['atol']:g}): {c['accepted']} steps accepted, "
                     f"{c['rejected']} rejected, h {c['h_min']:.3g} .. {c['h_median']:.3g} (median) .. {c['h_max']:.3g}, "
                     f"simulated time reached {c['t']:.6g}; the trial compared the candidates per accepted step")
    return "\n".join(lines) + "\n"


@renderer(OnlineSourceResult, "json")
def online_source_json(res: OnlineSourceResult) -> str:
    return json_text(res)


@renderer(OnlineSourceResult, "table")
def online_source_table(res: OnlineSourceResult) -> str:
    w = name_width(c["name"] for c in res.candidates)
    lines = [f"wrote {res.source}: the online solver of {len(res.candidates)} variants of {res.ivp} (machine "
             f"{res.machine}, n = {res.n:,}, nodes = {res.nodes}, threads = {res.threads})"
             + (f"; {res.left_out} more pre-selected, left out" if res.left_out else ""), "",
             f"{'#':>2} {'variant':{w}} {'predicted s':>12}"]
    lines += [f"{i:>2} {c['name']:{w}} {fmt_s(c['predicted_s']):>12}" for i, c in enumerate(res.candidates, 1)]
    lines += ["", "build:"] + [f"  {cmd}" for cmd in res.build]
    return "\n".join(lines) + "\n"

"""Benchmark of tuning on a shared machine: does tune give the same answer twice, and what does
racing save?

    python -m benchmarks.tuning --machine FILE [--apart-min 30] [--pairs 10] [--json out.json]
                                    [--ivps heat2d,inverterchain] [--n 4e6] [--threads 2]

Two parts, in one run:

  apart   one `tune --top 5 --sample 10 --reps R` per IVP, then the pairs below, then the same
          tunes again once --apart-min minutes have passed since the first: per IVP the median
          |deviation| of both, raw and state-adjusted (each variant priced at the state its
          rounds measured), and how far apart the two are (target: state-adjusted within 5
          percentage points)
  race    --pairs times, `tune --top 5 --reps 7` and `tune --top 5 --reps auto` of the first IVP,
          back to back, in alternating order: whether the race picked the fixed design's best or
          one within 2 % of it (by the fixed run's medians; target: 9 of 10), the runs each used
          (target: at most half), and the reference kernels' share of each tune's time (target:
          at most 10 %)

Every tune is a subprocess of the command line with --format json; all use one store (the
analyses are made once), and none reuses another's runs (tune runs again without --resume).
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from autotune.storage.atomic import write_text

SAME_PCT = 2.0          # the race's pick counts as the fixed design's best within this
APART_PP = 5.0          # state-adjusted median |deviation| of two runs apart, at most this far apart


def tune(a, ivp: str, *extra: str) -> tuple[dict, float]:
    """One tune's JSON and its wall seconds."""
    cmd = [sys.executable, "-m", "autotune", "tune", "--ivp", ivp, "--machine", a.machine, "--nodes", "1",
           "--threads", str(a.threads), "--n", str(a.n), "--top", "5", "--steps", str(a.steps),
           "--format", "json", *extra] + (["--store", str(a.store)] if a.store else [])
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"tune failed: {' '.join(cmd)}: {proc.stderr.strip()[-400:]}")
    return json.loads(proc.stdout), wall


def apart_figures(res: dict) -> dict:
    s = res["summary"]
    return {"raw": s["median_abs_deviation_pct"], "state": s.get("median_abs_deviation_state_pct"),
            "state_gbs": (s.get("state") or {}).get("bandwidth_gbs"), "clock_ghz": (s.get("state") or {}).get("clock_ghz"),
            "noisy": s.get("noisy_rounds"), "probe_pct": s.get("probe_cost_pct")}


def race_pair(a, ivp: str, auto_first: bool) -> dict:
    order = [("auto", ["--reps", "auto"]), ("fixed", ["--reps", "7"])]
    got = {}
    for kind, extra in (order if auto_first else order[::-1]):
        got[kind] = tune(a, ivp, *extra)
    fixed, auto = got["fixed"][0], got["auto"][0]
    med = {v["name"]: v["measured_s"] for v in fixed["variants"] if v["measured_s"]}
    fixed_best = min(med, key=med.get)
    pick = auto["summary"]["race"]["best"]
    loss = 100.0 * (med[pick] / med[fixed_best] - 1.0) if pick in med else None
    runs = lambda r: sum(len(v.get("runs_s") or []) + len(v.get("noisy_runs_s") or []) for v in r["variants"])  # noqa: E731
    return {"fixed_best": fixed_best, "auto_best": pick, "loss_pct": loss,
            "same": loss is not None and loss <= SAME_PCT, "fixed_runs": runs(fixed), "auto_runs": runs(auto),
            "stop": auto["summary"]["race"]["stop"], "separated": auto["summary"]["race"]["separated"],
            "probe_pct": {k: got[k][0]["summary"].get("probe_cost_pct") for k in got},
            "wall_s": {k: got[k][1] for k in got}}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.tuning", description=__doc__.split("\n")[0])
    p.add_argument("--machine", required=True)
    p.add_argument("--ivps", default="heat2d,inverterchain")
    p.add_argument("--n", type=lambda t: int(float(t)), default=4_000_000)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--reps", type=int, default=5, help="repetitions of the apart runs")
    p.add_argument("--apart-min", type=float, default=30.0)
    p.add_argument("--pairs", type=int, default=10)
    p.add_argument("--parts", default="apart,race", help="what to measure: apart, race or both")
    p.add_argument("--store", type=Path)
    p.add_argument("--json", type=Path)
    a = p.parse_args(argv)
    ivps = [x for x in a.ivps.split(",") if x]
    out: dict = {"apart": {}, "race": []}

    def save():
        if a.json:
            write_text(a.json, json.dumps(out, indent=2) + "\n", "json")

    parts = set(a.parts.split(","))
    first: dict[str, dict] = {}
    t_first = time.time()
    for ivp in ivps if "apart" in parts else []:
        first[ivp] = apart_figures(tune(a, ivp, "--sample", "10", "--reps", str(a.reps))[0])
        print(f"apart, first run: {ivp}: {first[ivp]}", flush=True)
        out["apart"][ivp] = {"first": first[ivp]}
        save()
    for i in range(a.pairs if "race" in parts else 0):
        pair = race_pair(a, ivps[0], auto_first=i % 2 == 0)
        out["race"].append(pair)
        print(f"race pair {i + 1}: {pair}", flush=True)
        save()
    wait = t_first + 60 * a.apart_min - time.time()
    if wait > 0 and "apart" in parts:
        print(f"waiting {wait / 60:.1f} min for the second apart runs", flush=True)
        time.sleep(wait)
    for ivp in ivps if "apart" in parts else []:
        second = apart_figures(tune(a, ivp, "--sample", "10", "--reps", str(a.reps))[0])
        out["apart"][ivp]["second"] = second
        print(f"apart, second run: {ivp}: {second}", flush=True)
        save()
    report(out)
    return 0


def report(out: dict) -> None:
    print("\ntwo runs apart: median |deviation| %, raw and state-adjusted")
    print(f"{'ivp':14} {'raw 1':>7} {'raw 2':>7} {'|d|':>6} {'state 1':>8} {'state 2':>8} {'|d|':>6}  held")
    for ivp, r in out["apart"].items():
        f, s = r["first"], r.get("second")
        if not s:
            continue
        d_raw, d_state = abs(f["raw"] - s["raw"]), abs(f["state"] - s["state"]) if f["state"] is not None and s["state"] is not None else None
        print(f"{ivp:14} {f['raw']:7.1f} {s['raw']:7.1f} {d_raw:6.1f} {f['state'] or 0:8.1f} {s['state'] or 0:8.1f} "
              f"{d_state if d_state is not None else float('nan'):6.1f}  "
              f"{'yes' if d_state is not None and d_state <= APART_PP else 'no'}")
    pairs = out["race"]
    if pairs:
        same = sum(1 for p in pairs if p["same"])
        ratio = statistics.median(p["auto_runs"] / p["fixed_runs"] for p in pairs)
        probe = [v for p in pairs for v in p["probe_pct"].values() if v is not None]
        print(f"\nracing against 7 fixed repetitions, {len(pairs)} pairs: same best (or within {SAME_PCT:g} %) "
              f"in {same}; runs used, auto / fixed: median {ratio:.2f} (max "
              f"{max(p['auto_runs'] / p['fixed_runs'] for p in pairs):.2f}); reference kernels "
              f"{statistics.median(probe) if probe else float('nan'):.1f} % of a tune's time (max "
              f"{max(probe) if probe else float('nan'):.1f} %)")
        for i, p in enumerate(pairs, 1):
            print(f"  {i:2}  fixed {p['fixed_runs']:3} runs  auto {p['auto_runs']:3} runs  loss "
                  f"{p['loss_pct'] if p['loss_pct'] is not None else float('nan'):5.1f} %  stop: {p['stop']}"
                  + ("  (same best)" if p["fixed_best"] == p["auto_best"] else ""))


if __name__ == "__main__":
    raise SystemExit(main())

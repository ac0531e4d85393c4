"""Benchmark of predictions across sizes: predicted against measured from "in cache" to "far
beyond the last-level cache", on this host.

    python -m benchmarks.sizes measure --out DIR [--machine localhost] [--set cover|all]
    python -m benchmarks.sizes report DIR [--json out.json] [--learn loo|SIZES]

`measure` runs `autotune tune` for every IVP x configuration (nodes x threads) x size and keeps
each run's JSON in DIR (a run already there is not repeated: an interrupted benchmark resumes).
The variants run round-robin in one tune run; --set cover runs the paper's 12, a pairwise cover
of the dimensions and a fixed random sample (the same names at every size), --set all every
variant.  `report` predicts the same scenarios with the model of this checkout and compares with
the stored measurements: Spearman, Kendall, tie-aware top-1 loss, median |deviation| per size,
and the median measured/predicted ratio per solver phase.  Predicting the measured runs again
lets two models be compared on identical measurements.  With --learn the model learns from the
measured runs (calibrate --from-runs' fit) and each cell is predicted with factors fitted on runs
it is not among: `loo` fits on every other size (leave one size out), a list of sizes (1.5e6,4e6)
fits on those and reports the others.
"""
from __future__ import annotations

import argparse
import json
import math
import random
import subprocess
import sys
import time
from pathlib import Path

from autotune.storage.atomic import write_text

IVPS = ("inverterchain", "heat2d")
CONFIGS = ((1, 2), (2, 1))                 # nodes x threads
SIZES = (150_000, 600_000, 1_500_000, 4_000_000)
PHASES = ("LC", "RHS", "COMM", "COPY", "APPROX+UPDATE")


def valid_n(ivp: str, n: int) -> int:
    """heat2d needs n = N**2: the square at or below n."""
    return math.isqrt(n) ** 2 if ivp == "heat2d" else n


def steps_for(n: int) -> int:
    """Steps per run: about 16 M component-steps, at least 4 (short runs are mostly start-up)."""
    return min(40, max(4, round(16e6 / n)))


def variant_set(ivp: str, kind: str, sample: int = 12, seed: int = 0) -> list[str] | None:
    """The names a run measures (None: all)."""
    if kind == "all":
        return None
    from autotune.specs.ivp import load_ivp
    from autotune.specs.variants import enumerate_variants, pairwise_cover, spaces
    pool = enumerate_variants(spaces(load_ivp(ivp)))
    chosen = [v for v in pool if v.is_paper_form] + pairwise_cover(pool)
    names = list(dict.fromkeys(v.name for v in chosen))
    rest = sorted(v.name for v in pool if v.name not in names)
    return names + random.Random(seed).sample(rest, min(sample, len(rest)))


def runnable(names: list[str], ivp: str, machine: str, n: int, nodes: int, threads: int) -> list[str]:
    """The names that run at this scenario: a value that does not pay there (store=nt where the
    last level holds what it streams: the store dimension's pays hook) is refused by tune."""
    from autotune.pipeline.applicable import applicable_pool
    from autotune.specs.ivp import load_ivp
    from autotune.specs.machine import load_machine
    from autotune.request.defaults import DEFAULT_METHOD
    from autotune.specs.method import load_method
    from autotune.specs.scenario import Scenario
    sc = Scenario(load_ivp(ivp), load_method(DEFAULT_METHOD), load_machine(machine), n, nodes, threads)
    kept = {v.name for v in applicable_pool(sc)[0]}
    return [name for name in names if name in kept]


def _file(out: Path, ivp: str, nodes: int, threads: int, n: int) -> Path:
    return out / f"{ivp}-{nodes}x{threads}-{n}.json"


def measure(args) -> None:
    args.out.mkdir(parents=True, exist_ok=True)
    for ivp in args.ivps:
        names = variant_set(ivp, args.set)
        for nodes, threads in args.configs:
            for size in args.sizes:
                n = valid_n(ivp, size)
                path = _file(args.out, ivp, nodes, threads, n)
                if path.exists():
                    continue
                sel = ["--all"] if names is None else [
                    "--variants", ";".join(runnable(names, ivp, args.machine, n, nodes, threads))]
                cmd = [sys.executable, "-m", "autotune", "tune", "--ivp", ivp, "--machine", args.machine,
                       "--nodes", str(nodes), "--threads", str(threads), "--n", str(n), *sel,
                       "--steps", str(steps_for(n)), "--warmup", "1", "--reps", str(args.reps), "--format", "json"]
                if args.store:
                    cmd += ["--store", str(args.store)]
                print(f"benchmarks.sizes: {ivp} {nodes}x{threads} n={n} ...", file=sys.stderr, flush=True)
                t0 = time.perf_counter()
                proc = subprocess.run(cmd, capture_output=True, text=True)
                if proc.returncode != 0:
                    raise SystemExit(f"benchmarks.sizes: {' '.join(cmd)} failed ({proc.returncode}): {proc.stderr[-2000:]}")
                write_text(path, proc.stdout, "out")      # whole or not at all: a file here is done
                print(f"benchmarks.sizes:   {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)


def report_one(run: dict, machine: str, store) -> dict:
    """One measured tune run against this checkout's predictions of it."""
    from autotune import api
    from autotune.model.compare import compare
    ranked = api.rank(run["ivp"], nodes=run["nodes"], threads=run["threads"], n=run["n"], machine=machine,
                      method=run["method"], store=store)
    rows = []
    for m in run["variants"]:
        vr = ranked.variant(m["name"])
        if vr.prediction is None or m["measured_s"] is None:
            continue
        pred = vr.predicted_phases()
        phases = {ph: {"predicted_s": pred.get(ph), "measured_s": pm.get("measured_s")}
                  for ph, pm in (m.get("phases") or {}).items()}
        rows.append({"name": m["name"], "predicted_s": vr.prediction.total_s, "measured_s": m["measured_s"],
                     "phases": phases})
    summary = compare(rows)
    return {"ivp": run["ivp"], "config": f"{run['nodes']}x{run['threads']}", "n": run["n"],
            "variants": len(rows), "spearman": summary["spearman"], "kendall": summary["kendall"],
            "top1_loss_pct": summary["top1_loss_pct"], "median_abs_dev_pct": summary.get("median_abs_deviation_pct"),
            "bound_s": ranked.bound_s, "best_measured_s": min((r["measured_s"] for r in rows), default=None),
            "phase_ratio": {ph: v["median"] for ph, v in summary["phase_ratio"].items()}}


def _fmt(x, spec: str) -> str:
    return "-" if x is None else format(x, spec)


def size_class(ivp: str, n: int) -> int:
    """The benchmark size a run's n stands for (heat2d's squares lie just below)."""
    return min(SIZES, key=lambda s: abs(valid_n(ivp, s) - n))


def learned_cells(runs: list[dict], machine_name: str, store_path, learn: str) -> list[dict]:
    """Each measured cell predicted with factors fitted on the cells of other sizes (learn = "loo")
    or of the sizes listed; the cells of the listed sizes themselves are left out."""
    from contextlib import closing

    from autotune.model.learnfit import Pricer
    from autotune.pipeline import learn as lm
    from autotune.specs.machine import load_machine
    from autotune.storage.paths import default_store_path
    from autotune.storage.store import Store
    machine = load_machine(machine_name, "ecm")
    fit_sizes = None if learn == "loo" else {size_class("", int(float(x))) for x in learn.split(",")}
    with closing(Store(store_path or default_store_path())) as store:
        flat = [r for run in runs for r in lm.runs_of_tune(run)]
        groups, observed, _ = lm.price_groups(flat, machine, store, lambda msg: None)
        pricer = Pricer(observed.units)
        out = []
        for g in groups:
            size = size_class(g.key[0], g.key[2])
            if fit_sizes is not None and size in fit_sizes:
                continue
            train = [h for h in groups if size_class(h.key[0], h.key[2]) != size
                     and (fit_sizes is None or size_class(h.key[0], h.key[2]) in fit_sizes)]
            learned = lm.fit_groups(machine, train, observed, pricer)
            pred = lm.predict_with(g, learned, store)
            rows = [{"name": r.variant, "predicted_s": pred[r.variant], "measured_s": r.measured_s} for r in g.runs]
            out.append(_cell(g.key, rows, learned))
    return out


def _cell(key: tuple, rows: list[dict], learned) -> dict:
    from autotune.model.compare import compare
    summary = compare(rows)
    return {"ivp": key[0], "config": f"{key[3]}x{key[4]}", "n": key[2], "variants": len(rows),
            "spearman": summary["spearman"], "kendall": summary["kendall"], "top1_loss_pct": summary["top1_loss_pct"],
            "median_abs_dev_pct": summary.get("median_abs_deviation_pct"), "phase_ratio": {},
            "factors": dict(sorted(learned.factors.items())) if learned else {}}


def report(args) -> None:
    files = sorted(args.dir.glob("*.json"))
    if not files:
        raise SystemExit(f"benchmarks.sizes: {args.dir}: no measured runs (run `measure` first)")
    runs = [json.loads(f.read_text()) for f in files]
    if args.learn:
        out = learned_cells(runs, args.machine, args.store, args.learn)
        print(f"learned ({'leave one size out' if args.learn == 'loo' else 'fitted on ' + args.learn}): "
              "each cell predicted with factors fitted on other sizes' runs")
    else:
        out = [report_one(run, args.machine, args.store) for run in runs]
    out.sort(key=lambda r: (r["ivp"], r["config"], r["n"]))
    print(f"{'ivp':14} {'cfg':4} {'n':>8} {'var':>4} {'spear':>6} {'kend':>6} {'top1%':>6} {'|dev|%':>6}  "
          + " ".join(f"{p[:6]:>6}" for p in PHASES))
    for r in out:
        print(f"{r['ivp']:14} {r['config']:4} {r['n']:>8} {r['variants']:>4} {_fmt(r['spearman'], '6.3f')} "
              f"{_fmt(r['kendall'], '6.3f')} {_fmt(r['top1_loss_pct'], '6.1f')} {_fmt(r['median_abs_dev_pct'], '6.1f')}  "
              + " ".join(_fmt(r["phase_ratio"].get(p), "6.2f") for p in PHASES))
    print("targets: spearman >= 0.8, top-1 loss <= 5 %, median |dev| <= 20 % (phase columns: measured/predicted)")
    devs = [r["median_abs_dev_pct"] for r in out if r["median_abs_dev_pct"] is not None]
    print(f"cells with median |dev| <= 15 %: {sum(d <= 15 for d in devs)} of {len(devs)}; <= 20 %: "
          f"{sum(d <= 20 for d in devs)}")
    if args.json:
        write_text(args.json, json.dumps(out, indent=1), "json")


def _configs(text: str) -> list[tuple[int, int]]:
    return [tuple(int(x) for x in item.split("x")) for item in text.split(",")]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.sizes", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("measure")
    m.add_argument("--out", type=Path, required=True)
    m.add_argument("--machine", default="localhost")
    m.add_argument("--ivps", type=lambda t: t.split(","), default=list(IVPS))
    m.add_argument("--configs", type=_configs, default=list(CONFIGS), help="e.g. 1x2,2x1 (nodes x threads)")
    m.add_argument("--sizes", type=lambda t: [int(float(x)) for x in t.split(",")], default=list(SIZES))
    m.add_argument("--set", choices=("cover", "all"), default="cover")
    m.add_argument("--reps", type=int, default=3)
    m.add_argument("--store", type=Path)
    r = sub.add_parser("report")
    r.add_argument("dir", type=Path)
    r.add_argument("--machine", default="localhost")
    r.add_argument("--store", type=Path)
    r.add_argument("--json", type=Path)
    r.add_argument("--learn", help="'loo' (fit on the other sizes) or the sizes to fit on (e.g. 1.5e6,4e6)")
    args = ap.parse_args(argv)
    (measure if args.cmd == "measure" else report)(args)


if __name__ == "__main__":
    main()

"""Benchmark of step-size control (docs/method.md, "Step-size control"): its accuracy against a
reference no one here wrote, and its cost per accepted step against the fixed step.

    python -m benchmarks.control accuracy [--ivps heat2d,...] [--tolerances 1e-6,1e-9] [--horizon 200] [--json out.json]
    python -m benchmarks.control cost --machine FILE [--cases ivp:n;...] [--configs 1x2,2x1]
                                      [--rounds 5] [--steps 6] [--json out.json]

accuracy: every shipped IVP at a size that runs in seconds (SMALL), from t = 0 to --horizon of its
default steps, with the paper's form at each tolerance (rtol = atol) on one rank.  The reference
is scipy's solve_ivp (Radau, rtol = atol = 1e-12) of the same right-hand side in numpy
(specs.numpyrhs).  Printed: the error at the end time as the weighted RMS norm the solver
controls (err <= 1 is the tolerance met; the target is <= 10), the largest relative error, the
accepted and rejected steps, and the steps scipy's Radau and DOP853 take at the same tolerance.

cost: each case's fixed-step solver and its controlled ones (rtol 1e-6: one per norm and
reduction the form can run), the paper's form, the fused block=l1 sweep and the pipelined step,
built with tune's flags for the machine file, run
round-robin --rounds rounds of --steps steps, each controlled run right after a run of its fixed
one (the controlled one from a step small enough that none is rejected).  Printed: the median
seconds per accepted step of each, the median over the pairs of what the control adds (a share of
the step; within 5 % compares the fixed step plus the priced control with the fixed step times
that ratio), the control's own seconds as the solver timed them (saving y, the norm, its
reduction), what the model adds for the control, and the model's deviation on both (the
predictions from the store: AUTOTUNE_STORE or --store).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np
from scipy.integrate import solve_ivp

from autotune.codegen.solver import solver_source
from autotune.request.run import RunOptions
from autotune.specs.control import Control
from autotune.specs.ivp import ivp_names, load_ivp
from autotune.specs.machine import load_machine
from autotune.specs.method import load_method
from autotune.specs.numpyrhs import numpy_rhs
from autotune.specs.variants import Variant, enumerate_variants, fixed_twin, parse_variant, spaces
from autotune.storage.atomic import write_text
from autotune.tools.build import build, run
from autotune.tools.launcher import parse_launcher

METHOD = "radauIIA7"
SMALL = {"heat2d": 400, "heat3d": 512, "inverterchain": 40, "medakzo": 200, "string-mix": 200,
         "string-row": 200, "wave1d": 200}
DEFAULT_STEPS = 200          # the end time: this many of the IVP's default steps (--horizon)
LAUNCHER = parse_launcher(None)
FUSED = "lc=jl-onepass,comm={},au=fused,pred=direct,buf=ghost,rhs=onepass,fuse=rhs-lc,block=l1"
PIPE = FUSED + ",pipe=wavefront"
COST_CASES = [("heat2d", 4_000_000), ("inverterchain", 4_000_000)]


def weighted_error(y: np.ndarray, ref: np.ndarray, tol: float) -> float:
    """The norm the solver controls, of the error at the end: sqrt(mean((e / (tol + tol |ref|))^2))."""
    return float(np.sqrt(np.mean(((y - ref) / (tol + tol * np.abs(ref))) ** 2)))


def accuracy(names: list[str], tolerances: list[float], horizon: int, work: Path) -> list[dict]:
    method, rows = load_method(METHOD), []
    flags = RunOptions().plan(1.0).flags
    for name in names:
        ivp, n = load_ivp(name), SMALL[name]
        t_end = horizon * ivp.default_step(n)
        v = Variant("ijl", "neighbour" if "neighbour" in ivp.comm else "allgather")
        y0 = None
        for tol in tolerances:
            exe = build(solver_source(ivp, method, v, n, control=Control(tol, tol)), flags)
            if y0 is None:
                run(exe, LAUNCHER, 1, 1, n, ivp.size_value(n), 0, 1.0, 0, work / "y0.bin", t_end=t_end)
                y0 = np.fromfile(work / "y0.bin")
                ref = solve_ivp(lambda t, y: numpy_rhs(ivp, n, y), (0.0, t_end), y0, method="Radau", rtol=1e-12,
                                atol=1e-12).y[:, -1]
            res = run(exe, LAUNCHER, 1, 1, n, ivp.size_value(n), 10_000_000, t_end / 1000, 0, work / "y.bin",
                      t_end=t_end)
            y = np.fromfile(work / "y.bin")
            theirs = {m: solve_ivp(lambda t, y: numpy_rhs(ivp, n, y), (0.0, t_end), y0, method=m, rtol=tol, atol=tol)
                      for m in ("Radau", "DOP853")}
            c = res["control"]
            rows.append({"ivp": name, "n": n, "t_end": t_end, "tolerance": tol,
                         "error": weighted_error(y, ref, tol),
                         "max_rel_error": float(np.max(np.abs(y - ref)) / np.max(np.abs(ref))),
                         "accepted": c["accepted"], "rejected": c["rejected"], "h_min": c["h_min"],
                         "h_max": c["h_max"], "reached": res["t"],
                         **{f"{m.lower()}_steps": len(s.t) - 1 for m, s in theirs.items()},
                         **{f"{m.lower()}_error": weighted_error(s.y[:, -1], ref, tol) for m, s in theirs.items()}})
            r = rows[-1]
            print(f"{name:14s} {tol:7.0e} error {r['error']:8.3f} ({r['max_rel_error']:.2e} rel)  steps "
                  f"{r['accepted']:6d} + {r['rejected']:4d} rejected   Radau {r['radau_steps']:6d} "
                  f"(error {r['radau_error']:.3f})   DOP853 {r['dop853_steps']:6d} (error {r['dop853_error']:.3f})",
                  flush=True)
    return rows


def predicted(ivp: str, n: int, procs: int, threads: int, machine: str, store, names: set[str]) -> dict:
    """The model's seconds per (accepted) step of the named variants, fixed and controlled (at no
    rejection, as the cost runs take none: the store's rate for the problem is set aside)."""
    import autotune
    from autotune.pipeline.controlrate import KIND, rate_key
    from autotune.storage.store import Store
    out = {}
    for key, tol in (("fixed", None), ("controlled", 1e-6)):
        req = autotune.RankRequest.of(ivp, n=n, nodes=procs, threads=threads, machine=machine, rtol=tol)
        if tol is not None:
            st = Store(store)
            try:
                st.put_derived(KIND, rate_key(req.scenario.scenario()), json.dumps({"accepted": 0, "rejected": 0}).encode())
            finally:
                st.close()
        ranked = autotune.rank(req, store=store)
        for r in ranked.ordered:
            if r.name in names:
                out[(r.name, key)] = (r.predicted_s, r.prediction.control_s if r.prediction else None)
    return out


def _controlled_forms(ivp, form: str) -> list:
    """The controlled variants of a fixed-step form: one per norm and reduction it can run."""
    fixed = parse_variant(form, spaces(ivp))
    return [v for v in enumerate_variants(spaces(ivp, True)) if fixed_twin(v) == fixed]


def cost(cases: list[tuple[str, int]], configs: list[tuple[int, int]], machine: str, rounds: int, steps: int,
         work: Path, store=None) -> list[dict]:
    method, mach = load_method(METHOD), load_machine(machine)
    flags = RunOptions().plan(1.0).flags
    built = []
    for name, n in cases:
        ivp = load_ivp(name)
        comm = "neighbour" if "neighbour" in ivp.comm else "allgather"
        for form in (Variant("ijl", "allgather").name, FUSED.format(comm), PIPE.format(comm)):
            v = parse_variant(form, spaces(ivp))
            fixed = build(solver_source(ivp, method, v, n, mach), flags)
            ctl = [(c, build(solver_source(ivp, method, c, n, mach, control=Control(1e-6, 1e-6)), flags))
                   for c in _controlled_forms(ivp, form)]
            built.append((name, n, ivp, v, fixed, ctl))
    names = {v.name for *_, v, _, _ in built} | {c.name for *_, ctl in built for c, _ in ctl}
    preds = {(name, n, procs, threads): predicted(name, n, procs, threads, machine, store, names)
             for name, n in cases for procs, threads in configs}      # first: a failure shows before the runs
    times: dict = {}
    h0 = 1e-12     # the controlled run's first step: the error stays within the tolerance for all
    for r in range(rounds):
        for name, n, ivp, v, fixed_exe, ctl in built:
            for procs, threads in configs:
                h = ivp.default_step(n)
                for c, exe in ctl:     # each controlled run right after a fixed one: the pair shares the minute
                    fixed = run(fixed_exe, LAUNCHER, procs, threads, n, ivp.size_value(n), steps, h, 1, pin=procs == 1)
                    got = run(exe, LAUNCHER, procs, threads, n, ivp.size_value(n), steps, h0, 1, pin=procs == 1,
                              t_end=1.0)
                    if got["control"]["rejected"]:
                        raise SystemExit(f"{name} {c.name}: the cost run rejected a step; start from a smaller h")
                    times.setdefault((name, n, v.name, c.name, procs, threads), []).append(
                        (fixed["median_step_s"], got["median_step_s"], got["control"]["control_s"]))
        print(f"round {r + 1} of {rounds}", file=sys.stderr, flush=True)
    rows = []
    for (name, n, variant, controlled, procs, threads), got in times.items():
        fixed, ctl, own = (statistics.median(x[i] for x in got) for i in range(3))
        ratio = statistics.median(c / f for f, c, _ in got)      # of each pair
        key = (name, n, procs, threads)
        (pf, _), (pc, priced) = preds[key][(variant, "fixed")], preds[key][(controlled, "controlled")]
        rows.append({"ivp": name, "n": n, "variant": controlled, "ranks": procs, "threads": threads,
                     "fixed_s": fixed, "controlled_s": ctl, "extra_pct": 100 * (ratio - 1),
                     "control_s": own, "control_pct": 100 * own / fixed, "priced_control_s": priced,
                     "within_5pct": bool(abs(ratio * fixed - (fixed + priced)) <= 0.05 * (fixed + priced)),
                     "predicted_fixed_s": pf, "predicted_controlled_s": pc,
                     "deviation_fixed_pct": 100 * (pf / fixed - 1), "deviation_controlled_pct": 100 * (pc / ctl - 1)})
        r = rows[-1]
        print(f"{name:14s} {procs}x{threads} {controlled[:96]:96s} fixed {fixed:.4e}  controlled {ctl:.4e} "
              f"({r['extra_pct']:+.1f} %; its own {own:.3e} s, priced {priced:.3e} s; fixed + priced "
              f"{'within' if r['within_5pct'] else 'beyond'} 5 %)  deviation fixed {r['deviation_fixed_pct']:+.1f} %, "
              f"controlled {r['deviation_controlled_pct']:+.1f} %")
    dev = lambda k: statistics.median(abs(r[k]) for r in rows)   # noqa: E731
    print(f"within 5 %: {sum(r['within_5pct'] for r in rows)} of {len(rows)}; median |deviation| "
          f"controlled {dev('deviation_controlled_pct'):.1f} %, fixed {dev('deviation_fixed_pct'):.1f} %")
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="what", required=True)
    acc = sub.add_parser("accuracy")
    acc.add_argument("--ivps", default=",".join(sorted(SMALL)))
    acc.add_argument("--tolerances", default="1e-6,1e-9")
    acc.add_argument("--horizon", type=int, default=DEFAULT_STEPS, help="the end time in default steps of the IVP")
    cst = sub.add_parser("cost")
    cst.add_argument("--machine", required=True)
    cst.add_argument("--cases", default=";".join(f"{i}:{n}" for i, n in COST_CASES))
    cst.add_argument("--configs", default="1x2,2x1")
    cst.add_argument("--rounds", type=int, default=5)
    cst.add_argument("--steps", type=int, default=6)
    cst.add_argument("--store", type=Path, help="the store the predictions come from (default: AUTOTUNE_STORE)")
    for p in (acc, cst):
        p.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        if args.what == "accuracy":
            names = args.ivps.split(",")
            unknown = [x for x in names if x not in SMALL or x not in ivp_names()]
            if unknown:
                ap.error(f"--ivps: {', '.join(unknown)}: expected some of {', '.join(sorted(SMALL))}")
            rows = accuracy(names, [float(x) for x in args.tolerances.split(",")], args.horizon, Path(tmp))
        else:
            cases = [(c.split(":")[0], int(float(c.split(":")[1]))) for c in args.cases.split(";")]
            configs = [tuple(int(x) for x in c.split("x")) for c in args.configs.split(",")]
            store = Path(tmp) / "store.sqlite"      # a copy: the rates it holds are set aside in it
            shutil.copy(args.store or os.environ["AUTOTUNE_STORE"], store)
            rows = cost(cases, configs, args.machine, args.rounds, args.steps, Path(tmp), store)
    if args.json:
        write_text(args.json, json.dumps(rows, indent=1) + "\n", "--json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

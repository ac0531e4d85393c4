"""Benchmark of a fresh port: how well a machine file that `calibrate --node` made predicts the
runs on the host, with the ECM model alone (no learned factors), against the targets of a port.

    python -m benchmarks.node --machine FILE [--against FILE2 --against-code DIR]
                                  [--scenarios in-cache,memory] [--ivps heat2d,...] [--top 5] [--sample 10]
                                  [--reps 3] [--nodes 1] [--json out.json]

Each scenario is one `tune --top K --sample S --model ecm` at 1 node x all cores (--nodes 2: two
ranks on this host, one a virtual node, each on half the cores; the file's network figures price
their exchanges, so run `calibrate --procs` on the host first): in cache
(n = 4e4: inverterchain, heat2d), in memory (n = 4e6: inverterchain, heat2d, wave1d), and a
user's IVP no one tuned against (benchmarks/ivps/allencahn1d.yaml, n = 4e4 and 4e6).  With
--against, the same scenarios also run with another machine file and, with --against-code, the
autotune of another checkout (the code before a change, its templates, IVPs and machines included),
the two back to back per scenario, so a shared machine's drift touches both alike.  Prints per
scenario and side: median |deviation|, the range of the phase and fused-sweep ratios (measured
over predicted) and how many lie in 0.8-1.25, the top-1 loss, the check of the sample, the
measured best over the floor (bound_s), and the median ratio of each phase and sweep kind (the
corrector's sweeps one kind: pred, corr, final, RHS, LC, ...); then
the file's clock against a dependent-add chain measured now.  Each tune writes to a store of its
own side (--store-dir), so that neither reuses the other's runs.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from autotune.storage.atomic import write_text
from benchmarks.checkout import interpreter

USER_IVP = str(Path(__file__).resolve().parent / "ivps" / "allencahn1d.yaml")   # never tuned against
SCENARIOS = {"in-cache": [("inverterchain", 40_000), ("heat2d", 40_000)],
             "memory": [("inverterchain", 4_000_000), ("heat2d", 4_000_000), ("wave1d", 4_000_000)],
             "user": [(USER_IVP, 40_000), (USER_IVP, 4_000_000)]}
TARGETS = {"in-cache": 20.0, "memory": 15.0, "user": 15.0}       # median |deviation| at most, %
BAND = (0.8, 1.25)                                   # every phase and fused sweep, measured / predicted


def tune(machine: str, ivp: str, n: int, a, store: Path, code: str | None) -> dict:
    """One tune's JSON (the autotune of `code` where given)."""
    python, env = interpreter(code)
    cmd = [*python, "-m", "autotune", "tune", "--ivp", ivp, "--machine", machine, "--nodes", str(a.nodes),
           "--threads", str(a.threads), "--n", str(n), "--top", str(a.top), "--sample", str(a.sample),
           "--reps", str(a.reps), "--model", "ecm", "--format", "json", "--store", str(store)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        return {"error": proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else f"exit {proc.returncode}"}
    return json.loads(proc.stdout)


def figures(result: dict) -> dict:
    """What the targets read of one tune."""
    if "error" in result:
        return {"error": result["error"]}
    s = result["summary"]
    ratios = {}
    for row in result["variants"]:
        for phase, v in (row.get("phases") or {}).items():
            if v.get("predicted_s") and v.get("measured_s") is not None:
                ratios.setdefault(phase, []).append(v["measured_s"] / v["predicted_s"])
    medians = {p: statistics.median(r) for p, r in ratios.items()}
    inside = sum(BAND[0] <= r <= BAND[1] for r in medians.values())
    kinds: dict[str, list[float]] = {}      # the sweep kinds: sweep.corr1, .corr2, ... are one
    for phase, r in ratios.items():
        kinds.setdefault(phase.rstrip("0123456789"), []).extend(r)
    check = s.get("check") or {}
    return {"median_abs_dev_pct": s.get("median_abs_deviation_pct"), "top1_loss_pct": s.get("top1_loss_pct"),
            "spearman": s.get("spearman"), "phase_median_ratio": medians, "phases_in_band": inside,
            "kind_median_ratio": {k: statistics.median(r) for k, r in sorted(kinds.items())},
            "best_over_bound": s.get("best_over_bound"), "bound_s": s.get("bound_s"),
            "phases": len(medians), "check": check.get("verdict"), "sample_gain_pct": check.get("sample_gain_pct"),
            "measured_best": s.get("measured_best"), "predicted_best": s.get("predicted_best")}


def _f(v, fmt: str) -> str:
    return "-" if v is None else format(v, fmt)


def line(side: str, ivp: str, n: int, f: dict) -> str:
    if "error" in f:
        return f"{side:8} {ivp:14} {n:>9,}  failed: {f['error']}"
    r = list(f["phase_median_ratio"].values())
    span = f"{min(r):.2f}-{max(r):.2f}" if r else "-"
    kinds = " ".join(f"{k.removeprefix('sweep.')}={v:.2f}" for k, v in f["kind_median_ratio"].items())
    return (f"{side:8} {ivp:14} {n:>9,} {_f(f['median_abs_dev_pct'], '8.1f')} {span:>11} "
            f"{f['phases_in_band']:>3}/{f['phases']:<3} {_f(f['top1_loss_pct'], '7.1f')} {_f(f['spearman'], '6.2f')}  "
            f"{f['check'] or '-'}  best/floor {_f(f['best_over_bound'], '.2f')}\n"
            f"{'':8} median measured/predicted per kind: {kinds}")


def clock_check(machine: str) -> str:
    """The file's clock against a dependent-add chain on every core, measured now."""
    from autotune.progress import SILENT
    from autotune.specs.machine import load_machine
    from autotune.tools import hostprobe
    host = hostprobe.detect()
    clock = hostprobe.measure_clock(host, SILENT)
    file_hz = load_machine(machine).clock_hz
    off = 100 * (file_hz / clock.all_cores_hz - 1)
    return (f"clock: the file says {file_hz / 1e9:.2f} GHz, a dependent-add chain runs at {clock.all_cores_hz / 1e9:.2f} "
            f"GHz on all cores now ({off:+.1f} %; target within 5 %)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.node")
    ap.add_argument("--machine", required=True, help="the machine file calibrate --node made")
    ap.add_argument("--against", help="another machine file, tuned back to back with the first")
    ap.add_argument("--against-code", help="a checkout whose autotune runs the --against side")
    ap.add_argument("--scenarios", default="in-cache,memory")
    ap.add_argument("--ivps", help="only these IVPs of the scenarios, comma-separated (the user's: allencahn1d)")
    ap.add_argument("--nodes", type=int, default=1, help="ranks on this host, one a virtual node")
    ap.add_argument("--threads", type=int, help="threads per rank (default: the cores over the ranks)")
    ap.add_argument("--top", type=int, default=5)
    ap.add_argument("--sample", type=int, default=10)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--store-dir", type=Path)
    ap.add_argument("--json", type=Path)
    a = ap.parse_args(argv)
    cores = len(os.sched_getaffinity(0))
    if a.nodes < 1 or a.nodes > cores:
        print(f"--nodes: {a.nodes}: expected 1 to {cores} (the cores this process may use)", file=sys.stderr)
        return 2
    a.threads = a.threads or max(1, cores // a.nodes)
    if a.against_code and not a.against:
        print("--against-code: runs the --against side; give --against FILE too", file=sys.stderr)
        return 2
    kinds = [k.strip() for k in a.scenarios.split(",")]
    bad = [k for k in kinds if k not in SCENARIOS]
    if bad:
        print(f"--scenarios: {bad[0]!r}: expected some of {', '.join(SCENARIOS)}", file=sys.stderr)
        return 2
    ivps = {Path(ivp).stem for kind in kinds for ivp, _ in SCENARIOS[kind]}
    only = {i.strip() for i in a.ivps.split(",")} if a.ivps else ivps
    if only - ivps:
        print(f"--ivps: {sorted(only - ivps)[0]!r}: expected some of {', '.join(sorted(ivps))}", file=sys.stderr)
        return 2
    stores = a.store_dir or Path(tempfile.mkdtemp(prefix="autotune-bench-node-"))
    stores.mkdir(parents=True, exist_ok=True)
    sides = ([("before", a.against, a.against_code)] if a.against else []) + [("after" if a.against else "file",
                                                                              a.machine, None)]
    print(f"{a.nodes} x {a.threads} (ranks on this host x threads each)")
    print(f"{'side':8} {'ivp':14} {'n':>9} {'|dev| %':>8} {'phase ratio':>11} {'in band':>7} {'top-1 %':>7} "
          f"{'rho':>6}  sample check", flush=True)
    out = []
    for kind in kinds:
        for ivp, n in [(i, n) for i, n in SCENARIOS[kind] if Path(i).stem in only]:
            for side, machine, code in sides:
                f = figures(tune(machine, ivp, n, a, stores / f"{side}.sqlite", code))
                out.append(dict(f, side=side, ivp=ivp, n=n, kind=kind, target_pct=TARGETS[kind], nodes=a.nodes,
                                threads=a.threads))
                print(line(side, Path(ivp).stem, n, f), flush=True)
    print(f"targets: median |deviation| <= {TARGETS['in-cache']:.0f} % in cache, <= {TARGETS['memory']:.0f} % in "
          f"memory; every phase and fused sweep {BAND[0]}-{BAND[1]}; top-1 loss <= 5 %")
    if a.json:                     # written first: the clock check below measures for a while
        write_text(a.json, json.dumps(out, indent=1) + "\n", "json")
    print(clock_check(a.machine))
    return 0


if __name__ == "__main__":
    sys.exit(main())

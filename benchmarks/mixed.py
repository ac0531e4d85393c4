"""Benchmark of mixed allocations (docs/method.md, "Mixed allocations"): on two nodes made unequal,
does the model's split beat the even split, and how close is it to the best split a sweep finds?

    python -m benchmarks.mixed --machine FILE [--quota 0.5] [--cases heat2d:4000000;inverterchain:4000000]
                               [--shares 0.5:0.8:0.05] [--rounds 5] [--steps 8] [--store PATH] [--json out.json]

Needs root and this host's machine file (calibrate --node).  The two "nodes" are two cores of this
host, one rank each with one thread, each pinned to its core (taskset): `big` runs as it is;
`small` runs in a cgroup of its own whose CPU quota is --quota of one core (cgroup v1
cpu.cfs_quota_us over a 10 ms cpu.cfs_period_us, or v2 cpu.max), so it gets that share of its
core's time.  The model knows that share from the small kind's machine file (the host's file with
`cluster.cpu_quota`), nothing else: the quota as set (default), or with --declare measured the
share the inequality run measured (one over its ratio), which a node file made on that node
would carry.

Printed, first: the inequality as measured, one rank of the paper's form on each node alone,
alternated --rounds times (median seconds per step of each, their ratio).  Then per case (IVP, n):
the model's best variant for big:1,small:1 built for uneven blocks and run round-robin --rounds
times at the model's split, the even split and a sweep of the big node's share (--shares), and as
big:2 (both ranks without a quota: the homogeneous run).  The targets: the model's split at
<= 0.8x the even split's measured step; within 5 % of the best split of the sweep; each kind's
deviation of its own time (busy seconds outside the exchange against the predicted node time) no
worse than the homogeneous run's.
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

from autotune.codegen.solver import solver_source
from autotune.pipeline.mixed import rank_mixed
from autotune.request.run import RunOptions
from autotune.request.scenario import ScenarioRequest
from autotune.request.selection import selection
from autotune.specs.ivp import load_ivp
from autotune.specs.method import load_method
from autotune.request.values import parse_values
from autotune.specs.variants import parse_variant
from autotune.storage.atomic import write_text
from autotune.storage.paths import default_store_path
from autotune.storage.store import Store
from autotune.tools.build import build
from autotune.tools.launcher import parse_launcher
from autotune.tools.mixedrun import run_split

CASES = "heat2d:4000000;inverterchain:4000000"
PAPER = "lc=ijl,comm=allgather"
METHOD = "radauIIA7"
PERIOD_US = 10_000
LAUNCHER = parse_launcher(None)


def _cgroup(quota: float) -> tuple[Path, Path]:
    """A cgroup with `quota` of one core (v1 cpu controller, else v2): (its folder, its procs file)."""
    v1 = Path("/sys/fs/cgroup/cpu")
    if (v1 / "cpu.cfs_quota_us").exists():
        path = v1 / f"autotune-bench-{os.getpid()}"
        path.mkdir()
        (path / "cpu.cfs_period_us").write_text(str(PERIOD_US))
        (path / "cpu.cfs_quota_us").write_text(str(int(quota * PERIOD_US)))
        return path, path / "cgroup.procs"
    v2 = Path("/sys/fs/cgroup")
    path = v2 / f"autotune-bench-{os.getpid()}"
    path.mkdir()
    (path / "cpu.max").write_text(f"{int(quota * PERIOD_US)} {PERIOD_US}")
    return path, path / "cgroup.procs"


def _prefix(core: int, procs: Path | None) -> list[str]:
    """The wrapper of one rank: into the cgroup (where one), pinned to its core."""
    pin = ["taskset", "-c", str(core)]
    if procs is None:
        return pin
    return ["sh", "-c", 'echo $$ > "$0" && exec "$@"', str(procs), *pin]


def _files(machine: Path, quota: float, folder: Path) -> Path:
    """big.yaml (the host's file), small.yaml (with the quota) and cluster.yaml naming both."""
    text = machine.read_text()
    if "\ncluster:\n" not in text:
        sys.exit(f"{machine}: no cluster section")
    (folder / "big.yaml").write_text(text)
    (folder / "small.yaml").write_text(text.replace("\ncluster:\n", f"\ncluster:\n  cpu_quota: {quota}\n", 1))
    cluster = folder / "cluster.yaml"
    cluster.write_text(text.replace("\ncluster:\n", "\ncluster:\n  partitions: {big: big.yaml, small: small.yaml}\n", 1))
    return cluster


def _runs(configs: list[dict], rounds: int, steps: int, warmup: int, h_of) -> None:
    """Every configuration once a round (round-robin), its runs kept in it."""
    for r in range(rounds):
        for c in configs:
            out = run_split(c["exe"], LAUNCHER, c["groups"], c["split"], c["n"], c["size"], steps, h_of(c), warmup,
                            prefixes=c["prefixes"])
            c.setdefault("runs", []).append(out)
            print(f"  round {r + 1}/{rounds} {c['label']:>12}: {out['median_step_s']:.4e} s/step "
                  f"busy {', '.join(f'{b:.3e}' for b in out['rank_busy_s'])}", file=sys.stderr)


def _median(c: dict, key: str = "median_step_s") -> float:
    return statistics.median(r[key] for r in c["runs"])


def _busy(c: dict, rank: int) -> float:
    return statistics.median(r["rank_busy_s"][rank] for r in c["runs"])


def inequality(n: int, rounds: int, steps: int, procs: Path, flags) -> dict:
    """One rank of the paper's form alone on the plain core and on the quota's core."""
    ivp, method = load_ivp("heat2d"), load_method(METHOD)
    exe = build(solver_source(ivp, method, parse_variant(PAPER, ivp.comm), n, uneven=True), flags)
    common = {"exe": exe, "groups": [(1, 1)], "split": (n,), "n": n, "size": ivp.size_value(n)}
    configs = [dict(common, label="big alone", prefixes=[_prefix(0, None)]),
               dict(common, label="small alone", prefixes=[_prefix(1, procs)])]
    _runs(configs, rounds, steps, 1, lambda c: ivp.default_step(n))
    big, small = _median(configs[0]), _median(configs[1])
    return {"ivp": "heat2d", "n": n, "variant": PAPER, "big_s": big, "small_s": small, "ratio": small / big}


def _shares(text: str) -> list[float]:
    lo, hi, step = (float(x) for x in text.split(":"))
    out, x = [], lo
    while x <= hi + 1e-9:
        out.append(round(x, 6))
        x += step
    return out


def case(ivp_name: str, n: int, cluster: Path, store: Store, procs: Path, args) -> dict:
    mixed = ScenarioRequest.of(ivp_name, n=n, machine=str(cluster), nodes="big:1,small:1", threads=1).mixed()
    ranking = rank_mixed(mixed, selection(1, None, False), store)
    best = ranking.best
    homo = ScenarioRequest.of(ivp_name, n=n, machine=str(cluster), nodes="big:2", threads=1).mixed()
    home = rank_mixed(homo, selection(1, None, False), store, wanted=None).row(best.variant.name)
    flags = RunOptions().plan(1.0, mixed.kinds[0].machine.isa_flags).flags
    exe = build(solver_source(mixed.ivp, mixed.method, best.variant, n, mixed.kinds[0].machine, uneven=True), flags)
    g = mixed.granule
    common = {"exe": exe, "groups": [(1, 1), (1, 1)], "n": n, "size": mixed.ivp.size_value(n),
              "prefixes": [_prefix(0, None), _prefix(1, procs)]}
    configs = [dict(common, label="model", split=tuple(best.split)), dict(common, label="even", split=mixed.even())]
    for share in _shares(args.shares):
        big = int(round(share * n / g)) * g
        configs.append(dict(common, label=f"share {share:.2f}", split=(big, n - big)))
    configs.append(dict(common, label="homogeneous", split=homo.even(), prefixes=[_prefix(0, None), _prefix(1, None)]))
    h = mixed.ivp.default_step(n)
    print(f"{ivp_name} n = {n:,}: {best.variant.name}, model split {best.split}", file=sys.stderr)
    _runs(configs, args.rounds, args.steps, args.warmup, lambda c: h)
    by = {c["label"]: c for c in configs}
    model, even, homog = by["model"], by["even"], by["homogeneous"]
    sweep = [c for c in configs if c["label"].startswith("share") or c["label"] in ("model", "even")]
    fastest = min(sweep, key=_median)
    kinds = []
    for k, (name, pred) in enumerate(zip(("big", "small"), best.kind_node_s)):
        busy = _busy(model, k)
        kinds.append({"kind": name, "predicted_node_s": pred, "measured_busy_s": busy, "deviation": pred / busy - 1})
    home_dev = [home.even_kind_node_s[0] / _busy(homog, r) - 1 for r in range(2)]
    return {
        "ivp": ivp_name, "n": n, "variant": best.variant.name,
        "model_split": list(best.split), "model_share_big": best.split[0] / n,
        "predicted_s": best.step_s, "predicted_even_s": best.even_s,
        "measured_s": _median(model), "measured_even_s": _median(even),
        "ratio_to_even": _median(model) / _median(even),
        "best_sweep": {"label": fastest["label"], "split": list(fastest["split"]), "measured_s": _median(fastest)},
        "over_best": _median(model) / _median(fastest) - 1,
        "sweep": [{"label": c["label"], "share_big": c["split"][0] / n, "measured_s": _median(c),
                   "busy_s": [_busy(c, 0), _busy(c, 1)]} for c in sweep],
        "kinds": kinds,
        "homogeneous": {"predicted_node_s": home.even_kind_node_s[0], "busy_s": [_busy(homog, 0), _busy(homog, 1)],
                        "deviation": home_dev, "measured_s": _median(homog), "predicted_s": home.even_s},
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.mixed", description=__doc__.split("\n\n")[0])
    p.add_argument("--machine", required=True, type=Path, help="this host's machine file (calibrate --node)")
    p.add_argument("--quota", type=float, default=0.5, help="the small node's share of its core (default 0.5)")
    p.add_argument("--cases", default=CASES)
    p.add_argument("--shares", default="0.5:0.8:0.05", help="the big node's shares swept, lo:hi:step")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--inequality-n", type=int, default=1_000_000)
    p.add_argument("--declare", choices=("quota", "measured"), default="quota",
                   help="the small kind's cpu_quota in its machine file: the quota set, or the share measured")
    p.add_argument("--store", type=Path)
    p.add_argument("--json", type=Path)
    args = p.parse_args(argv)
    if os.geteuid() != 0:
        sys.exit("benchmarks.mixed: needs root (a cgroup with a CPU quota)")
    if (os.cpu_count() or 1) < 2:
        sys.exit("benchmarks.mixed: needs two cores")
    store = Store(args.store or default_store_path(lambda note: None))
    folder = Path(tempfile.mkdtemp(prefix="autotune-mixed-"))
    group, procs = _cgroup(args.quota)
    try:
        flags = RunOptions().plan(1.0).flags
        unequal = inequality(args.inequality_n, args.rounds, args.steps, procs, flags)
        declared = args.quota if args.declare == "quota" else round(1 / unequal["ratio"], 3)
        cluster = _files(args.machine, declared, folder)
        out = {"quota": args.quota, "declared_cpu_quota": declared, "rounds": args.rounds, "steps": args.steps,
               "inequality": unequal, "cases": []}
        for item in args.cases.split(";"):
            name, _, n = item.partition(":")
            out["cases"].append(case(name, parse_values(n, "cases")[0], cluster, store, procs, args))
        _print(out)
        if args.json:
            write_text(args.json, json.dumps(out, indent=1) + "\n", "--json")
    finally:
        store.close()
        shutil.rmtree(folder, ignore_errors=True)
        try:
            group.rmdir()
        except OSError:
            pass
    return 0


def _print(out: dict) -> None:
    q = out["inequality"]
    print(f"inequality (one rank of {q['variant']}, heat2d n = {q['n']:,}, alone): big {q['big_s']:.4e} s/step, "
          f"small {q['small_s']:.4e} s/step: small takes {q['ratio']:.2f}x (quota {out['quota']}; the small "
          f"kind's machine file declares cpu_quota {out['declared_cpu_quota']})")
    print(f"{'case':24} {'model share':>11} {'model s':>10} {'even s':>10} {'model/even':>10} "
          f"{'best share':>10} {'best s':>10} {'over best':>9} {'dev big':>8} {'dev small':>9} {'dev homog':>14}")
    for c in out["cases"]:
        best = c["best_sweep"]
        print(f"{c['ivp'] + ' ' + format(c['n'], ','):24} {100 * c['model_share_big']:10.1f}% {c['measured_s']:10.4e} "
              f"{c['measured_even_s']:10.4e} {c['ratio_to_even']:10.3f} {100 * best['split'][0] / c['n']:9.1f}% "
              f"{best['measured_s']:10.4e} {100 * c['over_best']:+8.1f}% "
              f"{100 * c['kinds'][0]['deviation']:+7.1f}% {100 * c['kinds'][1]['deviation']:+8.1f}% "
              f"{'/'.join(f'{100 * d:+.1f}%' for d in c['homogeneous']['deviation']):>14}")
        print(f"  {c['variant']}: predicted {c['predicted_s']:.4e} s/step at its split, {c['predicted_even_s']:.4e} even")
        for s in c["sweep"]:
            print(f"    {s['label']:>12} big {100 * s['share_big']:5.1f}%: {s['measured_s']:.4e} s/step "
                  f"(busy big {s['busy_s'][0]:.3e}, small {s['busy_s'][1]:.3e})")
    print("targets: model/even <= 0.8; over best <= 5 %; each kind's |dev| no worse than the homogeneous run's")


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark of the prediction spine: cold and warm `rank`, store reuse, and a full analysis check.

    python -m benchmarks.rank [--repeats 5] [--json out.json] [--check-all] [--sweep]

Runs the real command line in subprocesses on a fresh store and prints wall
times and how many kerncraft analyses each run needed, then the everyday
commands (--help, list, warm rank of one IVP and of all) timed round-robin
against their targets, and the length of the default table.  The subprocesses
run with Python's bytecode caches on, as in a user's shell.  --check-all also
analyses every kernel part of every variant of every shipped IVP on every
shipped machine (at each machine's default scenario) and lists failures.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from autotune.storage.atomic import write_json


# parsed data files (docs/usage.md#files-autotune-keeps) start empty, as for a new user: the
# first command parses and keeps them, the later ones reuse them (main sets the folder)
_PARSED: dict[str, str] = {}


def _env() -> dict:
    """The environment of a user's shell: Python writes and reuses its bytecode caches (a process
    that may not spends a tenth of a second compiling autotune's modules on every start)."""
    env = dict(os.environ, **_PARSED)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _autotune(store: Path | None, *args: str) -> tuple[float, str]:
    cmd = [sys.executable, "-m", "autotune", *args, *(("--store", str(store)) if store else ())]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=_env())
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"benchmarks.rank: {' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.strip()[-2000:]}")
    return wall, proc.stdout


def _rank(store: Path, *args: str) -> tuple[float, dict]:
    wall, out = _autotune(store, "rank", *args, "--format", "json")
    return wall, json.loads(out)


TOP_SHOWN = 10    # rows of each ranking printed (--json has every one)
HEAT = ("--ivp", "heat2d", "--nodes", "8")
# the everyday commands, timed round-robin on a warm store (name, store or not, arguments)
EVERYDAY = (("help", False, ("--help",)), ("list ivps", False, ("list", "ivps")),
            ("rank heat2d", True, ("rank", *HEAT)), ("rank all", True, ("rank", "--ivp", "all", "--nodes", "8")))
BARE = "python -c pass"     # the interpreter's own start, in the same rounds: the floor of every command


def _bare() -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], env=_env(), check=True)
    return time.perf_counter() - t0


def everyday(store: Path, repeats: int) -> dict:
    """Median wall time of each everyday command (and of the bare interpreter) over `repeats`
    round-robin rounds, and the line count of the default rank table."""
    walls: dict[str, list[float]] = {name: [] for name, _, _ in EVERYDAY}
    walls[BARE] = []
    for _ in range(repeats):
        walls[BARE].append(_bare())
        for name, stored, args in EVERYDAY:
            walls[name].append(_autotune(store if stored else None, *args)[0])
    table = _autotune(store, "rank", *HEAT)[1]
    return {"wall_s_median": {k: statistics.median(v) for k, v in walls.items()}, "wall_s_all": walls,
            "table_lines": len(table.splitlines())}


def spine(repeats: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "store.sqlite"
        cold_wall, cold = _rank(store, *HEAT)
        warm = [_rank(store, *HEAT) for _ in range(repeats)]
        size_wall, size = _rank(store, *HEAT, "--n", str(6000 ** 2))
        inv_wall, inv = _rank(store, "--ivp", "inverterchain", "--nodes", "8", "--threads", "8",
                              "--n", "35808256")
        all_wall, _ = _autotune(store, "rank", "--ivp", "all", "--nodes", "8")   # analyses the other IVPs
        daily = everyday(store, repeats)
    return {
        "cold_heat2d": {"wall_s": cold_wall, "analyses": cold["ecm"]["analyses_run"]},
        "warm_heat2d": {"wall_s_median": statistics.median(w for w, _ in warm),
                        "wall_s_all": [w for w, _ in warm],
                        "analyses": [d["ecm"]["analyses_run"] for _, d in warm]},
        "heat2d_other_size_same_regime": {"wall_s": size_wall, "analyses": size["ecm"]["analyses_run"]},
        "inverterchain_after_heat2d": {"wall_s": inv_wall, "analyses": inv["ecm"]["analyses_run"]},
        "rank_all_first": {"wall_s": all_wall},
        "everyday": daily,
        "rankings": {d["ivp"]: [(v["name"], v["predicted_s"], v["node_s"], v["comm_s"], v["preselected"])
                                for v in d["variants"]] for d in (cold, inv)},
    }


SWEEP = ("--ivp", "all", "--n", "1e6:1e8:100log", "--nodes", "1:512:x2")


def _sweep_once(store: Path, fmt: str) -> tuple[float, str]:
    return _autotune(store, "rank", *SWEEP, "--format", fmt)


def sweep(repeats: int) -> dict:
    import sqlite3
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "store.sqlite"
        cold_wall, out = _sweep_once(store, "json")
        cold = json.loads(out)
        db = sqlite3.connect(store)
        pairs = db.execute("SELECT COUNT(DISTINCT part || '@' || regime) FROM ecm").fetchone()[0]
        dup = db.execute("SELECT part, regime, COUNT(*) FROM ecm GROUP BY part, regime HAVING COUNT(*) > 1").fetchall()
        regimes = sorted({r for (r,) in db.execute("SELECT DISTINCT regime FROM ecm")})
        db.close()
        warm_csv = [_sweep_once(store, "csv")[0] for _ in range(repeats)]
        warm_json = [_sweep_once(store, "json")[0] for _ in range(repeats)]
    return {"args": " ".join(SWEEP), "scenarios": cold["scenarios"], "rows": len(cold["rows"]),
            "skipped": len(cold["skipped"]), "cold_wall_s": cold_wall, "cold_analyses": cold["analyses_run"],
            "distinct_part_regime_pairs": pairs, "duplicate_pairs": dup, "regimes": regimes,
            "warm_csv_wall_s": warm_csv, "warm_csv_median_s": statistics.median(warm_csv),
            "warm_json_wall_s": warm_json, "warm_json_median_s": statistics.median(warm_json)}


def check_all() -> dict:
    from autotune.specs.ivp import ivp_names
    from autotune.specs.machine import load_machine, machine_names
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "store.sqlite"
        for machine in machine_names():
            m = load_machine(machine)
            for ivp in ivp_names():
                wall, d = _rank(store, "--ivp", ivp, "--machine", machine, "--nodes", str(m.nodes))
                out[f"{machine}/{ivp}"] = {"wall_s": wall, "analyses": d["ecm"]["analyses_run"],
                                           "failures": d["ecm"]["failures"], "variants": len(d["variants"])}
                print(f"  {machine:24} {ivp:14} {d['ecm']['analyses_run']:3d} analyses  {wall:6.1f} s  "
                      f"failures: {len(d['ecm']['failures'])}", file=sys.stderr, flush=True)
    return out


def _print_sweep(sw: dict) -> None:
    print(f"sweep rank {sw['args']}: {sw['scenarios']} scenarios, {sw['rows']} rows, {sw['skipped']} skipped")
    print(f"  cold  {sw['cold_wall_s']:7.1f} s   kerncraft analyses: {sw['cold_analyses']} for "
          f"{sw['distinct_part_regime_pairs']} distinct (part, regime) pairs; duplicates: {sw['duplicate_pairs'] or 0}")
    print(f"  warm  {sw['warm_csv_median_s']:7.3f} s (CSV, median of {len(sw['warm_csv_wall_s'])}; target <= 10 s), "
          f"{sw['warm_json_median_s']:.3f} s (JSON, median of {len(sw['warm_json_wall_s'])})   regimes: {', '.join(sw['regimes'])}")


def _print(res: dict) -> None:
    if "sweep" in res:
        _print_sweep(res["sweep"])
    if "cold_heat2d" not in res:
        return
    c, w = res["cold_heat2d"], res["warm_heat2d"]
    print(f"cold  rank --ivp heat2d --nodes 8           {c['wall_s']:7.2f} s   kerncraft analyses: {c['analyses']}")
    print(f"warm  rank --ivp heat2d --nodes 8 (median)  {w['wall_s_median']:7.3f} s   analyses: {w['analyses']}")
    s = res["heat2d_other_size_same_regime"]
    print(f"      rank heat2d --n 36000000 (same regime) {s['wall_s']:6.3f} s   analyses: {s['analyses']}")
    i = res["inverterchain_after_heat2d"]
    print(f"      rank --ivp inverterchain after heat2d {i['wall_s']:7.2f} s   analyses: {i['analyses']}")
    d = res["everyday"]
    med = d["wall_s_median"]
    n = len(d["wall_s_all"]["help"])
    print(f"\neveryday commands, warm store, medians of {n} round-robin rounds:")
    for label, value, target in (
            ("python -c pass (the interpreter alone)", f"{med[BARE]:.3f} s", "-"),
            ("autotune rank --ivp heat2d --nodes 8", f"{med['rank heat2d']:.3f} s", "<= 0.1 s"),
            ("autotune --help", f"{med['help']:.3f} s", "<= 0.05 s"),
            ("autotune list ivps", f"{med['list ivps']:.3f} s", "<= 0.15 s"),
            ("rank --ivp inverterchain --nodes 8 --n 35808256 after heat2d", f"{i['wall_s']:.1f} s", "<= 5 s"),
            ("cold rank --ivp heat2d --nodes 8, fresh store", f"{c['wall_s']:.1f} s", "<= 10 s"),
            ("rank --ivp all --nodes 8", f"{med['rank all']:.3f} s", "<= 1 s"),
            ("default table, heat2d", f"{d['table_lines']} lines", "<= 30 lines")):
        print(f"  {label:56} {value:>10}   target {target}")
    for ivp, rows in res["rankings"].items():
        print(f"\n{ivp}: n = 35,808,256, 8 nodes x 8 threads, reference cluster")
        print(f"  {'variant':26} {'s/step':>10} {'node s':>10} {'comm s':>10}  pre")
        for name, t, node, comm, pre in rows[:TOP_SHOWN]:
            print(f"  {name:26} {t:10.4e} {node:10.4e} {comm:10.4e}  {'*' if pre else ''}")
    if "check_all" in res:
        bad = {k: v["failures"] for k, v in res["check_all"].items() if v["failures"]}
        total = sum(v["analyses"] for v in res["check_all"].values())
        print(f"\ncheck-all: {total} analyses over {len(res['check_all'])} machine/IVP pairs, "
              f"{sum(len(v) for v in bad.values())} failed kernel parts {bad or ''}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.rank", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--json", type=Path, help="also write the figures to this file")
    ap.add_argument("--check-all", action="store_true")
    ap.add_argument("--sweep", action="store_true", help="only the sweep benchmark")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="autotune-bench-parsed-") as parsed:
        _PARSED["AUTOTUNE_PARSED"] = parsed
        res = {"sweep": sweep(args.repeats)} if args.sweep else spine(args.repeats)
        if args.check_all:
            res["check_all"] = check_all()
    _print(res)
    if args.json:
        write_json(args.json, res, "json")
    return 0


if __name__ == "__main__":
    sys.exit(main())

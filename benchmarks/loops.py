"""A fused sweep priced as its loops (model.loops): the measured sweeps against their analysis,
and the loop pair the rule rests on.

    python -m benchmarks.loops --machine FILE [--against-code BEFORE] [--ivps heat2d,inverterchain]
                               [--n 4000000] [--store S] [--json out.json]
    python -m benchmarks.loops --pair [--clock 2.5e9] [--ks 8,16] [--tiles 512,65536] [--json out.json]

The first ranks each IVP at n on one node of the file (its cores), explains every fused form of
the pool outside a pipelined step and prints, per sweep kind (predictor, corrector, last; with
plain and streaming stores) and measured level, the median of the sweeps' measured seconds over
their analysed ones (explain's `sweeps`: the sweeps are measured where the host is the file's
CPU), for this checkout and, with --against-code, for another one (the code before a change)
on the same store, back to back.  A machine file without `in-core measured` measures nothing:
use one that calls calibrate --node's own.

--pair builds benchmarks/looppair.c for each K (multiply-adds per element) and times, on 1 and on
all cores, in L1 and in memory, a loop whose arithmetic hides its streams against the same work
as two loops per tile, and each of the two alone: cycles per cache line, the median of the
rounds (docs/node-model.md, "The loops of a fused sweep").
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

HERE = Path(__file__).parent
PAIR_COLUMNS = ("one loop", "two loops per tile", "first loop alone", "second loop alone")


def _autotune(code: str | None, store: str, *args) -> dict:
    cmd, env = interpreter(code)
    out = subprocess.run(cmd + ["-m", "autotune", *map(str, args), "--store", store], capture_output=True,
                         text=True, env=env)
    if out.returncode:
        raise SystemExit(f"autotune {' '.join(map(str, args[:3]))}: {out.stderr.strip()[-600:]}")
    return json.loads(out.stdout)


def sweep_ratios(code: str | None, machine: str, ivp: str, n: int, store: str) -> dict[str, list[float]]:
    """Per sweep kind and level ("rhslc MEM nt"), measured / analysed over the fused forms."""
    base = ["--ivp", ivp, "--nodes", 1, "--n", n, "--machine", machine, "--model", "ecm", "--format", "json"]
    ranked = _autotune(None, store, "rank", *base)
    names = [v["name"] for v in ranked["variants"]
             if "fuse=rhs-lc" in v["name"] and "pipe=" not in v["name"] and "overlap=" not in v["name"]]
    out: dict[str, list[float]] = {}
    for name in names:
        d = _autotune(code, store, "explain", *base, "--variant", name)
        for part, infos in (d.get("sweeps") or {}).items():
            for i in infos:
                if i.get("measured_s") and i.get("analysed_s") and not i.get("borrowed"):
                    key = f"{part.split('.')[0]} {i['level_name']} {'nt' if 'store=nt' in name else '-'}"
                    out.setdefault(key, []).append(i["measured_s"] / i["analysed_s"])
    return out


def pair(clock: float, ks: list[int], tiles: list[int], cc: str) -> list[dict]:
    """The loop pair's rows: K, threads, where, tile and the four timings (PAIR_COLUMNS)."""
    rows = []
    cores = os.cpu_count() or 1
    with tempfile.TemporaryDirectory() as tmp:
        for k in ks:
            exe = Path(tmp, f"looppair{k}")
            subprocess.run([cc, "-O3", "-march=native", "-fopenmp", f"-DK={k}", str(HERE / "looppair.c"),
                            "-o", str(exe)], check=True)
            for threads in sorted({1, cores}):
                env = dict(os.environ, OMP_NUM_THREADS=str(threads), OMP_PROC_BIND="close", OMP_PLACES="cores")
                for where, n, inner, tile_set in (("L1", 512 * threads, 2000, tiles[:1]),
                                                  ("memory", 16_000_000, 1, tiles)):
                    for tile in tile_set:
                        got = subprocess.run([str(exe), str(n), str(tile), "9", str(inner), str(clock)],
                                             env=env, capture_output=True, text=True, check=True)
                        rows.append({"K": k, "threads": threads, "where": where, "tile": tile,
                                     **dict(zip(PAIR_COLUMNS, map(float, got.stdout.split())))})
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.loops")
    ap.add_argument("--machine", help="a machine file calibrate --node made on this host")
    ap.add_argument("--against-code", help="a checkout whose autotune explains the same forms (before a change)")
    ap.add_argument("--ivps", default="heat2d,inverterchain,wave1d,benchmarks/ivps/allencahn1d.yaml")
    ap.add_argument("--n", type=int, default=4_000_000)
    ap.add_argument("--store", help="SQLite store (default: a fresh one in a temporary folder)")
    ap.add_argument("--pair", action="store_true", help="the loop pair instead")
    ap.add_argument("--clock", type=float, default=2.5e9, help="Hz to count cycles at (--pair)")
    ap.add_argument("--ks", default="8,16", help="multiply-adds per element (--pair)")
    ap.add_argument("--tiles", default="512,65536", help="components per tile (--pair)")
    ap.add_argument("--cc", default=os.environ.get("CC", "gcc"))
    ap.add_argument("--json")
    a = ap.parse_args(argv)
    if a.pair:
        try:
            ks, tiles = [int(x) for x in a.ks.split(",")], [int(x) for x in a.tiles.split(",")]
        except ValueError:
            print("--ks, --tiles: expected comma-separated integers", file=sys.stderr)
            return 2
        rows = pair(a.clock, ks, tiles, a.cc)
        print(f"{'K':>3} {'threads':>7} {'where':7} {'tile':>6} " + " ".join(f"{c:>19}" for c in PAIR_COLUMNS)
              + "   (cycles per cache line)")
        for r in rows:
            print(f"{r['K']:3} {r['threads']:7} {r['where']:7} {r['tile']:6} "
                  + " ".join(f"{r[c]:19.1f}" for c in PAIR_COLUMNS))
        result: object = rows
    else:
        if not a.machine or not Path(a.machine).is_file():
            print(f"--machine: expected a machine file, got {a.machine!r}", file=sys.stderr)
            return 2
        if a.against_code and not Path(a.against_code, "autotune").is_dir():
            print(f"--against-code: {a.against_code}: not a checkout of autotune", file=sys.stderr)
            return 2
        tmp = tempfile.TemporaryDirectory()
        store = a.store or str(Path(tmp.name, "store.sqlite"))
        sides = ([("before", a.against_code)] if a.against_code else []) + [("after" if a.against_code else "this", None)]
        result = {}
        print(f"{'ivp':14} {'side':7} {'sweep':7} {'level':5} {'stores':6} measured / analysed: median (range, forms)")
        for ivp in a.ivps.split(","):
            for side, code in sides:
                got = sweep_ratios(code, str(Path(a.machine).resolve()), ivp, a.n, store)
                result.setdefault(ivp, {})[side] = got
                for key, v in sorted(got.items()):
                    sweep, level, stores = key.split()
                    print(f"{Path(ivp).stem:14} {side:7} {sweep:7} {level:5} {stores:6} {statistics.median(v):.2f} "
                          f"({min(v):.2f}-{max(v):.2f}, {len(v)})", flush=True)
        tmp.cleanup()
    if a.json:
        write_text(Path(a.json), json.dumps(result, indent=1) + "\n", "--json")
    return 0


if __name__ == "__main__":
    sys.exit(main())

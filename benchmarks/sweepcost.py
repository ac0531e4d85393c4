"""What a fused sweep costs beyond its loops: per tile, and per sweep.

    python -m benchmarks.sweepcost --machine FILE [--ivps heat2d,inverterchain] [--stores plain,nt]
                                   [--tiles 64,128,256,512] [--fractions 0.25,0.5,0.75,1]
                                   [--rounds 5] [--json out.json]

For each IVP and store kind, the first fused `block=l1` form of its pool (no pipelined step, no
overlap) is built as `tune` builds it (the file's flags) and run on one rank and the file's cores,
its data in L2: at the size the model measures its sweeps at there (pipeline.sweeps
measure_sizes), with the tile set to each of --tiles (the solver's code, its TILE alone changed),
and at --fractions of that size with its own tile.  Round-robin, --rounds runs each; per sweep
kind (pred, corr: the corrector's sweeps averaged, final) the median seconds per execution.

Two straight lines are fitted by least squares, per sweep kind:
- over the tiles, seconds = a + c * tiles a thread runs: c is what a tile costs beyond its loops
  (its calls, bounds, loop heads and tails, the streamed rows' ends), printed in cycles;
- over the sizes, seconds = a + b * n: a is what a sweep costs at any size (its parallel
  region's start and end, the threads' imbalance), printed beside the region the file prices as
  a barrier (cluster.barrier), and b in cycles per cache line of one thread's share.
(docs/node-model.md, "What a sweep costs beyond its loops").
"""
from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import sys
from pathlib import Path

from autotune.storage.atomic import write_text

KINDS = ("pred", "corr", "final")     # specs.step.SWEEP_TIMER's names of the fused groups


def form_of(ivp, nt: bool):
    """The first fused block=l1 form of the IVP's pool, no pipelined step, no overlap, with
    streaming stores (nt) or without."""
    from autotune.specs.variants import enumerate_variants
    return next(v for v in enumerate_variants(ivp.comm)
                if v.fuse == "rhs-lc" and v.block == "l1" and v.pipe == "none" and v.overlap == "none"
                and (v.store == "nt") == nt)


def measure(machine, ivp_name: str, nt: bool, tiles: list[int], fractions: list[float], rounds: int) -> dict:
    """The runs of one IVP's form: its name, the L2 size, and per point ("tile T" at that size,
    "n N" at the form's tile) n, tile and the median seconds per sweep kind (the corrector's
    sweeps averaged: pipeline.sweeps.per_execution)."""
    from autotune.codegen.solver import solver_source
    from autotune.pipeline.layout import tile_of
    from autotune.pipeline.sweeps import measure_sizes, per_execution, run_flags, step_vectors
    from autotune.request.defaults import DEFAULT_METHOD
    from autotune.specs.ivp import load_ivp
    from autotune.specs.method import load_method
    from autotune.specs.step import SWEEP_TIMER
    from autotune.specs.stepvalues import step_form
    from autotune.tools.sweep_bench import build_all, time_all
    ivp, method = load_ivp(ivp_name), load_method(DEFAULT_METHOD)
    variant = form_of(ivp, nt)
    step = step_form(method, variant)
    own = tile_of((("block", variant.block),), machine, method.stages)
    sizes = [s for s in measure_sizes(ivp, machine, step_vectors(step), own) if s[1] == 1]
    if not sizes:
        raise SystemExit(f"{ivp_name}: the model measures no sweep in L2 on this machine file")
    n0, _, threads = sizes[0]
    points: dict[str, tuple[int, int]] = {f"tile {t}": (n0, t) for t in tiles}
    points.update({f"n {ivp.nearest_n(int(f * n0))}": (ivp.nearest_n(int(f * n0)), own) for f in fractions})
    sources = {key: re.sub(r"#define TILE \d+", f"#define TILE {tile}", solver_source(ivp, method, variant, n, machine),
                           count=1) for key, (n, tile) in points.items()}
    exes, failed = build_all(sources, run_flags(machine))
    runs, failed_runs = time_all({k: (exes[k], n, ivp.size_value(n), 1e-9, threads, False)
                                  for k, (n, _) in points.items() if k in exes}, rounds)
    if failed or failed_runs:
        raise SystemExit(f"{ivp_name}: " + "; ".join(f"{k}: {why}" for k, why in {**failed, **failed_runs}.items()))
    kinds = {str(group): SWEEP_TIMER[group] for _, group in step.timers}
    out = {}
    for key, (n, tile) in points.items():
        per = per_execution(runs[key], step.timers)
        out[key] = {"n": n, "tile": tile, **{kinds[g]: seconds for g, seconds in per.items()}}
    return {"variant": variant.name, "n_l2": n0, "threads": threads, "tile": own, "points": out}


def _line(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """(slope, intercept) of the least-squares line; NaN where the xs are all alike (tiles that
    come to the same count a thread runs)."""
    try:
        return statistics.linear_regression(xs, ys)
    except statistics.StatisticsError:
        return math.nan, math.nan


def fits(m: dict, clock: float, region_s: float, cacheline_doubles: int = 8) -> dict[str, dict]:
    """Per sweep kind: cycles per tile (over the tile points), the fixed seconds per sweep and the
    cycles per line of one thread (over the size points), the region the file prices."""
    th, out = m["threads"], {}
    tile_pts = [p for k, p in m["points"].items() if k.startswith("tile ")]
    size_pts = [p for k, p in m["points"].items() if k.startswith("n ")]
    for kind in KINDS:
        if not all(kind in p for p in tile_pts + size_pts):
            continue
        per_tile, _ = _line([math.ceil(p["n"] / th / p["tile"]) for p in tile_pts], [p[kind] for p in tile_pts])
        per_n, fixed = _line([p["n"] for p in size_pts], [p[kind] for p in size_pts])
        out[kind] = {"cycles_per_tile": per_tile * clock, "fixed_s": fixed, "region_s": region_s,
                     "cycles_per_line": per_n * th * cacheline_doubles * clock}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.sweepcost")
    ap.add_argument("--machine", required=True, help="a machine file calibrate --node made on this host")
    ap.add_argument("--ivps", default="heat2d,inverterchain")
    ap.add_argument("--stores", default="plain,nt", help="plain, nt or both: the form's store kind")
    ap.add_argument("--tiles", default="64,128,256,512")
    ap.add_argument("--fractions", default="0.25,0.5,0.75,1")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--json")
    a = ap.parse_args(argv)
    try:
        tiles = [int(x) for x in a.tiles.split(",")]
        fractions = [float(x) for x in a.fractions.split(",")]
    except ValueError:
        print("--tiles, --fractions: expected comma-separated numbers", file=sys.stderr)
        return 2
    if len(tiles) < 2 or len(fractions) < 2 or min(tiles) < 1 or not all(0 < f <= 1 for f in fractions):
        print("--tiles, --fractions: expected two or more tiles >= 1 and fractions in (0, 1]", file=sys.stderr)
        return 2
    stores = a.stores.split(",")
    if not stores or any(s not in ("plain", "nt") for s in stores):
        print(f"--stores: expected plain, nt or plain,nt, got {a.stores!r}", file=sys.stderr)
        return 2
    if a.rounds < 1:
        print(f"--rounds: expected at least 1, got {a.rounds}", file=sys.stderr)
        return 2
    from autotune.errors import InputError
    from autotune.model.comm import barrier_seconds
    from autotune.specs.machine import load_machine
    try:
        machine = load_machine(a.machine)
    except (InputError, OSError) as e:
        print(f"--machine: {' '.join(str(e).split())[:300]}", file=sys.stderr)
        return 2
    result = {}
    print(f"{'ivp':14} {'stores':6} {'sweep':5} {'cy/tile':>8} {'fixed us':>9} {'region us':>9} {'cy/CL':>7}")
    for ivp in a.ivps.split(","):
        for store in stores:
            m = measure(machine, ivp, store == "nt", tiles, fractions, a.rounds)
            region = barrier_seconds(m["threads"], float(machine.barrier.get("per_doubling_s") or 0.0))
            m["fits"] = fits(m, machine.clock_hz, region)
            result.setdefault(ivp, {})[store] = m
            for kind, f in m["fits"].items():
                print(f"{Path(ivp).stem:14} {store:6} {kind:5} {f['cycles_per_tile']:8.0f} {1e6 * f['fixed_s']:9.2f} "
                      f"{1e6 * f['region_s']:9.2f} {f['cycles_per_line']:7.1f}", flush=True)
    if a.json:
        write_text(Path(a.json), json.dumps(result, indent=1) + "\n", "--json")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark of the online solver (docs/online.md) against the best of its candidates run alone,
interleaved.

    python -m benchmarks.online [--ivps heat2d,inverterchain] [--n 4000000] [--configs 1x2,2x1]
                                [--machine localhost] [--k 5] [--steps 300] [--rounds 5]
                                [--online-per-round 2] [--json out.json]

Per IVP and configuration (nodes x threads): the model's top K, each built alone and the online
solver of all K.  Each is built once more, uncached, for the build times (the online solver's
parts compiled as tools.build does: as many at once as there are CPUs).  Then rounds: each
candidate alone for --steps steps, and --online-per-round online runs of --steps, in an order
that rotates each round (a shared machine drifts between minutes).  Printed, per scenario:

    wall       the online run's wall time (launch to exit) over the best candidate's alone, the
               median over the rounds of the ratio within a round (and of the medians)
    choice     how many online runs chose the measured best (the lowest median step alone) or
               one within 2 % of it
    trial      the first trial's steps, in % of the run's, and its share of the run's wall time
    build      the online solver's build over one variant's (the model's first)
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from autotune.storage.atomic import write_text

WITHIN_PCT = 2.0


def _config(text: str) -> tuple[int, int]:
    nodes, _, threads = text.partition("x")
    return int(nodes), int(threads)


def _build_s(source: str, flags: tuple[str, ...], parts: int) -> float:
    """Seconds to build the source from nothing (no cache)."""
    from autotune.tools.build import _compile, find_mpicc
    with tempfile.TemporaryDirectory() as d:
        src = Path(d) / "s.c"
        src.write_text(source)
        t0 = time.perf_counter()
        proc = _compile(find_mpicc(), flags, str(src), Path(d) / "solver", parts)
        if proc.returncode:
            raise SystemExit(proc.stderr[-2000:])
        return time.perf_counter() - t0


def scenario(ivp_name: str, cfg: tuple[int, int], a) -> dict:
    import autotune
    from autotune.codegen.online import meta_of
    from autotune.pipeline.online import online_solver
    from autotune.codegen.solver import solver_source
    from autotune.request.run import machine_flags
    from autotune.tools.build import build, run
    from autotune.tools.launcher import parse_launcher

    nodes, threads = cfg
    ranked = autotune.rank(ivp_name, n=a.n, nodes=nodes, threads=threads, machine=a.machine, top=a.k)
    sc = ranked.scenario
    top = [r for r in ranked.ordered if r.prediction][:a.k]
    names = [r.variant.name for r in top]
    flags = tuple(machine_flags(sc.machine.isa_flags).split())
    meta = meta_of(sc.ivp, sc.method, sc.machine, flags, [r.prediction.total_s for r in top])
    online = online_solver(sc.ivp, sc.method, [r.variant for r in top], sc.n, sc.machine, meta)
    alone_src = {r.variant.name: solver_source(sc.ivp, sc.method, r.variant, sc.n, sc.machine) for r in top}
    build_online_s = _build_s(online.source, flags, online.parts)
    build_one_s = _build_s(alone_src[names[0]], flags, 0)
    exes = {name: build(src, flags) for name, src in alone_src.items()}
    exes["online"] = build(online.source, flags, parts=online.parts)
    h, launcher = sc.ivp.default_step(sc.n), parse_launcher(None)
    wall: dict[str, list[float]] = {k: [] for k in exes}
    step: dict[str, list[float]] = {k: [] for k in names}
    runs = []
    order = names + ["online"] * a.online_per_round
    for r in range(a.rounds):
        for name in order[r % len(order):] + order[:r % len(order)]:
            t0 = time.perf_counter()
            out = run(exes[name], launcher, nodes, threads, sc.n, sc.ivp.size_value(sc.n), a.steps, h, 1,
                      timeout=900, pin=False)
            took = time.perf_counter() - t0
            wall[name].append(took)
            if name == "online":
                on = out["online"]
                first = on["trials"][0]
                runs.append({"round": r, "wall_s": took, "choice": on["choice"], "trial_steps": first["steps"],
                             "trial_rounds": first["rounds"], "why": first["why"], "log": out.get("log", []),
                             "trial_s": sum(sum(c["steps_s"]) for c in first["candidates"])})
            else:
                step[name].append(out["median_step_s"])
            print(f"  {ivp_name} {nodes}x{threads} round {r + 1}: {name[:60]}: {took:.2f} s", file=sys.stderr,
                  flush=True)
    med_step = {k: statistics.median(v) for k, v in step.items()}
    best = min(names, key=lambda k: med_step[k])
    best_wall = min(names, key=lambda k: statistics.median(wall[k]))
    ratio_in_round = [o["wall_s"] / wall[best_wall][o["round"]] for o in runs]
    good = [o for o in runs if med_step[o["choice"]] <= med_step[best] * (1 + WITHIN_PCT / 100)]
    return {"ivp": ivp_name, "nodes": nodes, "threads": threads, "n": a.n, "steps": a.steps, "k": a.k,
            "candidates": names, "median_step_s": med_step, "wall_s": {k: statistics.median(v) for k, v in wall.items()},
            "best": best, "best_wall": best_wall,
            "wall_ratio": statistics.median(ratio_in_round),
            "wall_ratio_of_medians": statistics.median(wall["online"]) / statistics.median(wall[best_wall]),
            "choices_good": len(good), "online_runs": len(runs),
            "chosen": {c: sum(1 for o in runs if o["choice"] == c) for c in names},
            "trial_steps": statistics.median(o["trial_steps"] for o in runs),
            "trial_pct": 100.0 * statistics.median(o["trial_steps"] for o in runs) / a.steps,
            "trial_wall_pct": 100.0 * statistics.median(o["trial_s"] / o["wall_s"] for o in runs),
            "build_online_s": build_online_s, "build_one_s": build_one_s,
            "build_ratio": build_online_s / build_one_s, "runs": runs, "alone_steps_s": step, "walls_s": wall}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--ivps", default="heat2d,inverterchain")
    p.add_argument("--n", type=int, default=4_000_000)
    p.add_argument("--configs", default="1x2,2x1")
    p.add_argument("--machine", default="localhost")
    p.add_argument("--k", type=int, default=5)
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--online-per-round", type=int, default=2)
    p.add_argument("--json", type=Path)
    a = p.parse_args(argv)
    out = [scenario(ivp, _config(c), a) for ivp in a.ivps.split(",") for c in a.configs.split(",")]
    print(f"{'IVP':14} {'n x t':5} {'wall online/best':>16} {'(of medians)':>12} {'choice ok':>9} "
          f"{'trial steps %':>13} {'trial wall %':>12} {'build x one':>11}")
    for s in out:
        print(f"{s['ivp']:14} {s['nodes']}x{s['threads']:<3} {s['wall_ratio']:16.3f} {s['wall_ratio_of_medians']:12.3f} "
              f"{s['choices_good']:>4}/{s['online_runs']:<4} {s['trial_pct']:13.1f} {s['trial_wall_pct']:12.1f} "
              f"{s['build_ratio']:11.2f}")
    for s in out:
        print(f"\n{s['ivp']} {s['nodes']}x{s['threads']}: measured best {s['best']} "
              f"({s['median_step_s'][s['best']]:.4e} s per step); chosen: "
              + ", ".join(f"#{s['candidates'].index(c) + 1} x{k}" for c, k in s["chosen"].items() if k))
        for i, c in enumerate(s["candidates"], 1):
            spread = s["alone_steps_s"][c]
            print(f"  #{i} {s['median_step_s'][c]:.4e} s per step ({min(spread):.4e} .. {max(spread):.4e} over the "
                  f"rounds), {s['wall_s'][c]:.2f} s wall  {c}")
        print(f"  online {s['wall_s']['online']:.2f} s wall; build {s['build_online_s']:.1f} s against "
              f"{s['build_one_s']:.1f} s for one variant")
    if a.json:
        write_text(a.json, json.dumps(out, indent=2), "json")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark of the pipelined step (pipe=wavefront) against today's best forms, interleaved.

    python -m benchmarks.pipe [--ivps heat2d,inverterchain,wave1d] [--n 4000000]
                              [--configs 1x2,2x1] [--machine localhost] [--rounds 5] [--steps 10]
                              [--small-n 40000] [--strips] [--json out.json]

--strips: the step over strips of the IVP's grid (traversal=strips: the pipelined step, the fused
sweeps, the model's best separate sweeps, and the model's best of all) against the forms before
them, the row-order pipelined ones among them (IVPs that declare a grid only).

Per IVP and configuration (nodes x threads) it builds the fused forms that were the fastest
before this dimension (block l1 or l2, stores through the caches or streaming, the model's best
of the pool without pipelining) and the pipelined ones, and runs them round-robin (a shared
machine drifts between minutes: every variant sees the drift alike).  It prints medians: the
best before and after and their ratio, the step's floor (bound_s) and the per-sweep floor, each
pipelined variant predicted against measured, and the traffic of one pipelined step by level,
predicted (model.reuse) against the floor's.  At --small-n it ranks with and without the
pipelined values and measures both rankings' top three: the top-1 loss of each.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

from autotune.storage.atomic import write_text

FUSED = "lc=jl-onepass,comm={comm},au=fused,pred=direct,buf=ghost,rhs=onepass,fuse=rhs-lc,block={block}"


def _config(text: str) -> tuple[int, int]:
    nodes, _, threads = text.partition("x")
    return int(nodes), int(threads)


def traffic(step, vector_bytes: float, window_bytes: float, reach: tuple[float, ...], names: list[str],
            extra: dict[str, float]) -> dict[str, float]:
    """Bytes one step moves from each level (names: the caches', then MEM): every vector each sweep
    touches, split over the levels as model.reuse places it (a written line counted once)."""
    from autotune.model.ops import SCALAR
    from autotune.model.reuse import level_shares_of, reuse_distances
    out = dict.fromkeys(names, 0.0)
    for sw, dists in zip(step.sweeps(), reuse_distances(step.sweeps())):
        grow = 1.0 + extra.get(str(sw.group), 0.0)
        for d in dists:
            shares = level_shares_of(SCALAR, ((d, 1),), vector_bytes, reach, None, window_bytes)
            for name, w in zip(names, shares):
                out[name] += w * vector_bytes * grow
    return out


def _deviations(names, by_name: dict, got: dict) -> dict:
    return {v: {"measured_s": got[v], "predicted_s": by_name[v].prediction.total_s,
                "deviation_pct": 100 * (by_name[v].prediction.total_s - got[v]) / got[v]}
            for v in names if v in by_name}


def _measure(exes: dict, cfg, ivp, n: int, steps: int, rounds: int, label: str) -> dict[str, float]:
    from autotune.tools.build import run
    from autotune.tools.launcher import parse_launcher
    times: dict[str, list[float]] = {k: [] for k in exes}
    h = ivp.default_step(n)
    for r in range(rounds):
        for k, exe in exes.items():
            times[k].append(run(exe, parse_launcher(None), cfg[0], cfg[1], n, ivp.size_value(n), steps, h, 2)[
                "median_step_s"])
        print(f"{label}: round {r + 1}/{rounds}", file=sys.stderr)
    return {k: statistics.median(v) for k, v in times.items()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.pipe")
    ap.add_argument("--ivps", default="heat2d,inverterchain,wave1d")
    ap.add_argument("--n", type=int, default=4_000_000)
    ap.add_argument("--configs", default="1x2,2x1")
    ap.add_argument("--machine", default="localhost")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--small-n", type=int, default=40_000)
    ap.add_argument("--strips", action="store_true", help="the pipelined step over strips against the rest")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args(argv)

    import autotune
    from autotune.codegen.solver import solver_source
    from autotune.errors import CannotRun
    from autotune.model.reuse import level_reach
    from autotune.request.run import RunOptions
    from autotune.specs.ivp import load_ivp
    from autotune.specs.machine import load_machine
    from autotune.specs.method import load_method
    from autotune.specs.parts import DOUBLE
    from autotune.specs.stepvalues import step_form
    from autotune.specs.variants import parse_variant, spaces
    from autotune.specs.window import extra_share
    from autotune.pipeline.applicable import window_of
    from autotune.specs.scenario import Scenario
    from autotune.tools.build import build

    method, machine = load_method("radauIIA7"), load_machine(a.machine)
    flags = list(RunOptions().plan(1.0, machine.isa_flags).flags)
    report = {"machine": machine.name, "n": a.n, "rows": [], "small": []}
    for name in a.ivps.split(","):
        ivp = load_ivp(name)
        n = ivp.nearest_n(a.n)
        comm = "neighbour" if "neighbour" in ivp.comm else ivp.comm[0]
        for cfg in map(_config, a.configs.split(",")):
            ranked = autotune.rank(name, n=n, nodes=cfg[0], threads=cfg[1], machine=a.machine)
            by_name = {r.variant.name: r for r in ranked.ordered}
            before = {FUSED.format(comm=comm, block=b) + s for b in ("l1", "l2") for s in ("", ",store=nt")}
            before.add(next(r.variant.name for r in ranked.ordered
                            if r.variant.pipe == "none" and r.variant.traversal == "rows"))
            after = {FUSED.format(comm=comm, block=b) + ",pipe=wavefront" for b in ("l1", "l2")}
            if a.strips:        # today's pipelined forms are the before; the strips the after:
                before |= after  # the pipelined step's, the fused sweeps', the model's best separate
                strips = [r.variant for r in ranked.ordered if r.variant.traversal == "strips"]  # and best
                after = {FUSED.format(comm=comm, block="l2") + s + ",traversal=strips"
                         for s in (",pipe=wavefront", "", ",store=nt")}
                after |= {v.name for v in strips[:1] + [v for v in strips if v.fuse == "none"][:1]}
            before = {parse_variant(v, spaces(ivp)).name for v in before}
            after = {parse_variant(v, spaces(ivp)).name for v in after} - before
            exes = {}
            for v in sorted(before | after):
                try:
                    exes[v] = build(solver_source(ivp, method, parse_variant(v, spaces(ivp)), n, machine), flags)
                except CannotRun as e:          # heat3d's pipelined step over strips: no window fits
                    print(f"{name} {cfg[0]}x{cfg[1]}: not run: {e}", file=sys.stderr)
            before, after = before & exes.keys(), after & exes.keys()
            got = _measure(exes, cfg, ivp, n, a.steps, a.rounds, f"{name} {cfg[0]}x{cfg[1]}")
            best_before = min(before, key=got.__getitem__)
            best_after = min(after, key=got.__getitem__)
            b = ranked.bound
            row = {"ivp": name, "n": n, "nodes": cfg[0], "threads": cfg[1],
                   "best_before": best_before, "before_s": got[best_before],
                   "best_after": best_after, "after_s": got[best_after],
                   "ratio": got[best_after] / got[best_before],
                   "bound_s": ranked.bound_s, "bound_sweep_s": ranked.bound_sweep_s,
                   "after_over_bound": got[best_after] / ranked.bound_s if ranked.bound_s else None,
                   "measured_s": got,
                   "pipelined": _deviations(sorted(after), by_name, got),
                   "before": _deviations(sorted(before), by_name, got)}
            pick = min((v for v in got if v in by_name), key=lambda v: by_name[v].prediction.total_s)
            row["model_pick"], row["top1_loss_pct"] = pick, 100 * (got[pick] / min(got.values()) - 1)
            # the traffic of one pipelined step, by level, against the floor's
            v = parse_variant(best_after, spaces(ivp))
            step = step_form(method, v)
            threads = min(machine.cores, cfg[1])
            reach = level_reach(machine, threads)
            d = ivp.access_distance(n)
            comps = -(-n // cfg[0])
            regions = cfg[0] * cfg[1]
            names = [c.name for c in machine.caches] + ["MEM"]
            window = window_of(Scenario(ivp, method, machine, n, cfg[0], cfg[1]), v)
            if window is None:      # the best over strips is a fused or separate sweep's
                v = parse_variant(FUSED.format(comm=comm, block="l2") + ",pipe=wavefront,traversal=strips",
                                  spaces(ivp))
                step = step_form(method, v)
                window = window_of(Scenario(ivp, method, machine, n, cfg[0], cfg[1]), v)
            # the strips' edge work of a level reaching e: the predictor's (e = m) in proportion (2D)
            edge = {g: window.get("edge_share", 0.0) * e / method.iterations for g, e in step.extends.items()}
            moved = traffic(step, DOUBLE * comps, DOUBLE * window["ring_components"] * threads, reach, names,
                            {g: extra_share(d, e, regions, n) + edge[g] for g, e in step.extends.items()})
            row["window"] = window
            row["traffic_bytes"] = moved
            row["floor_bytes"] = b.bytes if b else None
            row["floor_level"] = b.level if b else None
            report["rows"].append(row)
            print(f"{name} {cfg[0]}x{cfg[1]}: before {got[best_before]:.4e} s ({best_before}), after "
                  f"{got[best_after]:.4e} s ({best_after}): {row['ratio']:.2f} x; floor bound_s {ranked.bound_s:.4e} s "
                  f"({row['after_over_bound']:.2f} x), per-sweep floor {ranked.bound_sweep_s:.4e} s")
            for k, p in {**row["pipelined"], **row["before"]}.items():
                print(f"    {k.split('fuse=rhs-lc,')[1] if 'fuse=rhs-lc,' in k else k}: predicted "
                      f"{p['predicted_s']:.4e} s, measured {p['measured_s']:.4e} s ({p['deviation_pct']:+.1f} %)")
            print(f"    the model's pick of these: {pick}, top-1 loss {row['top1_loss_pct']:.1f} %")
            print("    one pipelined step moves " + ", ".join(f"{k} {x / 1e9:.3g} GB" for k, x in moved.items())
                  + f" (predicted); the floor {row['floor_bytes'] / 1e9:.3g} GB from {row['floor_level']}")
        if a.small_n:
            report["small"].append(_small(name, ivp, method, machine, flags, a))
    print(_table(report))
    if a.json:
        write_text(a.json, json.dumps(report, indent=1) + "\n", "--json")
    return 0


def _small(name, ivp, method, machine, flags, a) -> dict:
    """The top-1 loss at a small n with and without the pipelined values, on the first config."""
    import autotune
    from autotune.codegen.solver import solver_source
    from autotune.specs.variants import parse_variant, spaces
    from autotune.tools.build import build
    cfg = _config(a.configs.split(",")[0])
    n = ivp.nearest_n(a.small_n)
    full = autotune.rank(name, n=n, nodes=cfg[0], threads=cfg[1], machine=a.machine)
    old = autotune.rank(name, n=n, nodes=cfg[0], threads=cfg[1], machine=a.machine, variant_filter="pipe=none")
    tops = [[r.variant.name for r in res.ordered[:3]] for res in (full, old)]
    exes = {v: build(solver_source(ivp, method, parse_variant(v, spaces(ivp)), n, machine), flags)
            for v in dict.fromkeys(tops[0] + tops[1])}
    got = _measure(exes, cfg, ivp, n, 200, a.rounds, f"{name} n={n}")
    best = min(got.values())
    out = {"ivp": name, "n": n, "excluded": {e.item: e.why for e in full.excluded}, "top_with_pipe": tops[0], "top_without": tops[1],
           "measured_s": got, "loss_with_pipe_pct": 100 * (got[tops[0][0]] / best - 1),
           "loss_without_pct": 100 * (got[tops[1][0]] / best - 1)}
    print(f"{name} n = {n}: top-1 loss {out['loss_with_pipe_pct']:.1f} % with the pipelined values, "
          f"{out['loss_without_pct']:.1f} % without ({'; '.join(f'{e.item} {e.why}' for e in full.excluded) or 'none excluded'})")
    return out


def _table(report: dict) -> str:
    lines = ["", "| IVP | nodes x threads | best before (s) | best after (s) | after/before | floor bound_s (s) "
             "| after/floor | model dev. after | model dev. before | top-1 loss |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in report["rows"]:
        dev = ", ".join(f"{p['deviation_pct']:+.0f} %" for p in r["pipelined"].values())
        old = [p["deviation_pct"] for p in r["before"].values()]
        lines.append(f"| {r['ivp']} | {r['nodes']} x {r['threads']} | {r['before_s']:.4f} | {r['after_s']:.4f} | "
                     f"{r['ratio']:.2f} | {r['bound_s']:.4f} | {r['after_over_bound']:.2f} | {dev} | "
                     f"{min(old):+.0f} .. {max(old):+.0f} % | {r['top1_loss_pct']:.1f} % |")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())

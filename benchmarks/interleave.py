"""Benchmark of an IVP's two coupled blocks stored interleaved (its twin, specs.interleave)
against the blocked storage, measured round-robin in one run.

    python -m benchmarks.interleave [--ivps string-row,medakzo] [--n 4000000] [--configs 1x2,2x1]
                                    [--machine localhost] [--top 3] [--rounds 5] [--steps 10]
                                    [--json out.json]

Per IVP and configuration (nodes x threads) it ranks the IVP (one pool over both ways of storing
its blocks: the dimension blocks), builds each way's `--top` best predicted variants (its best
pipelined one among them where it has one) and runs them all round-robin (a shared machine
drifts between minutes: every variant sees the drift alike).  It prints the medians: the best
measured step stored as the IVP's file says, interleaved, their ratio, each variant predicted
against measured, and the ranking's first against the measured best (the top-1 loss).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from types import SimpleNamespace

from autotune.storage.atomic import write_text


def _config(text: str) -> tuple[int, int]:
    nodes, sep, threads = text.partition("x")
    if not sep or not nodes.isdigit() or not threads.isdigit() or int(nodes) < 1 or int(threads) < 1:
        raise ValueError(f"--configs: expected NODESxTHREADS (1x2,2x1), got {text!r}")
    return int(nodes), int(threads)


def picks(ranked, top: int) -> list[str]:
    """The `top` best predicted variants of a ranking, and its best pipelined one where it has one."""
    names = [r.variant.name for r in ranked.ordered if r.prediction is not None]
    pipelined = next((r.variant.name for r in ranked.ordered if r.prediction is not None and r.variant.pipe != "none"),
                     None)
    return list(dict.fromkeys(names[:top] + ([pipelined] if pipelined else [])))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.interleave")
    ap.add_argument("--ivps", default="string-row,medakzo")
    ap.add_argument("--n", type=int, default=4_000_000)
    ap.add_argument("--configs", default="1x2,2x1")
    ap.add_argument("--machine", default="localhost")
    ap.add_argument("--top", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--json", type=Path)
    a = ap.parse_args(argv)

    import autotune
    from autotune.codegen.solver import solver_source
    from autotune.errors import InputError
    from autotune.request.run import RunOptions
    from autotune.specs.ivp import interleaved, load_ivp
    from autotune.specs.machine import load_machine
    from autotune.specs.method import load_method
    from autotune.specs.variants import ivp_for, parse_variant, spaces
    from autotune.tools.build import build, run
    from autotune.tools.launcher import parse_launcher

    try:
        if a.top < 1 or a.rounds < 1 or a.steps < 1:
            raise ValueError("--top, --rounds, --steps: expected at least 1")
        configs = [_config(c) for c in a.configs.split(",")]
        machine, method = load_machine(a.machine), load_method("radauIIA7")
        twins = [name for name in a.ivps.split(",") if name.endswith(".interleaved")]
        if twins:
            raise ValueError(f"--ivps: {twins[0]} is a twin already: name the blocked IVP")
        ivps = [(load_ivp(name), interleaved(load_ivp(name))) for name in a.ivps.split(",")]
    except (ValueError, InputError) as e:
        print(f"benchmarks.interleave: {e}", file=sys.stderr)
        return 2
    flags = list(RunOptions().plan(1.0, machine.isa_flags).flags)
    report = {"machine": machine.name, "rows": []}
    for blocked, twin in ivps:
        n = blocked.nearest_n(a.n)
        h = blocked.default_step(n)
        for cfg in configs:
            whole = autotune.rank(blocked.path, n=n, nodes=cfg[0], threads=cfg[1], machine=a.machine)
            ranked = {ivp.name: SimpleNamespace(ordered=[r for r in whole.ordered  # each way's variants
                                                         if ivp_for(blocked, r.variant).name == ivp.name])
                      for ivp in (blocked, twin)}
            chosen = [(ivp, v) for ivp in (blocked, twin) for v in picks(ranked[ivp.name], a.top)]
            exes = {(ivp.name, v): build(solver_source(blocked, method, parse_variant(v, spaces(blocked)), n, machine),
                                         flags)
                    for ivp, v in chosen}
            times: dict[tuple, list[float]] = {k: [] for k in exes}
            for r in range(a.rounds):
                for k, exe in exes.items():
                    got = run(exe, parse_launcher(None), cfg[0], cfg[1], n, blocked.size_value(n), a.steps, h, 2)
                    times[k].append(got["median_step_s"])
                print(f"{blocked.name} {cfg[0]}x{cfg[1]}: round {r + 1}/{a.rounds}", file=sys.stderr)
            med = {k: statistics.median(v) for k, v in times.items()}
            best = {ivp.name: min((k for k in med if k[0] == ivp.name), key=med.__getitem__) for ivp in (blocked, twin)}
            predicted = {(name, r.variant.name): r.prediction.total_s for name, res in ranked.items()
                         for r in res.ordered if (name, r.variant.name) in med}
            row = {"ivp": blocked.name, "n": n, "nodes": cfg[0], "threads": cfg[1],
                   "blocked_best": best[blocked.name][1], "blocked_s": med[best[blocked.name]],
                   "twin_best": best[twin.name][1], "twin_s": med[best[twin.name]],
                   "ratio": med[best[twin.name]] / med[best[blocked.name]],
                   "model_ratio": ranked[twin.name].ordered[0].prediction.total_s
                   / ranked[blocked.name].ordered[0].prediction.total_s,
                   "first": whole.ordered[0].variant.name,
                   "top1_loss_pct": 100 * (next(v for k, v in med.items() if k[1] == whole.ordered[0].variant.name)
                                           / min(med.values()) - 1),
                   "variants": [{"ivp": k[0], "variant": k[1], "measured_s": med[k], "predicted_s": predicted[k],
                                 "deviation_pct": 100 * (predicted[k] - med[k]) / med[k]} for k in med]}
            report["rows"].append(row)
            print(f"{blocked.name} {cfg[0]}x{cfg[1]}: blocked {row['blocked_s']:.4e} s ({row['blocked_best']}), "
                  f"interleaved {row['twin_s']:.4e} s ({row['twin_best']}): {row['ratio']:.2f} x "
                  f"(the model: {row['model_ratio']:.2f} x); the ranking's first loses {row['top1_loss_pct']:.1f} % "
                  f"to the measured best")
            for v in row["variants"]:
                print(f"    {v['ivp']:24} {v['variant']}: predicted {v['predicted_s']:.4e} s, measured "
                      f"{v['measured_s']:.4e} s ({v['deviation_pct']:+.1f} %)")
    print(_table(report))
    if a.json:
        write_text(a.json, json.dumps(report, indent=1) + "\n", "--json")
    return 0


def _table(report: dict) -> str:
    lines = ["", f"machine {report['machine']}",
             "| IVP | nodes x threads | blocked best (s) | interleaved best (s) | interleaved/blocked | the model's "
             "| top-1 loss |",
             "|---|---|---|---|---|---|---|"]
    for r in report["rows"]:
        lines.append(f"| {r['ivp']} | {r['nodes']} x {r['threads']} | {r['blocked_s']:.4f} | {r['twin_s']:.4f} | "
                     f"{r['ratio']:.2f} | {r['model_ratio']:.2f} | {r['top1_loss_pct']:.1f} % |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())

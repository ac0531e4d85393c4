"""Benchmark of the generated fused sweeps: streaming stores against stores through the caches,
each fused sweep predicted against measured, what the sweep timers cost, and the best against
the floor with the memory bandwidth measured in the same run.

    python -m benchmarks.stores [--ivp heat2d] [--n 4000000] [--nodes 1] [--threads 2]
                                    [--machine localhost] [--reps 7] [--steps 12] [--json out.json]

Builds the fused variant (block=l1, buf=ghost) with store=none and store=nt, and the store=none
build with every timer compiled out (-DAUTOTUNE_NO_TIMERS), and runs them round-robin (a shared
machine drifts between minutes: every variant sees the drift alike), with the streaming
benchmark's memory triad between the rounds.  Prints medians.  The predictions come from
`autotune.rank` on the default store (kerncraft runs where it has not analysed the parts).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

from autotune.storage.atomic import write_text

FUSED = "lc=jl-onepass,comm={comm},au=fused,pred=direct,buf=ghost,rhs=onepass,fuse=rhs-lc,block=l1"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.stores")
    ap.add_argument("--ivp", default="heat2d")
    ap.add_argument("--n", type=int, default=4_000_000)
    ap.add_argument("--nodes", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--machine", default="localhost")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--json", type=Path)
    a = ap.parse_args(argv)

    import autotune
    from autotune.codegen.solver import solver_source
    from autotune.request.run import RunOptions
    from autotune.specs.ivp import load_ivp
    from autotune.specs.machine import load_machine
    from autotune.specs.method import load_method
    from autotune.specs.stepvalues import step_form
    from autotune.specs.variants import parse_variant, spaces
    from autotune.tools.build import build, run
    from autotune.tools.hostprobe import build_stream, stream_gbps
    from autotune.tools.launcher import parse_launcher

    ivp, method, machine = load_ivp(a.ivp), load_method("radauIIA7"), load_machine(a.machine)
    n = ivp.nearest_n(a.n)
    comm = "neighbour" if "neighbour" in ivp.comm else ivp.comm[0]
    base = FUSED.format(comm=comm)
    names = {"none": base, "nt": base + ",store=nt"}
    ranked = autotune.rank(a.ivp, n=n, nodes=a.nodes, threads=a.threads, machine=a.machine, variant_filter=None)
    by_name = {r.variant.name: r for r in ranked.ordered}
    flags = list(RunOptions().plan(1.0, machine.isa_flags).flags)
    exes = {k: build(solver_source(ivp, method, parse_variant(v, spaces(ivp)), n, machine), flags)
            for k, v in names.items()}
    exes["none, no timers"] = build(solver_source(ivp, method, parse_variant(base, spaces(ivp)), n, machine),
                                    flags + ["-DAUTOTUNE_NO_TIMERS"])
    with tempfile.TemporaryDirectory() as tmp:
        stream = build_stream(Path(tmp))
        times: dict[str, list[float]] = {k: [] for k in exes}
        sweeps: dict[str, dict[str, list[float]]] = {k: {} for k in exes}
        triad = []
        h = ivp.default_step(n)
        for rep in range(a.reps):
            triad.append(stream_gbps(stream, "triad", 256 * 2**20, a.threads * a.nodes, 0.2) * 1e9)
            for k, exe in exes.items():
                r = run(exe, parse_launcher(None), a.nodes, a.threads, n, ivp.size_value(n), a.steps, h, 2)
                times[k].append(r["median_step_s"])
                for ph, sec in r["phases_s"].items():
                    sweeps[k].setdefault(ph, []).append(sec)
            print(f"round {rep + 1}/{a.reps}: " + ", ".join(f"{k} {v[-1]:.4e} s" for k, v in times.items()),
                  file=sys.stderr)
    bw = statistics.median(triad)
    b = ranked.bound
    # the floor's traffic at the bandwidth measured now (bound_s takes the machine file's)
    floor_now = b.bytes / bw + b.comm_s
    floor_wa_now = b.wa_bytes / bw + b.comm_s
    out = {"ivp": a.ivp, "n": n, "nodes": a.nodes, "threads": a.threads, "machine": a.machine,
           "bound_s": b.total_s, "bound_wa_s": b.wa_total_s, "triad_Bps": bw,
           "floor_at_measured_triad_s": floor_now, "floor_wa_at_measured_triad_s": floor_wa_now, "variants": {}}
    print(f"{a.ivp}, n = {n:,}, {a.nodes} x {a.threads}, machine {a.machine}: bound_s {b.total_s:.4e} s, "
          f"bound_wa_s {b.wa_total_s:.4e} s (machine file); memory triad measured now {bw / 1e9:.1f} GB/s: "
          f"floor {floor_now:.4e} s, with write-allocate {floor_wa_now:.4e} s")
    for k, name in list(names.items()) + [("none, no timers", base)]:
        r = by_name.get(name)
        pred = r.predicted_phases(step_form(method, r.variant).timers) if r and r.prediction else {}
        med = statistics.median(times[k])
        row = {"name": name, "measured_s": med, "runs_s": times[k], "predicted_s": r.predicted_s if r else None,
               "x_bound": med / b.total_s, "x_floor_now": med / floor_now,
               "sweeps": {ph: {"measured_s": statistics.median(v), "predicted_s": pred.get(ph)}
                          for ph, v in sweeps[k].items() if ph.startswith("sweep.")}}
        out["variants"][k] = row
        print(f"\nstore={k}: measured {med:.4e} s (median of {len(times[k])}), predicted "
              f"{row['predicted_s'] or float('nan'):.4e} s, {row['x_bound']:.2f} x bound_s, "
              f"{row['x_floor_now']:.2f} x the floor at the measured triad")
        if k != "none, no timers":
            for ph, q in row["sweeps"].items():
                p = q["predicted_s"]
                print(f"  {ph:12} measured {q['measured_s']:.4e} s  predicted {p or float('nan'):.4e} s  "
                      f"m/p {q['measured_s'] / p if p else float('nan'):.2f}")
    cost = 100 * (out["variants"]["none"]["measured_s"] / out["variants"]["none, no timers"]["measured_s"] - 1)
    out["timer_cost_pct"] = cost
    print(f"\nthe timers cost {cost:+.2f} % of the step (medians, store=none with and without them)")
    if a.json:
        write_text(a.json, json.dumps(out, indent=1), "json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Subcommands over batches: rank sweeps, `scale`, `plan` and `tune --plan`."""
from __future__ import annotations

import json
from pathlib import Path

from autotune.report import batch as batchreport
from autotune.pipeline.batch import SweepSpec, long_rows, long_tuples, no_cycle_collection, run_scale, run_sweep
from autotune.cli.commands import comm_filter, emit, open_store, progress_line, selection_rule
from autotune.errors import InputError
from autotune.report.rank import notes
from autotune.specs.ivp import ivp_names
from autotune.request.values import parse_names, parse_values


def _values(args, name: str) -> list[int] | None:
    value = getattr(args, name)
    return None if value is None else parse_values(value, f"--{name}")


def sweep_spec(args) -> SweepSpec:
    return SweepSpec(parse_names(args.ivp, "--ivp", ivp_names), _values(args, "n"), _values(args, "nodes"),
                     _values(args, "threads"), args.machine, args.method, comm_filter(args))


def is_sweep(spec: SweepSpec) -> bool:
    """More than one scenario asked for (a list or range in --ivp, --n, --nodes or --threads)."""
    return len(spec.ivps) > 1 or any(v is not None and len(v) > 1 for v in (spec.ns, spec.nodes, spec.threads))


def cmd_sweep(args, spec: SweepSpec, progress) -> int:
    rule = selection_rule(args)
    with open_store(args) as store:
        sweep = run_sweep(spec, rule, store, progress, args.jobs)
    with no_cycle_collection():
        rows = long_rows(sweep) if args.format == "table" else long_tuples(sweep)
    meta = {"machine": sweep.results[0].scenario.machine.name, "method": sweep.results[0].scenario.method.name,
            "selection": rule.describe(), "scenarios": len(sweep.results), "analyses_run": sweep.analyses_run,
            "skipped": sweep.skipped, "notes": notes(sweep.results[0])[:1]}
    emit({"csv": batchreport.sweep_csv, "json": batchreport.sweep_json,
            "table": batchreport.sweep_table}[args.format](meta, rows))
    return 0


def cmd_scale(args, progress) -> int:
    from autotune.model.scaling import parse_rule
    try:
        rule = parse_rule(args.rule)
    except ValueError as e:
        raise InputError(f"--rule {args.rule}: {e}") from None
    spec = sweep_spec(args)
    if len(spec.ivps) != 1 or (spec.ns and len(spec.ns) != 1) or (spec.threads and len(spec.threads) != 1):
        raise InputError("scale: give one --ivp, one --n and one --threads (sweep node counts with --nodes)")
    with open_store(args) as store:
        res = run_scale(spec, rule, store, progress, args.jobs)
    if args.plot:
        from autotune.report.plots import scale_plot
        scale_plot(res, args.plot)
    emit({"csv": batchreport.scale_csv, "json": lambda r: json.dumps(r, indent=1),
            "table": batchreport.scale_table}[args.format](res))
    return 0


def cmd_plan(args, progress) -> int:
    from autotune.pipeline.plan import make_plan, write_plan
    with open_store(args) as store:
        plan = make_plan(args.scenarios, store, progress, args.jobs)
    write_plan(plan, args.out)
    chosen = sum(len(s["variants"]) for s in plan["scenarios"])
    if args.format == "json":
        emit(json.dumps({"out": str(args.out), "scenarios": len(plan["scenarios"]), "variants": chosen,
                           "skipped": plan["skipped"]}, indent=2))
    else:
        for s in plan["scenarios"]:
            emit(f"{s['id']}: {len(s['variants'])} variant(s) ({s['selection']}): "
                   + ", ".join(v["name"] for v in s["variants"]))
        for s in plan["skipped"]:
            emit(f"skipped {s['ivp']} n={s['n']} nodes={s['nodes']} threads={s['threads']}: {s['reason']}")
        emit(f"wrote {args.out}: {len(plan['scenarios'])} scenarios, {chosen} variant runs")
    return 0


def cmd_tune_plan(args, progress) -> int:
    from autotune.pipeline.plan import read_plan, run_plan
    from autotune.report.rank import tune_table
    plan = read_plan(Path(args.plan))
    with open_store(args) as store:
        res = run_plan(plan, store, progress_line("tune"), args.jobs)
    if args.format == "json":
        emit(json.dumps(res, indent=2))
    elif args.format == "csv":
        from autotune.report.rank import tune_csv
        parts = [tune_csv(s) for s in res["scenarios"] if not s["error"]]
        emit(parts[0] + "".join(p.split("\n", 1)[1] for p in parts[1:]) if parts else "")
    else:
        for s in res["scenarios"]:
            if s["error"]:
                emit(f"{s['id']}: failed: {s['error']}\n")
                continue
            reused = sum(1 for v in s["variants"] if v["reused"])
            emit(tune_table(s) + (f"{reused} of {len(s['variants'])} variants measured before (from the store)\n"
                                    if reused else ""))
        t = res["totals"]
        emit(f"plan {res['plan']}: {t['scenarios']} scenarios, {t['ran']} variant(s) run now, {t['reused']} "
               f"from the store, {t['failed']} failed, {t['scenario_errors']} scenario(s) failed")
    return 0 if not res["totals"]["scenario_errors"] else 1

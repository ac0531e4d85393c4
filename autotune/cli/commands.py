"""What each subcommand does: read specs, call the pipeline, print a report."""
from __future__ import annotations

import json
from pathlib import Path

from autotune.report import rank as report
from contextlib import contextmanager

from autotune.errors import InputError
from autotune.storage.paths import default_store_path
from autotune.pipeline.predict import Scenario, applicable_variants, check_scenario, rank_scenario
from autotune.model.ranking import DEFAULT_WITHIN_PCT, Rule
from autotune.specs.ivp import ivp_names, load_ivp
from autotune.specs.machine import load_machine, machine_names
from autotune.specs.method import load_method, method_names
from autotune.storage.store import Store
from autotune.specs.variants import enumerate_variants, parse_variant


def _one(value, option: str) -> int | None:
    """A single number of an option that also takes sweeps (rank), or None."""
    if value is None or isinstance(value, int):
        return value
    from autotune.request.values import parse_values
    values = parse_values(value, option)
    if len(values) != 1:
        raise InputError(f"{option} {value}: expected one value here")
    return values[0]


def _scenario(args) -> Scenario:
    ivp = load_ivp(args.ivp)
    method = load_method(args.method)
    machine = load_machine(args.machine)
    n, nodes, threads = _one(args.n, "--n"), _one(args.nodes, "--nodes"), _one(args.threads, "--threads")
    n = n if n is not None else ivp.default_n
    nodes = nodes if nodes is not None else machine.nodes
    threads = threads if threads is not None else machine.cores
    check_scenario(ivp, n, nodes, threads, machine)
    return Scenario(ivp, method, machine, n, nodes, threads)


def emit(text: str) -> None:
    """A report on stdout, ending in exactly one newline."""
    print(text, end="" if text.endswith("\n") else "\n")


def comm_filter(args) -> list[str] | None:
    if not getattr(args, "comm", None):
        return None
    return [c.strip() for c in args.comm.split(",") if c.strip()]


def selection_rule(args) -> Rule:
    if getattr(args, "top", None) is not None:
        if args.top < 1:
            raise InputError(f"--top {args.top}: expected at least 1")
        return Rule("top", args.top)
    within = getattr(args, "within", None)
    if within is not None and within < 0:
        raise InputError(f"--within {within}: expected a percentage >= 0")
    return Rule("within", DEFAULT_WITHIN_PCT if within is None else within)


def store_path(args) -> Path:
    return args.store if getattr(args, "store", None) else default_store_path()


@contextmanager
def open_store(args):
    store = Store(store_path(args))
    try:
        yield store
    finally:
        store.close()


def _require_applicable(sc: Scenario, named, excluded: dict[str, str], option: str) -> None:
    for v in named:
        if v.comm in excluded:
            raise InputError(f"{option} {v.name} with --n {sc.n} --nodes {sc.nodes}: {excluded[v.comm]}")


def cmd_rank(args, progress) -> int:
    from autotune.cli import batch as batchcmd
    spec = batchcmd.sweep_spec(args)
    if batchcmd.is_sweep(spec):
        return batchcmd.cmd_sweep(args, spec, progress)
    sc = _scenario(args)
    rule = selection_rule(args)
    wanted = comm_filter(args)
    variants, excluded = applicable_variants(sc, wanted)
    if wanted and excluded:
        scheme, why = next(iter(excluded.items()))
        raise InputError(f"--comm {scheme} with --n {sc.n} --nodes {sc.nodes}: {why}")
    with open_store(args) as store:
        res = rank_scenario(sc, variants, rule, store, excluded, progress, args.jobs)
    out = {"json": report.to_json, "csv": report.to_csv, "table": report.to_table}[args.format](res)
    emit(out)
    return 0


def cmd_explain(args, progress) -> int:
    sc = _scenario(args)
    v = parse_variant(args.variant, sc.ivp.comm)
    variants, excluded = applicable_variants(sc)
    _require_applicable(sc, [v], excluded, "--variant")
    with open_store(args) as store:
        res = rank_scenario(sc, variants, selection_rule(args), store, excluded, progress, args.jobs)
    if args.format == "json":
        r = next(x for x in res.ordered if x.variant.name == v.name)
        d = report.variant_dict(r, res.ordered.index(r) + 1, v.name in res.preselected)
        d.update(ivp=sc.ivp.name, machine=sc.machine.name, n=sc.n, nodes=sc.nodes, threads=sc.threads,
                 notes=report.notes(res))
        print(json.dumps(d, indent=2))
    else:
        print(report.explain_table(res, v.name), end="")
    return 0


def cmd_generate(args, progress) -> int:
    from autotune.codegen.parts import approx_update_parts, copy_part, lc_parts, pack_part, rhs_parts
    ivp = load_ivp(args.ivp)
    method = load_method(args.method)
    out: Path = args.out
    try:
        (out / "kernels").mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError(f"--out {out}: cannot create ({e.strerror})") from None
    from autotune.model.schedule import step_counts
    counts = step_counts(method)
    shared = rhs_parts(ivp) + approx_update_parts(method) + [pack_part(method)]
    if "COPY" in counts.executions:
        shared.append(copy_part(method))
    executions = dict(counts.executions, PACK=counts.comm_phases)
    written = set()
    manifest = {"ivp": ivp.name, "method": method.name,
                "note": "M is the number of components a node sweeps in the part's loop",
                "comm_phases_per_step": counts.comm_phases, "barriers_per_step": counts.barriers,
                "variants": {}}
    for v in enumerate_variants(ivp.comm):
        parts = lc_parts(method, v.lc) + shared
        for p in parts:
            if p.name not in written:
                (out / "kernels" / f"{p.name}.c").write_text(p.code)
                written.add(p.name)
        manifest["variants"][v.name] = [{
            "part": p.name, "kernel": p.kernel, "file": f"kernels/{p.name}.c",
            "iterations_per_execution": f"{p.iterations_per_m:g} * M",
            "executions_per_step": executions[p.kernel],
        } for p in parts]
    (out / "variants.json").write_text(json.dumps(manifest, indent=2) + "\n")
    print(f"wrote {len(written)} kernel parts for {len(manifest['variants'])} variants of {ivp.name} to {out}")
    return 0


def cmd_list(args, progress) -> int:
    if args.what == "variants":
        names = [args.ivp] if args.ivp else ivp_names()
        rows = {}
        for name in names:
            ivp = load_ivp(name)
            rows[ivp.name] = [v.name for v in enumerate_variants(ivp.comm)]
        if args.format == "json":
            print(json.dumps(rows, indent=2))
        else:
            for ivp_name, vs in rows.items():
                print(f"{ivp_name}: {len(vs)} variants")
                for v in vs:
                    print(f"  {v}")
        return 0
    if args.what == "ivps":
        items = {n: load_ivp(n).description.split(". ")[0].rstrip(".") for n in ivp_names()}
    elif args.what == "machines":
        items = {}
        for n in machine_names():
            m = load_machine(n)
            items[n] = f"{m.model_name}; {m.nodes} node(s) x {m.cores} cores; network: {m.network['model']}"
    else:
        items = {}
        for n in method_names():
            m = load_method(n)
            items[n] = f"{m.family}, s = {m.stages}, order {m.order}, m = {m.iterations} iterations"
    if args.format == "json":
        print(json.dumps(items, indent=2))
    else:
        width = max(map(len, items)) if items else 0
        for k, v in items.items():
            print(f"{k:{width}}  {v}")
    return 0


def _int_list(text: str, option: str) -> tuple[int, ...]:
    try:
        values = tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise InputError(f"{option} {text!r}: expected comma-separated integers") from None
    if not values or min(values) < 1:
        raise InputError(f"{option} {text!r}: expected integers >= 1")
    return values


def progress_line(command: str):
    """Progress printer for long work: one line on stderr, prefixed with the command."""
    import sys

    def say(msg: str) -> None:
        print(f"autotune: {command}: {msg}", file=sys.stderr, flush=True)
    return say


_say = progress_line("calibrate")


def cmd_node(args) -> int:
    """calibrate --node: a machine file for this host."""
    from autotune.pipeline.calibrate import write_host_machine
    from autotune.specs.shipped import user_machine_dir
    name = Path(args.machine).stem
    if args.out:
        target = args.out
    elif args.machine.endswith((".yaml", ".yml")):
        target = Path(args.machine)
    else:
        target = user_machine_dir() / f"{args.machine}.yaml"
    if args.min_seconds <= 0:
        raise InputError(f"--min-seconds {args.min_seconds}: expected a positive number")
    res = write_host_machine(target, name, args.min_seconds, _say)
    if args.format == "json":
        print(json.dumps(res, indent=2))
    else:
        print(f"wrote machine '{name}' to {target} in {res['wall_s']:.1f} s "
              f"({res['cores']} cores, {res['clock_ghz']:.2f} GHz, template {res['template']})")
        for level, row in res["bandwidth_gbs"].items():
            print(f"  {level:4} " + "  ".join(f"{k} {v:7.1f}" for k, v in row.items()) + "  GB/s (all cores)")
    return 0


def cmd_calibrate(args, progress) -> int:
    if args.node:
        return cmd_node(args)
    from autotune.pipeline.calibrate import BENCHMARKS, Plan, calibrate
    from autotune.tools.launcher import parse_launcher
    machine = load_machine(args.machine)
    ops = tuple(o.strip() for o in args.ops.split(",") if o.strip())
    bad = [o for o in ops if o not in BENCHMARKS]
    if bad or not ops:
        raise InputError(f"--ops {args.ops!r}: expected some of {', '.join(BENCHMARKS)}")
    procs = _int_list(args.procs, "--procs")
    if min(procs) < 2:
        raise InputError(f"--procs {args.procs!r}: communication needs at least 2 processes")
    if not 8 <= args.min_bytes <= args.max_bytes:
        raise InputError(f"--min-bytes/--max-bytes: expected 8 <= {args.min_bytes} <= {args.max_bytes}")
    if args.factor <= 1:
        raise InputError(f"--factor {args.factor}: expected a number > 1")
    plan = Plan(machine, parse_launcher(args.launcher), procs, _int_list(args.threads, "--threads"), ops,
                args.min_bytes, args.max_bytes, args.factor, args.max_seconds, args.timeout)
    target = args.out or Path(machine.path)
    with open_store(args) as store:
        res = calibrate(plan, store, target, _say, args.fresh, args.plot, args.raw)
    print(json.dumps(res, indent=2) if args.format == "json" else report.calibration_table(res), end="\n")
    return 0


def cmd_tune(args, progress) -> int:
    from autotune.pipeline.tune import RunPlan, tune
    if args.plan:
        from autotune.cli.batch import cmd_tune_plan
        return cmd_tune_plan(args, progress)
    if not args.ivp:
        raise InputError("tune: give --ivp (and the scenario) or --plan")
    sc = _scenario(args)
    if args.steps < 1 or args.reps < 1 or not 0 <= args.warmup < args.steps:
        raise InputError("--steps, --reps >= 1 and 0 <= --warmup < --steps expected")
    rule = selection_rule(args)
    variants, excluded = applicable_variants(sc)
    chosen_v = [parse_variant(x.strip(), sc.ivp.comm) for x in args.variants.split(";")] if args.variants else None
    _require_applicable(sc, chosen_v or [], excluded, "--variants")
    h = args.h if args.h is not None else sc.ivp.default_step(sc.n)
    with open_store(args) as store:
        ranked = rank_scenario(sc, variants, rule, store, excluded, progress, args.jobs)
        if args.all:
            chosen = [r.variant.name for r in ranked.ordered]
        elif chosen_v:
            chosen = [v.name for v in chosen_v]
        else:
            chosen = [r.variant.name for r in ranked.ordered if r.variant.name in ranked.preselected]
        plan = RunPlan.of(args.steps, args.warmup, args.reps, h, args.flags, args.launcher, args.timeout)
        res = tune(ranked, chosen, plan, store, _say_tune)
    if args.plot:
        from autotune.report.plots import tune_plot
        tune_plot(res, args.plot)
    out = {"json": lambda r: json.dumps(r, indent=2), "csv": report.tune_csv, "table": report.tune_table}[args.format](res)
    emit(out)
    return 0


_say_tune = progress_line("tune")


def dispatch(args, progress) -> int:
    from autotune.cli import batch as batchcmd
    commands = {"tune": cmd_tune, "calibrate": cmd_calibrate, "rank": cmd_rank, "explain": cmd_explain,
                "generate": cmd_generate, "list": cmd_list, "scale": batchcmd.cmd_scale, "plan": batchcmd.cmd_plan}
    return commands[args.command](args, progress)

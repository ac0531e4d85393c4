"""What each subcommand does: argparse values -> request objects -> pipeline -> a renderer."""
from __future__ import annotations

import json
import sys
from contextlib import contextmanager
from pathlib import Path

from autotune.errors import InputError
from autotune.pipeline import entry
from autotune.report.render import plot, render
from autotune.request.commands import RankRequest, TuneRequest
from autotune.request.scenario import ScenarioRequest
from autotune.request.selection import selection
from autotune.storage.paths import check_output_path, default_store_path
from autotune.storage.store import Store


def emit(text: str) -> None:
    """A report on stdout, ending in exactly one newline."""
    print(text, end="" if text.endswith("\n") else "\n")


def progress_line(command: str):
    """Progress printer for long work: one line on stderr, prefixed with the command."""
    def say(msg: str) -> None:
        print(f"autotune: {command}: {msg}", file=sys.stderr, flush=True)
    return say


def request_of(kind, args):
    """The request of class `kind` from the options it takes (an option is named as the
    request's keyword: --min-bytes is min_bytes); the request's own `of` builds it, as it does
    for the Python API."""
    return kind.of(**{k: getattr(args, k) for k in kind.keyword_names() if hasattr(args, k)})


@contextmanager
def open_store(args):
    store = Store(args.store if getattr(args, "store", None) else default_store_path())
    try:
        yield store
    finally:
        store.close()


def cmd_rank(args, progress) -> int:
    req = request_of(RankRequest, args)
    table = {"every_row": True} if args.every_row and args.format == "table" else {}
    spec = req.scenario.sweep_spec()
    if args.every_row and spec.is_sweep and not spec.each_ivp:
        raise InputError(": not with a sweep (its table has one line per scenario; csv and json have every "
                         "variant)", field="all")
    with open_store(args) as store:
        res = entry.rank(req.scenario, req.rule, store, progress, args.jobs, req.selected_only)
    emit(render(res, args.format, **table))
    return 0


def cmd_explain(args, progress) -> int:
    req = request_of(ScenarioRequest, args)
    with open_store(args) as store:
        res = entry.explain(req, args.variant, selection(), store, progress, args.jobs)
    emit(render(res, args.format))
    return 0


def cmd_scale(args, progress) -> int:
    req = request_of(ScenarioRequest, args)
    if args.plot:
        from autotune.report.plots import check_plot_path
        check_plot_path(args.plot)
    with open_store(args) as store:
        res = entry.scale(req, args.rule, store, progress, args.jobs)
    if args.plot:
        plot(res, args.plot)
    emit(render(res, args.format))
    return 0


def cmd_tune(args, progress) -> int:
    if args.ingest:
        from autotune.pipeline.online import ingest
        if args.ivp or args.online or args.plan:
            raise InputError(f"{args.ingest}: not with --ivp, --plan or --online (the file says what it ran)", field="ingest")
        with open_store(args) as store:
            emit(render(ingest(args.ingest, store, progress_line("tune")), args.format))
        return 0
    if args.recheck and not args.online:
        raise InputError(f"{args.recheck}: only with --online", field="recheck")
    if args.plan:
        if args.sample is not None:
            raise InputError(f"{args.sample}: not with --plan, which runs the planned variants", field="sample")
        if args.baseline:
            raise InputError(": not with --plan, which runs the planned variants", field="baseline")
        if args.replay:
            raise InputError(": not with --plan (replay one scenario: tune --ivp ... --replay)", field="replay")
        return cmd_tune_plan(args, progress)
    if not args.ivp:
        raise InputError("tune: give --ivp (and the scenario) or --plan")
    if args.plot and args.online:
        raise InputError(f"{args.plot}: not with --online (its report is the trial)", field="plot")
    if args.plot:
        from autotune.report.plots import check_plot_path
        check_plot_path(args.plot)
    req = request_of(TuneRequest, args)
    with open_store(args) as store:
        res = entry.tune(req.scenario, req.rule, req.run, store, progress_line("tune"), req.named, progress,
                         args.jobs, req.sample, req.baseline)
    if args.plot:
        plot(res, args.plot)
    emit(render(res, args.format))
    return 0


def _indices(text: str | None, count: int) -> list[int] | None:
    if text is None:
        return None
    try:
        out = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        out = []
    if not out or any(not 0 <= i < count for i in out):
        raise InputError(f"{text}: expected scenario indices 0..{count - 1}, comma-separated", field="scenario")
    return out


def cmd_tune_plan(args, progress) -> int:
    from autotune.pipeline import submit as sub
    from autotune.pipeline.plan import read_plan, run_plan
    say = progress_line("tune")
    plan_path = Path(args.plan)
    plan = read_plan(plan_path)
    only = _indices(args.scenario, len(plan["scenarios"]))
    for opt in ("partition", "account", "time", "sbatch_args"):
        if getattr(args, opt) is not None and not args.submit:
            raise InputError(f"{getattr(args, opt)}: only with --submit", field=opt)
    opts = sub.SubmitOptions(args.submit, args.partition, args.account, args.time, args.sbatch_args or "",
                             args.launcher, args.online, args.recheck) if args.submit else None
    state = None if only is not None else sub.read_state(plan_path, plan)
    if args.status and state is None:
        raise InputError(f"{plan_path}: has no batch jobs to report (submit it with --submit slurm)", field="plan")
    if state and args.store and args.store.resolve() != Path(state["store"]):
        raise InputError(f"{args.store}: the jobs of {plan_path} write to {state['store']}; leave --store out "
                         f"or give that one", field="store")
    store_path = args.store or (Path(state["store"]) if state else default_store_path())
    store = Store(store_path)
    try:
        if args.status:
            res = sub.plan_status(plan_path, plan, state, store)
        elif args.submit or state is not None:      # a submitted plan: collect, submit again what was lost
            res = sub.submit_plan(plan_path, plan, store, store_path, opts, say)
            if not args.submit:
                batch = {s.index: (s.status, s.job) for s in res.scenarios}
                res = run_plan(plan, store, say, args.jobs, batch=batch)
        else:
            res = run_plan(plan, store, say, args.jobs, args.launcher, only, online=args.online, recheck=args.recheck)
    finally:
        store.close()
    emit(render(res, args.format if args.format in ("table", "json", "csv") else "table"))
    return 1 if getattr(getattr(res, "totals", None), "scenario_errors", 0) else 0


def cmd_plan(args, progress) -> int:
    from autotune.pipeline.plan import make_plan, write_plan
    check_output_path(args.out, "out", "plan")
    with open_store(args) as store:
        plan = make_plan(args.scenarios, store, progress, args.jobs)
    write_plan(plan, args.out)
    if args.format == "json":
        emit(json.dumps(dict({"out": str(args.out)}, **json.loads(render(plan, "json"))), indent=2))
    else:
        emit(render(plan, "table") + f"wrote {args.out}")
    return 0


def cmd_generate(args, progress) -> int:
    from autotune.pipeline.generate import generate
    check_output_path(args.out, "out", "folder")
    if args.online is not None:
        return _generate_online(args, progress)
    for opt in ("within", "recheck", "nodes", "threads"):      # the scenario is the online solver's
        if getattr(args, opt):
            raise InputError(f"{getattr(args, opt)}: only with --online", field=opt)
    res = generate(args.ivp, args.method, args.out, args.n, args.machine)
    print(f"wrote {res.parts} kernel parts and {res.solvers} solvers (n = {res.n:,}) for {len(res.variants)} "
          f"variants of {res.ivp} to {res.out} (variants.json: parts, executions, build commands)")
    return 0


def _new_machine(args, say) -> int:
    """calibrate --node (this host) or --from-kerncraft FILE: a new cluster machine file."""
    from autotune.pipeline.hostmachine import import_kerncraft, new_machine_target, write_host_machine
    if args.node and args.from_kerncraft:
        raise InputError(f"{args.from_kerncraft}: either --node or --from-kerncraft", field="from_kerncraft")
    if args.from_kerncraft and args.port_model:
        raise InputError(f"{args.port_model}: only with --node", field="port_model")
    if not args.min_seconds > 0:   # nan too
        raise InputError(f"{args.min_seconds}: expected a positive number", field="min_seconds")
    if args.name and args.machine and args.name != args.machine:
        raise InputError(f"{args.machine}: give the new machine's name once (--name)", field="machine")
    name, target = new_machine_target(args.name or args.machine, args.out)
    if not args.dry_run:
        check_output_path(target, "out", "machine")
    if args.from_kerncraft:
        res = import_kerncraft(args.from_kerncraft, target, name, args.nodes)
    else:
        res = write_host_machine(target, name, say, args.nodes, args.uarch, args.min_seconds, args.dry_run,
                                 args.port_model)
    emit(render(res, args.format))
    return 0


def _learn(args, say) -> int:
    """calibrate --from-runs: the node model fitted to the machine's stored runs."""
    holdout = tuple(x.strip() for x in (args.holdout or "").split(",") if x.strip())
    with open_store(args) as store:
        res = entry.learn(args.machine, store, say, args.folds, holdout, args.dry_run, args.out)
    emit(render(res, args.format))
    return 0


def cmd_calibrate(args, progress) -> int:
    say = progress_line("calibrate")
    if args.plot:
        from autotune.report.plots import check_plot_path
        check_plot_path(args.plot)
    if args.node or args.from_kerncraft:
        return _new_machine(args, say)
    for flag in ("name", "uarch"):
        if getattr(args, flag):
            raise InputError(f"{getattr(args, flag)}: only with --node or --from-kerncraft", field=flag)
    if args.port_model:
        raise InputError(f"{args.port_model}: only with --node", field="port_model")
    if not args.machine:
        raise InputError(": expected a machine to calibrate (or --node / --from-kerncraft to make one)",
                         field="machine")
    if args.from_runs:
        return _learn(args, say)
    for flag in ("folds", "holdout"):
        if getattr(args, flag) not in (None, "scenario"):
            raise InputError(f"{getattr(args, flag)}: only with --from-runs", field=flag)
    from autotune.pipeline.calibrate import calibrate
    from autotune.request.calibrate import CalibrateRequest
    req = request_of(CalibrateRequest, args)
    plan, target = req.resolve()
    with open_store(args) as store:
        res = calibrate(plan, store, target, say, req.fresh, req.raw)
    if args.plot:
        plot(res, args.plot)
        res.plot = str(args.plot)
    emit(render(res, args.format))
    return 0


COMMANDS = {"rank": cmd_rank, "explain": cmd_explain, "scale": cmd_scale, "tune": cmd_tune, "plan": cmd_plan,
            "generate": cmd_generate, "calibrate": cmd_calibrate}


def dispatch(args, progress) -> int:
    from autotune.tools.ecm_runner import check_jobs
    check_jobs(getattr(args, "jobs", None))  # --jobs mpi without MPI workers: say so before any work
    return COMMANDS[args.command](args, progress)


def _generate_online(args, progress) -> int:
    from autotune.pipeline.online import online_rule
    rule = online_rule(args.online or None, args.within)     # --online alone: the default rule
    req = request_of(ScenarioRequest, args)
    with open_store(args) as store:
        res = entry.generate_online(req, rule, args.out, store, progress_line("generate"), progress, args.jobs,
                                    args.recheck)
    emit(render(res, "table"))
    return 0

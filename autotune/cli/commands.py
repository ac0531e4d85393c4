"""What each subcommand does: argparse values -> request objects -> pipeline -> a renderer."""
from __future__ import annotations

import json
import sys
from contextlib import contextmanager

from autotune.errors import InputError
from autotune.pipeline import entry
from autotune.report.render import plot, render, render_chunks
from autotune.request.commands import RankRequest, TuneRequest
from autotune.request.scenario import ScenarioRequest
from autotune.request.selection import selection
from autotune.storage.paths import default_store_path
from autotune.storage.store import Store


def emit(text: str) -> None:
    """A report on stdout, ending in exactly one newline."""
    emit_chunks((text,))


def emit_chunks(chunks) -> None:
    """A report made in pieces (report.render.render_chunks) on stdout, each written as made,
    ending in exactly one newline."""
    ends = False
    for text in chunks:
        if text:
            sys.stdout.write(text)
            ends = text.endswith("\n")
    if not ends:
        sys.stdout.write("\n")


def request_of(kind, args):
    """The request of class `kind` from the options it takes (an option is named as the
    request's keyword: --min-bytes is min_bytes); the request's own `of` builds it, as it does
    for the Python API."""
    return kind.of(**{k: getattr(args, k) for k in kind.keyword_names() if hasattr(args, k)})


@contextmanager
def open_store(args):
    store = Store(args.store if getattr(args, "store", None) else
                  default_store_path(lambda note: print(f"autotune: {note}", file=sys.stderr)))
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
    emit_chunks(render_chunks(res, args.format, **table))
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
        from autotune.request.mixed import is_mix_sweep
        if is_mix_sweep(req.nodes):
            raise InputError(f"{args.plot}: no figure of nodes of several kinds (its table, CSV and JSON have "
                             "every allocation)", field="plot")
        check_plot_path(args.plot)
    with open_store(args) as store:
        res = entry.scale(req, args.rule, store, progress, args.jobs)
    if args.plot:
        plot(res, args.plot)
    emit(render(res, args.format))
    return 0


def cmd_tune(args, progress) -> int:
    from autotune.request.plan import tune_form
    form = tune_form(args.ivp, args.plan, args.ingest, args.online, args.recheck, args.sample, args.baseline,
                     args.replay, args.plot, args.format)
    if form == "ingest":
        with open_store(args) as store:
            emit(render(entry.ingest(args.ingest, store, progress), args.format))
        return 0
    if form == "plan":
        return cmd_tune_plan(args, progress)
    if args.plot:
        from autotune.report.plots import check_plot_path
        check_plot_path(args.plot)
    req = request_of(TuneRequest, args)
    with open_store(args) as store:
        res = entry.tune(req.scenario, req.rule, req.run, store, progress, req.named, args.jobs, req.sample,
                         req.baseline)
    if args.plot:
        plot(res, args.plot)
    emit(render(res, args.format))
    return 0 if res.measured_any else 1       # every variant failed: the report says why, the status too


def cmd_tune_plan(args, progress) -> int:
    from autotune.request.plan import TunePlanRequest
    res = entry.tune_plan(request_of(TunePlanRequest, args), args.store, progress, args.jobs)
    emit(render(res, args.format if args.format in ("table", "json", "csv") else "table"))
    return 1 if getattr(getattr(res, "totals", None), "scenario_errors", 0) else 0


def cmd_plan(args, progress) -> int:
    from autotune.request.plan import PlanRequest
    req = request_of(PlanRequest, args)
    with open_store(args) as store:
        plan = entry.plan(req, store, progress, args.jobs)
    if args.format == "json":
        doc = json.loads(render(plan, "json"))
        emit(json.dumps(dict({"meta": doc.pop("meta"), "out": str(req.out)}, **doc), indent=2))
    elif args.format == "csv":
        emit(render(plan, "csv"))
    else:
        emit(render(plan, "table") + f"wrote {req.out}")
    return 0


def cmd_generate(args, progress) -> int:
    from autotune.request.generate import GenerateRequest
    req = request_of(GenerateRequest, args)
    if req.online is not None:
        with open_store(args) as store:
            res = entry.generate_online(req, store, progress, args.jobs)
        emit(render(res, args.format))
        return 0
    emit(render(entry.generate(req), args.format))
    return 0


def cmd_calibrate(args, progress) -> int:
    from autotune.request.machinefile import LearnRequest, check_comm_only, new_machine_request
    if args.plot:
        from autotune.report.plots import check_plot_path
        check_plot_path(args.plot)
    if args.node or args.from_kerncraft:
        req = new_machine_request(args.node, args.from_kerncraft, args.name, args.machine, nodes=args.nodes,
                                  uarch=args.uarch, port_model=args.port_model, min_seconds=args.min_seconds,
                                  dry_run=args.dry_run, out=args.out)
        emit(render(entry.new_machine(req, progress), args.format))
        return 0
    check_comm_only(args.name, args.uarch, args.port_model, args.folds, args.holdout, args.from_runs, args.machine)
    if args.from_runs:
        with open_store(args) as store:
            res = entry.learn(request_of(LearnRequest, args), store, progress)
        emit(render(res, args.format))
        return 0
    from autotune.request.calibrate import CalibrateRequest
    with open_store(args) as store:
        res = entry.calibrate(request_of(CalibrateRequest, args), store, progress)
    if args.plot:
        plot(res, args.plot)
        res.plot = str(args.plot)
    emit(render(res, args.format))
    return 0


def cmd_schema(args, progress) -> int:
    emit(entry.schema(args.name).rstrip("\n"))
    return 0


COMMANDS = {"rank": cmd_rank, "explain": cmd_explain, "scale": cmd_scale, "tune": cmd_tune, "plan": cmd_plan,
            "generate": cmd_generate, "calibrate": cmd_calibrate, "schema": cmd_schema}


def dispatch(args, progress) -> int:
    entry.check_jobs(getattr(args, "jobs", None))  # --jobs mpi without MPI workers: say so before any work
    return COMMANDS[args.command](args, progress)

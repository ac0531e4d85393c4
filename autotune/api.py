"""The Python API: the commands of the command line as functions (docs/design.md#the-python-api).

    import autotune
    r = autotune.rank("heat2d", nodes=8)
    r.best.name, r.best.predicted_s
    r.to_frame()

Each function takes what the command line builds: its first argument is an IVP name (a machine
for calibrate) or a request object (ScenarioRequest, RankRequest, TuneRequest, CalibrateRequest;
autotune.request), and keywords for the common fields, which replace the request's.  A rarer
field goes through the request, built with the same keywords as the command line's options:

    req = autotune.TuneRequest.of("heat2d", nodes=8, top=3, steps=20, reps="auto", budget="90s")
    autotune.tune(req)                    # the same as `autotune tune --ivp heat2d --nodes 8 ...`
    autotune.tune(req, nodes=16)          # the request with another node count

A keyword left None is not given (the request's value, or the default, stands).  Each function
returns a typed result (autotune.results, exported from autotune) with to_dict() (what the
CLI's JSON prints) and to_frame() (a pandas DataFrame), prints nothing, and reports progress
through one optional object, an autotune.progress.Progress (step(done, total, name) for the
kerncraft analyses and measurements, say(message) for runs), given as `progress` or `say`, or
through the two callables it stands for: progress(done, total, name) and say(message).  Bad input raises autotune.InputError; its `field` names the keyword
(threads, not --threads).  jobs: parallel kerncraft analyses, a number of local processes
(default: the available cores) or 'mpi' for the other MPI ranks when started as
`mpiexec -n P python -m mpi4py.futures script.py`.  Step-size control's tolerances, rtol and
atol (docs/method.md, "Step-size control"), go through the request, as on the command line:
autotune.rank(autotune.RankRequest.of("heat2d", nodes=8, rtol=1e-6)); the scenario's solvers then
choose their steps, and its times are per accepted step.
"""
from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Callable

from autotune.errors import InputError
from autotune.pipeline import entry
from autotune.progress import Progress, progress_of
from autotune.request.calibrate import CalibrateRequest
from autotune.request.commands import RankRequest, TuneRequest
from autotune.request.generate import GenerateRequest
from autotune.request.machinefile import LearnRequest, NewMachineRequest
from autotune.request.plan import PlanRequest
from autotune.request.run import RunOptions
from autotune.request.scenario import ScenarioRequest
from autotune.request.selection import online_rule, selection
from autotune.results.mixed import MixedRankResult
from autotune.results.rank import ExplainResult, RankResult
from autotune.results.rankset import RankSet
from autotune.results.scale import ScaleResult
from autotune.results.sweep import SweepResult
from autotune.results.online import OnlineResult
from autotune.results.tune import TuneResult
from autotune.storage.paths import default_store_path
from autotune.storage.store import Store

# the functions and the request types they take (autotune exports these and the result types)
__all__ = ["rank", "sweep", "scale", "explain", "tune", "generate", "generate_online", "plan", "ingest", "calibrate", "identify_cpu", "schema", "calibrate_node",
           "import_kerncraft", "learn", "ScenarioRequest", "RankRequest", "TuneRequest", "CalibrateRequest",
           "RunOptions", "Progress"]

ProgressArg = Progress | Callable[[int, int, str], None] | None    # autotune.progress.progress_of
Request = str | list | tuple | ScenarioRequest


def _note(line: str) -> None:
    """What the library tells once, beside the results (the store moved): a warning."""
    import warnings
    warnings.warn(line, stacklevel=4)


@contextmanager
def _store(path):
    if path is not None and not str(path).strip():
        raise InputError(f": expected a path, got {str(path)!r}", field="store")
    store = Store(Path(path) if path is not None else default_store_path(_note))
    try:
        yield store
    finally:
        store.close()


def rank(request: Request | RankRequest, /, *, nodes=None, threads=None, n=None, machine: str | None = None,
         method: str | None = None, variant_filter: str | None = None, top: int | None = None,
         within: float | None = None, store=None, jobs: int | str | None = None,
         progress: ProgressArg = None) -> RankResult | RankSet | MixedRankResult:
    """Every applicable variant of one scenario (those variant_filter keeps: "key=a|b,...",
    "paper"), best first, with the pre-selection (top K, or within PCT % of the best; default
    within 10 %).  request: an IVP name, a ScenarioRequest (comm, model "ecm": without the factors
    the machine learned from its runs) or a RankRequest.  IVP "all": a RankSet, one such ranking
    per shipped IVP (.by_ivp()).  nodes of several kinds ("big:4,small:2" or {"big": 4, "small": 2};
    threads likewise per kind): a MixedRankResult, each variant with its split (docs/method.md
    "Mixed allocations")."""
    req = RankRequest.of(request, nodes=nodes, threads=threads, n=n, machine=machine, method=method,
                         variant_filter=variant_filter, top=top, within=within)
    spec = req.scenario.sweep_spec()
    if spec.is_sweep and not spec.each_ivp:
        raise InputError(": rank takes one scenario, or 'all' IVPs at one value of the others; use autotune.sweep "
                         "for lists and ranges", field="ivp")
    entry.check_jobs(jobs)
    with _store(store) as st:
        return entry.rank(req.scenario, req.rule, st, progress_of(progress), jobs, req.selected_only)


def sweep(request: Request | RankRequest, /, *, n=None, nodes=None, threads=None, machine: str | None = None,
          method: str | None = None, variant_filter: str | None = None, top: int | None = None,
          selected_only: bool | None = None, store=None, jobs: int | str | None = None,
          progress: ProgressArg = None) -> SweepResult:
    """Many scenarios at once (IVPs: a name, a list or 'all'; n, nodes, threads: a value, a list or a
    range such as "1e6:1e8:20log" or "1:64:x2"); selected_only: the pre-selected variants' rows
    only.  request: as for rank (a RankRequest for within or all).  .to_frame() is the long table."""
    req = RankRequest.of(request, n=n, nodes=nodes, threads=threads, machine=machine, method=method,
                         variant_filter=variant_filter, top=top, selected_only=selected_only)
    entry.check_jobs(jobs)
    with _store(store) as st:
        return entry.sweep(req, st, progress_of(progress), jobs)


def scale(request: Request, /, *, n=None, nodes=None, threads=None, machine: str | None = None,
          method: str | None = None, variant_filter: str | None = None, rule: str = "efficiency:0.5",
          store=None, jobs: int | str | None = None, progress: ProgressArg = None) -> ScaleResult:
    """Predicted scalability over node counts (default 1:64): speedup, efficiency, bound,
    crossovers, advice by `rule`.  request: an IVP name or a ScenarioRequest."""
    req = ScenarioRequest.of(request, n=n, nodes=nodes, threads=threads, machine=machine, method=method,
                             variant_filter=variant_filter)
    entry.check_jobs(jobs)
    with _store(store) as st:
        return entry.scale(req, rule, st, progress_of(progress), jobs)


def explain(request: Request, /, *, variant: str, nodes=None, threads=None, n=None, machine: str | None = None,
            method: str | None = None, model: str | None = None, store=None, jobs: int | str | None = None,
            progress: ProgressArg = None) -> ExplainResult:
    """One variant's prediction, kernel part by kernel part (with learned factors: each part's
    time with and without them; model "ecm": without them).  request: an IVP name or a
    ScenarioRequest."""
    req = ScenarioRequest.of(request, nodes=nodes, threads=threads, n=n, machine=machine, method=method,
                             model=model)
    entry.check_jobs(jobs)
    with _store(store) as st:
        return entry.explain(req, variant, selection(), st, progress_of(progress), jobs)


def tune(request: Request | TuneRequest, /, *, nodes=None, threads=None, n=None, machine: str | None = None,
         top: int | None = None, variants: list[str] | None = None, reps: int | str | None = None,
         store=None, jobs: int | str | None = None, progress: ProgressArg = None,
         say: Callable[[str], None] | None = None) -> TuneResult | OnlineResult:
    """Build and run variants for real and compare with the predictions: the top K of the
    pre-selection (default: within 10 % of the best), or `variants` by name; reps: runs per
    variant, or "auto" to race them.  request: an IVP name, a ScenarioRequest or a TuneRequest,
    which holds the rest: all (every variant), sample and seed (also run that many variants drawn
    at random from the others: .summary.check says whether the pre-selection held), baseline (the
    paper's forms too), and how to run (steps, warmup, h, flags, launcher, timeout, budget,
    replay: report the runs the store holds instead of running; online: one solver carries the
    chosen variants and picks while it runs, an OnlineResult; recheck: its trial again every so
    many steps)."""
    req = TuneRequest.of(request, nodes=nodes, threads=threads, n=n, machine=machine, top=top, variants=variants,
                         reps=reps)
    entry.check_jobs(jobs)
    with _store(store) as st:
        return entry.tune(req.scenario, req.rule, req.run, st, progress_of(progress, say), req.named, jobs,
                          req.sample, req.baseline)


def generate(request: Request, /, *, n=None, machine: str | None = None, method: str | None = None,
             out="variants-out", likwid: bool = False):
    """generate: every variant's kernel parts and solvers for the IVP at size n (the machine's
    caches set the fused sweeps' tiles), written to `out` with variants.json (parts, executions,
    build commands); likwid: each sweep a LIKWID marker region.  Returns a GenerateResult."""
    req = GenerateRequest(ScenarioRequest.of(request, n=n, machine=machine, method=method), out, likwid=likwid)
    return entry.generate(req)


def generate_online(request: Request, /, *, top: int | None = None, within: float | None = None, nodes=None,
                    threads=None, n=None, machine: str | None = None, out="online-out", recheck: int = 0,
                    store=None, jobs: int | str | None = None, say: Callable[[str], None] | None = None):
    """generate --online: one solver (out/online.c, its build commands in out/online.json) that
    carries the top K pre-selected variants (at most 8; default: those within 10 % of the best)
    and picks the fastest while it runs (docs/online.md); recheck: its default re-check, a trial
    again every so many steps.  Returns an OnlineSourceResult."""
    req = GenerateRequest(ScenarioRequest.of(request, nodes=nodes, threads=threads, n=n, machine=machine), out,
                          online_rule(top, within, "top"), recheck)
    entry.check_jobs(jobs)
    with _store(store) as st:
        return entry.generate_online(req, st, progress_of(None, say), jobs)


def plan(scenarios, /, *, out="plan.json", store=None, jobs: int | str | None = None,
         progress: ProgressArg = None):
    """plan: the scenarios file (YAML: ivp, n, nodes, threads, machine, top/within, run options)
    pre-selected into a plan for tune --plan, written to `out`.  Returns a PlanResult."""
    req = PlanRequest(scenarios, out)
    entry.check_jobs(jobs)
    with _store(store) as st:
        return entry.plan(req, st, progress_of(progress), jobs)


def ingest(path, *, store=None, say: Callable[[str], None] | None = None):
    """tune --ingest: the JSON an online solver wrote (AUTOTUNE_ONLINE_JSON) into the store, each
    candidate's timed trial steps as a run of it, marked online.  Returns an OnlineResult."""
    with _store(store) as st:
        return entry.ingest(Path(path), st, progress_of(None, say))


def learn(machine: str, *, store=None, folds: str = "scenario", holdout=(), dry_run: bool = False, out=None,
          say: Callable[[str], None] | None = None):
    """calibrate --from-runs: fit the node model's factors to the runs of `machine` in the store,
    cross-validate (folds: scenario, size or ivp; holdout: IVPs no fit sees) and, unless dry_run,
    write them into its machine file (or `out`).  Returns a LearnResult (.to_frame(): one row
    per fold)."""
    req = LearnRequest.of(machine, folds=folds, holdout=holdout, dry_run=dry_run, out=out)
    with _store(store) as st:
        return entry.learn(req, st, progress_of(None, say))


def calibrate(request: str | Path | CalibrateRequest, /, *, procs=None, threads=None, ops=None,
              launcher: str | None = None, out=None, fresh: bool | None = None, raw=None, store=None,
              say: Callable[[str], None] | None = None):
    """Run the MPI micro-benchmarks, fit the communication model, write it into the machine file
    (or `out`; raw: every measurement as JSON Lines too).  request: a machine name or path, or a
    CalibrateRequest (message sizes: min_bytes, max_bytes, factor, max_seconds; timeout)."""
    req = CalibrateRequest.of(request, procs=procs, threads=threads, ops=ops, launcher=launcher, out=out,
                              fresh=fresh, raw=raw)
    req.resolve()       # the outputs refused before the store is opened
    with _store(store) as st:
        return entry.calibrate(req, st, progress_of(None, say))


def identify_cpu(cpuinfo: str | None = None, uarch: str | None = None, port_model=None):
    """The microarchitecture of the CPU cpuinfo describes (default: this host's /proc/cpuinfo):
    a record whose `uarch` is its name ("zen3", OSACA's in lower case where OSACA models it).
    Where the installed OSACA has no model of it, or the CPU is not in the table, the port model
    of the closest record it models is borrowed (`borrowed_from` says whose and why); InputError
    where no record of the CPU's vendor is modelled.  uarch: an explicit choice (assumed);
    port_model: an OSACA architecture file (path) to use instead of the installed one."""
    return entry.identify_cpu(cpuinfo, uarch, port_model)


def schema(name: str) -> dict:
    """The JSON Schema (draft 2020-12) of a kind of data file: "machine", "ivp", "method" or
    "plan" (a scenarios file), as `autotune schema NAME` prints it and the package ships it."""
    import json
    return json.loads(entry.schema(name))


def calibrate_node(name: str, *, nodes: int = 1, uarch: str | None = None, dry_run: bool = False,
                   min_seconds: float = 0.1, out=None, say: Callable[[str], None] | None = None,
                   port_model=None):
    """A cluster machine file of this host (calibrate --node): the CPU identified, caches from the
    OS, bandwidths measured; written to the user's machine folder (or out).  dry_run: identify only.
    port_model: an OSACA architecture file (path) for the in-core analyses (recorded by digest)."""
    req = NewMachineRequest.of(name, nodes=nodes, uarch=uarch, min_seconds=min_seconds, dry_run=dry_run, out=out,
                               port_model=port_model)
    return entry.new_machine(req, progress_of(None, say))


def import_kerncraft(path, name: str, *, nodes: int = 1, out=None):
    """A cluster machine file of a kerncraft machine file (calibrate --from-kerncraft)."""
    req = NewMachineRequest.of(name, nodes=nodes, from_kerncraft=Path(path), out=out)
    return entry.new_machine(req)

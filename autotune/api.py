"""The Python API: the commands of the command line as functions.

    import autotune
    r = autotune.rank("heat2d", nodes=8)
    r.best.name, r.best.predicted_s
    r.to_frame()

Each function builds the same request objects as the command line (defaults declared once in
autotune.request), returns a typed result with to_dict() (what the CLI's JSON prints) and
to_frame() (a pandas DataFrame), prints nothing, and reports progress through an optional
callback: progress(done, total, name) for kerncraft analyses, and say(message) for runs.
Bad input raises autotune.InputError; its `field` names the keyword (threads, not --threads).
jobs: parallel kerncraft analyses, a number of local processes (default: the available cores)
or 'mpi' for the other MPI ranks when started as `mpiexec -n P python -m mpi4py.futures script.py`.
"""
from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Callable

from autotune.errors import InputError
from autotune.pipeline import entry
from autotune.request.run import RunOptions
from autotune.request.scenario import DEFAULT_METHOD, ScenarioRequest
from autotune.request.selection import sample_of, selection
from autotune.results.rank import ExplainResult, RankResult
from autotune.results.rankset import RankSet
from autotune.results.scale import ScaleResult
from autotune.results.sweep import SweepResult
from autotune.results.tune import TuneResult
from autotune.storage.paths import check_output_path, default_store_path
from autotune.storage.store import Store
from autotune.tools.ecm_runner import check_jobs

Progress = Callable[[int, int, str], None] | None


@contextmanager
def _store(path):
    store = Store(Path(path) if path else default_store_path())
    try:
        yield store
    finally:
        store.close()


def _quiet(_msg: str) -> None:
    pass


def rank(ivp: str, *, nodes=None, threads=None, n=None, machine: str | None = None, method: str = DEFAULT_METHOD,
         comm=None, variant_filter: str | None = None, top: int | None = None, within: float | None = None,
         store=None, jobs: int | str | None = None,
         progress: Progress = None, model: str | None = None) -> RankResult | RankSet:
    """Every applicable variant of one scenario (those variant_filter keeps: "key=a|b,...",
    "paper"), best first, with the pre-selection.  model "ecm": without the factors the machine
    learned from its runs (the default uses them where it has them; .model says which).
    ivp "all": a RankSet, one such ranking per shipped IVP (.by_ivp())."""
    req = ScenarioRequest(ivp, n, nodes, threads, machine, method, comm, variant_filter, model)
    spec = req.sweep_spec()
    if spec.is_sweep and not spec.each_ivp:
        raise InputError(": rank takes one scenario, or 'all' IVPs at one value of the others; use autotune.sweep "
                         "for lists and ranges", field="ivp")
    check_jobs(jobs)
    with _store(store) as st:
        return entry.rank(req, selection(top, within), st, progress, jobs)


def sweep(ivps, *, n=None, nodes=None, threads=None, machine: str | None = None, method: str = DEFAULT_METHOD,
          comm=None, variant_filter: str | None = None, top: int | None = None, within: float | None = None,
          store=None, jobs: int | str | None = None,
          progress: Progress = None, selected_only: bool = False, model: str | None = None) -> SweepResult:
    """Many scenarios at once (ivps: a name, a list or 'all'; n, nodes, threads: a value, a list or a
    range such as "1e6:1e8:20log" or "1:64:x2"); .to_frame() is the long table."""
    req = ScenarioRequest(ivps, n, nodes, threads, machine, method, comm, variant_filter, model)
    spec = req.sweep_spec()
    from autotune.pipeline.sweep import run_sweep
    check_jobs(jobs)
    with _store(store) as st:
        return run_sweep(spec, selection(top, within), st, progress, jobs, selected_only)


def scale(ivp: str, *, n=None, nodes="1:64", threads=None, machine: str | None = None,
          method: str = DEFAULT_METHOD, comm=None, variant_filter: str | None = None,
          rule: str = "efficiency:0.5", store=None,
          jobs: int | str | None = None, progress: Progress = None, model: str | None = None) -> ScaleResult:
    """Predicted scalability over node counts: speedup, efficiency, bound, crossovers, advice."""
    req = ScenarioRequest(ivp, n, nodes, threads, machine, method, comm, variant_filter, model)
    check_jobs(jobs)
    with _store(store) as st:
        return entry.scale(req, rule, st, progress, jobs)


def explain(ivp: str, *, variant: str, nodes=None, threads=None, n=None, machine: str | None = None,
            method: str = DEFAULT_METHOD, store=None, jobs: int | str | None = None,
            progress: Progress = None, model: str | None = None) -> ExplainResult:
    """One variant's prediction, kernel part by kernel part (with learned factors: each part's
    time with and without them)."""
    req = ScenarioRequest(ivp, n, nodes, threads, machine, method, model=model)
    check_jobs(jobs)
    with _store(store) as st:
        return entry.explain(req, variant, selection(), st, progress, jobs)


def tune(ivp: str, *, nodes=None, threads=None, n=None, machine: str | None = None, method: str = DEFAULT_METHOD,
         select: str = "preselected", variants: list[str] | None = None, variant_filter: str | None = None,
         top: int | None = None,
         within: float | None = None, steps: int = 10, warmup: int = 2, reps: int | str = 3, h: float | None = None,
         flags: str | None = None, launcher: str | None = None, timeout: float = 600.0,
         sample: int | None = None, seed: int = 0, store=None, jobs: int | str | None = None,
         progress: Progress = None, say: Callable[[str], None] | None = None,
         model: str | None = None, replay: bool = False, baseline: bool = False,
         budget: str | None = None) -> TuneResult:
    """Build and run variants for real and compare with the predictions.  select: 'preselected'
    (top/within, default within 10 %) or 'all'; variants: names to run instead.  sample: also run
    that many variants drawn at random (random.Random(seed)) from the others with a prediction;
    .summary.check then says whether the pre-selection held against them.  replay: run nothing,
    report the repetitions the store holds of each variant (InputError for one it does not hold).
    baseline: also run the paper's forms not run already (rows marked baseline).  reps "auto":
    race the repetitions (a variant runs on only while it could still be the best), within
    budget ("N" runs or "Ns" seconds)."""
    if select not in ("preselected", "all"):
        raise InputError(f"{select!r}: expected 'preselected' or 'all'", field="select")
    req = ScenarioRequest(ivp, n, nodes, threads, machine, method, None, variant_filter, model)
    rule = selection(top, within, select == "all")
    check = sample_of(sample, seed, rule, bool(variants))
    run = RunOptions(steps, warmup, reps, h, flags, launcher, timeout, replay, budget)
    check_jobs(jobs)
    with _store(store) as st:
        return entry.tune(req, rule, run, st, say or _quiet, variants, progress, jobs, check, baseline)


def learn(machine: str, *, store=None, folds: str = "scenario", holdout=(), dry_run: bool = False, out=None,
          say: Callable[[str], None] | None = None):
    """calibrate --from-runs: fit the node model's factors to the runs of `machine` in the store,
    cross-validate (folds: scenario, size or ivp; holdout: IVPs no fit sees) and, unless dry_run,
    write them into its machine file (or `out`).  Returns a LearnResult (.to_frame(): one row
    per fold)."""
    with _store(store) as st:
        return entry.learn(machine, st, say or _quiet, folds, tuple([holdout] if isinstance(holdout, str) else holdout),
                           dry_run, out)


def calibrate(machine: str, *, procs="2", threads="1,2", ops=None, launcher: str | None = None,
              min_bytes: int = 8, max_bytes: int = 64 * 2**20, factor: float = 2.0, max_seconds: float = 0.5,
              timeout: float = 900.0, out=None, fresh: bool = False, store=None,
              say: Callable[[str], None] | None = None):
    """Run the MPI micro-benchmarks, fit the communication model, write it into the machine file."""
    from autotune.pipeline.calibrate import calibrate as run_calibrate
    from autotune.request.calibrate import calibration_plan
    from autotune.specs.machine import load_machine
    m = load_machine(machine)
    target = Path(out) if out else Path(m.path)
    check_output_path(target, "out", "machine")
    plan = calibration_plan(m, procs, threads, ops, launcher, min_bytes, max_bytes, factor, max_seconds, timeout)
    with _store(store) as st:
        return run_calibrate(plan, st, target, say or _quiet, fresh)


def identify_cpu(cpuinfo: str | None = None, uarch: str | None = None, port_model=None):
    """The microarchitecture of the CPU cpuinfo describes (default: this host's /proc/cpuinfo):
    a record whose `uarch` is its name ("zen3", OSACA's in lower case where OSACA models it).
    Where the installed OSACA has no model of it, or the CPU is not in the table, the port model
    of the closest record it models is borrowed (`borrowed_from` says whose and why); InputError
    where no record of the CPU's vendor is modelled.  uarch: an explicit choice (assumed);
    port_model: an OSACA architecture file (path) to use instead of the installed one."""
    from autotune.tools.cpuprobe import identify_cpu as identify
    return identify(cpuinfo, uarch, port_model)


def calibrate_node(name: str, *, nodes: int = 1, uarch: str | None = None, dry_run: bool = False,
                   min_seconds: float = 0.1, out=None, say: Callable[[str], None] | None = None,
                   port_model=None):
    """A cluster machine file of this host (calibrate --node): the CPU identified, caches from the
    OS, bandwidths measured; written to the user's machine folder (or out).  dry_run: identify only.
    port_model: an OSACA architecture file (path) for the in-core analyses (recorded by digest)."""
    from autotune.pipeline.hostmachine import new_machine_target, write_host_machine
    name, target = new_machine_target(name, out)
    if not dry_run:
        check_output_path(target, "out", "machine")
    return write_host_machine(target, name, say or _quiet, nodes, uarch, min_seconds, dry_run, port_model)


def import_kerncraft(path, name: str, *, nodes: int = 1, out=None):
    """A cluster machine file of a kerncraft machine file (calibrate --from-kerncraft)."""
    from autotune.pipeline.hostmachine import import_kerncraft as run_import
    from autotune.pipeline.hostmachine import new_machine_target
    name, target = new_machine_target(name, out)
    check_output_path(target, "out", "machine")
    return run_import(Path(path), target, name, nodes)

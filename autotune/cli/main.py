"""The `autotune` command line.  main(argv) is callable in-process (tests do)."""
from __future__ import annotations

import argparse
import gc
import math
import sys
from pathlib import Path

from autotune.errors import InputError, ToolError
from autotune.request.run import RunOptions
from autotune.request.scenario import DEFAULT_METHOD
from autotune.specs.machine import MODELS
from autotune.request.selection import DEFAULT_WITHIN_PCT


class _Parser(argparse.ArgumentParser):
    """argparse with the one-line errors of the rest of the command: `autotune: error: ...`,
    exit status 2, no usage block (the subcommands' parsers are of this class too)."""

    def error(self, message: str):
        self.exit(2, f"autotune: error: {' '.join(message.split())}\n")


def _int_arg(text: str) -> int:
    """An integer option (1e6 is one); the range it must lie in is the request's to check."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if not math.isfinite(value) or value != int(value):
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}")
    return int(value)


def _jobs_arg(text: str) -> int | str:
    """--jobs: a number of local processes, or 'mpi' for the ranks of `python -m mpi4py.futures`."""
    if text.strip().lower() == "mpi":
        return "mpi"
    try:
        return _int_arg(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"expected a number of processes or 'mpi', got {text!r}") from None


SWEEP_HELP = " (a list or range sweeps: 8,16 | 1:64 | 1:64:x2 | 1e6:1e8:20log)"


def _scenario_args(p: argparse.ArgumentParser, sweep: bool = False, ivp_required: bool = True) -> None:
    num = str if sweep else _int_arg
    more = SWEEP_HELP if sweep else ""
    p.add_argument("--ivp", required=ivp_required, help="shipped IVP name (autotune list ivps) or a YAML path"
                   + (" (comma-separated, or 'all')" if sweep else ""))
    p.add_argument("--nodes", type=num, help="cluster nodes, one MPI rank each (default: the machine's)" + more)
    p.add_argument("--threads", type=num, help="OpenMP threads per node (default: all cores)" + more)
    p.add_argument("--n", type=num, help="system size (default: the IVP's default)" + more)
    p.add_argument("--machine", help="shipped machine name or YAML path (default: reference cluster)")
    p.add_argument("--method", default=DEFAULT_METHOD, help=f"ODE method (default: {DEFAULT_METHOD})")
    p.add_argument("--store", type=Path, help="SQLite store (default: $AUTOTUNE_STORE or the user cache dir)")
    p.add_argument("--model", choices=MODELS, help="'ecm': predict without the factors the machine learned from "
                   "its runs (calibrate --from-runs); default: with them, where it has them")
    p.add_argument("--jobs", type=_jobs_arg, help="parallel kerncraft analyses (default: available cores), or "
                   "'mpi' for the other ranks of `mpiexec -n P python -m mpi4py.futures -m autotune ...`")


def build_parser() -> argparse.ArgumentParser:
    from autotune.report.render import formats
    from autotune.results.calibrate import CalibrateResult
    from autotune.results.plan import PlanResult
    from autotune.results.rank import ExplainResult, RankResult
    from autotune.results.scale import ScaleResult
    from autotune.results.tune import TuneResult
    ap = _Parser(prog="autotune", description=__doc__)
    sub = ap.add_subparsers(dest="command", required=True)

    r = sub.add_parser("rank", help="rank every applicable variant by predicted seconds per step "
                                    "(one scenario, or a sweep in long format)")
    _scenario_args(r, sweep=True)
    r.add_argument("--comm", help="comma-separated comm schemes to consider (default: all the IVP allows)")
    r.add_argument("--variant-filter", help="keep the variants that match: key=value[|value...],... or "
                    "'paper' (e.g. lc=jl-onepass|lj-onepass,comm=neighbour)")
    sel = r.add_mutually_exclusive_group()
    sel.add_argument("--top", type=_int_arg, help="pre-select the K best variants")
    sel.add_argument("--within", type=float, help=f"pre-select within PCT %% of the best (default {DEFAULT_WITHIN_PCT:g})")
    r.add_argument("--selected-only", action="store_true",
                   help="in a sweep, write the rows of the pre-selected variants only (batch pre-selection)")
    r.add_argument("--all", dest="every_row", action="store_true",
                   help="the table lists every variant (default: the pre-selected ones, then the next up to "
                        "20 rows, and the best of the paper's forms; csv and json always have every one)")
    r.add_argument("--format", choices=formats(RankResult), default="table")

    e = sub.add_parser("explain", help="per-kernel breakdown of one variant's prediction")
    _scenario_args(e)
    e.add_argument("--variant", required=True, help="e.g. lc=jil,comm=neighbour")
    e.add_argument("--format", choices=formats(ExplainResult), default="table")

    g = sub.add_parser("generate", help="write every variant's kernel parts (the code kerncraft analyses)")
    g.add_argument("--ivp", required=True)
    g.add_argument("--method", default=DEFAULT_METHOD)
    g.add_argument("--out", type=Path, default=Path("variants-out"))
    g.add_argument("--n", type=_int_arg, help="system size the solvers are made for (default: the IVP's; "
                                               "a growing halo is a literal in the solver)")

    c = sub.add_parser("calibrate", help="run the MPI micro-benchmarks, fit the communication model, "
                                         "write it into the machine file")
    c.add_argument("--machine", help="machine name or YAML path to calibrate (with --node: the name or path of "
                                     "the machine file to make, as --name)")
    c.add_argument("--node", action="store_true", help="make a cluster machine file of this host: CPU identified "
                                                       "(see --uarch), cache geometry from the OS, bandwidths measured")
    c.add_argument("--from-kerncraft", type=Path, metavar="FILE",
                   help="make a cluster machine file of a kerncraft machine file (--name, --nodes)")
    c.add_argument("--name", help="with --node or --from-kerncraft: the new machine's name (written to the "
                                  "user's machine folder; --out for another path)")
    c.add_argument("--nodes", type=_int_arg, default=1, help="with --node or --from-kerncraft: the cluster's "
                                                             "node count (default 1)")
    c.add_argument("--uarch", help="with --node: the microarchitecture (OSACA's name, e.g. zen4) where the CPU "
                                   "is not identified; recorded as assumed")
    c.add_argument("--dry-run", action="store_true", help="with --node: print what was identified and the file "
                                                          "that would be written; measure and write nothing; with "
                                                          "--from-runs: fit and report, write nothing")
    c.add_argument("--from-runs", action="store_true", help="fit the node model's factors (ECM transfer terms, "
                   "in-core terms per kernel class) to the runs of --machine in the store, cross-validate, and write "
                   "them into the machine file (cluster.learned)")
    c.add_argument("--folds", choices=("scenario", "size", "ivp"), default="scenario",
                   help="with --from-runs: what each cross-validation fold leaves out (default: one scenario)")
    c.add_argument("--holdout", help="with --from-runs: comma-separated IVPs whose runs no fit sees; they are "
                   "predicted by the fit of all the others")
    c.add_argument("--min-seconds", type=float, default=0.1, help="with --node: seconds per bandwidth run")
    c.add_argument("--procs", default="2", help="process counts, e.g. 2,4,8 (default 2)")
    c.add_argument("--threads", default="1,2", help="thread counts for the barrier benchmark (default 1,2)")
    c.add_argument("--launcher", help="'mpiexec' (default), 'srun', or a template such as "
                                      "\"srun -N {nodes} -n {procs}\"")
    c.add_argument("--ops", default="allgather,neighbour,pairwise", help="operations to measure")
    c.add_argument("--min-bytes", type=_int_arg, default=8)
    c.add_argument("--max-bytes", type=_int_arg, default=64 * 2**20)
    c.add_argument("--factor", type=float, default=2.0, help="message size step factor (default 2)")
    c.add_argument("--max-seconds", type=float, default=0.5, help="time budget per message size")
    c.add_argument("--timeout", type=float, default=900.0, help="seconds per benchmark run")
    c.add_argument("--out", type=Path, help="machine file to write (default: update the one given)")
    c.add_argument("--fresh", action="store_true", help="measure again even what the store has")
    c.add_argument("--raw", type=Path, help="also write every measurement as Extra-P JSON Lines")
    c.add_argument("--plot", type=Path, help="write measured points and fitted curves (.png, .svg or .pdf)")
    c.add_argument("--store", type=Path)
    c.add_argument("--format", choices=formats(CalibrateResult), default="table")

    t = sub.add_parser("tune", help="build and run variants, report predicted against measured")
    _scenario_args(t, ivp_required=False)
    t.add_argument("--plan", type=Path, help="run a plan written by `autotune plan` (resumes: variants the "
                                             "store has measured are not run again)")
    t.add_argument("--variant-filter", help="keep the variants that match: key=value[|value...],... or "
                    "'paper' (e.g. lc=jl-onepass|lj-onepass,comm=neighbour)")
    pick = t.add_mutually_exclusive_group()
    pick.add_argument("--all", action="store_true", help="run every applicable variant")
    pick.add_argument("--variants", help="semicolon-separated variant names")
    pick.add_argument("--top", type=_int_arg)
    pick.add_argument("--within", type=float)
    run = RunOptions()
    t.add_argument("--steps", type=_int_arg, default=run.steps)
    t.add_argument("--warmup", type=_int_arg, default=run.warmup)
    t.add_argument("--reps", type=_int_arg, default=run.reps, help="runs per variant; the median is reported")
    t.add_argument("--h", type=float, help="step size (default: the IVP's step_size)")
    t.add_argument("--flags", help="compiler flags for mpicc (default: -O3, the machine file's instruction set (-march, -m<ext>: what the analysis assumed), -fopenmp)")
    t.add_argument("--launcher", help="as for calibrate (default mpiexec -n {procs})")
    t.add_argument("--timeout", type=float, default=run.timeout, help="seconds per run")
    t.add_argument("--replay", action="store_true", help="build and run nothing: report the repetitions the "
                   "store holds of each variant (same scenario and flags); a variant it does not hold is an error")
    t.add_argument("--plot", type=Path, help="predicted against measured per variant (.png/.svg)")
    t.add_argument("--sample", metavar="K", help="check the pre-selection: also run K variants drawn at "
                                                 "random from the others with a prediction")
    t.add_argument("--seed", metavar="S", default="0", help="seed of the --sample draw (default 0)")
    b = t.add_argument_group("batch jobs (with --plan)")
    what = b.add_mutually_exclusive_group()
    what.add_argument("--submit", choices=["slurm"], help="submit one batch job per scenario of the plan "
                      "(again: only those neither done, queued nor running); the job ids go to PLAN.state.json")
    what.add_argument("--status", action="store_true", help="per scenario of a submitted plan: done, queued, "
                      "running, failed, cancelled, lost or not submitted, with job ids")
    what.add_argument("--scenario", help="run only these scenario indices of the plan here (what a batch job does)")
    b.add_argument("--partition", help="sbatch --partition")
    b.add_argument("--account", help="sbatch --account")
    b.add_argument("--time", help="sbatch --time per job (default: from the predictions, at least 10 min)")
    b.add_argument("--sbatch-args", help="further sbatch options, e.g. \"--qos=short --exclusive\"")
    t.add_argument("--format", choices=formats(TuneResult), default="table")

    sc = sub.add_parser("scale", help="predicted scalability over node counts: speedup, efficiency, bound, "
                                      "crossovers, recommended node count")
    _scenario_args(sc, sweep=True)
    sc.add_argument("--comm", help="comma-separated comm schemes to consider (default: all the IVP allows)")
    sc.add_argument("--variant-filter", help="keep the variants that match: key=value[|value...],... or "
                    "'paper' (e.g. lc=jl-onepass|lj-onepass,comm=neighbour)")
    sc.add_argument("--rule", default="efficiency:0.5", help="node-count advice: efficiency:<min> (default "
                    "efficiency:0.5, the largest p that keeps it), fastest, or node-seconds")
    sc.add_argument("--plot", type=Path, help="time and efficiency against nodes, one line per variant (.png/.svg)")
    sc.add_argument("--format", choices=formats(ScaleResult), default="table")

    pl = sub.add_parser("plan", help="pre-select variants for a batch of scenarios (YAML) into a plan for tune --plan")
    pl.add_argument("scenarios", type=Path, help="YAML list of scenarios (ivp, n, nodes, threads, machine, "
                                                 "top/within/all, steps, reps ...)")
    pl.add_argument("--out", type=Path, default=Path("plan.json"), help="plan file to write (default plan.json)")
    pl.add_argument("--store", type=Path)
    pl.add_argument("--jobs", type=_jobs_arg, help="as for rank")
    pl.add_argument("--format", choices=formats(PlanResult), default="table")

    li = sub.add_parser("list", help="list shipped IVPs, machines, methods or an IVP's variants")
    li.add_argument("what", choices=["ivps", "machines", "methods", "variants"])
    li.add_argument("--ivp", help="for variants: only this IVP")
    li.add_argument("--format", choices=["table", "json"], default="table")
    return ap


def _progress(done: int, total: int, name: str) -> None:
    if done == 0:
        print(f"autotune: running {total} kerncraft analyses (ECM, OSACA, cache simulation)",
              file=sys.stderr, flush=True)
        return
    print(f"autotune: kerncraft [{done}/{total}] {name} done, {total - done} left", file=sys.stderr, flush=True)


def flag(field: str | None) -> str | None:
    """The option that sets a request field: threads -> --threads, min_bytes -> --min-bytes."""
    return None if field is None else "--" + field.replace("_", "-")


def main(argv: list[str] | None = None) -> int:
    # a short-lived process that builds hundreds of thousands of small acyclic objects in a
    # sweep: the cycle collector's frequent young-generation passes cost a third of a warm
    # sweep and find nothing.  The library leaves the collector alone; the program tunes it.
    gc.set_threshold(200_000, 50, 100)
    args = build_parser().parse_args(argv)
    try:
        from autotune.cli import commands
        return commands.dispatch(args, _progress)
    except InputError as e:
        print(f"autotune: error: {e.named(flag(e.field))}", file=sys.stderr)
        return 2
    except ToolError as e:
        print(f"autotune: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("autotune: interrupted (finished analyses are kept in the store)", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

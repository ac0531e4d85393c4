"""The command line's options: one builder per subcommand, registered with its one-line help.
The front end (cli.main) builds a subcommand's options only when that subcommand runs or shows
its help, so `autotune --help` and `autotune list` import nothing they do not use."""
from __future__ import annotations

import argparse
import math
from pathlib import Path

from autotune.request.defaults import DEFAULT_METHOD, DEFAULT_WITHIN_PCT, MODELS, SCALE_NODES, TABLE_ROWS
from autotune.specs.schemes import OPERATIONS

def _reps_arg(text: str) -> int | str:
    """--reps: an integer, or auto."""
    if text == "auto":
        return text
    try:
        return _int_arg(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"expected an integer or 'auto', got {text!r}") from None


def _path_arg(text: str) -> Path:
    """A file or folder option: an empty text is refused (Path("") is the working folder)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"expected a path, got {text!r}")
    return Path(text)


def _int_arg(text: str) -> int:
    """An integer option (1e6 is one); the range it must lie in is the request's to check."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if not math.isfinite(value) or value != int(value):
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}")
    return int(value)


def _nodes_arg(text: str) -> int | str:
    """--nodes of one scenario: a count, or kinds of node with theirs (big:4,small:2: request.mixed)."""
    from autotune.request.mixed import is_mix
    return text if is_mix(text) else _int_arg(text)


def _jobs_arg(text: str) -> int | str:
    """--jobs: a number of local processes, or 'mpi' for the ranks of `python -m mpi4py.futures`."""
    if text.strip().lower() == "mpi":
        return "mpi"
    try:
        return _int_arg(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"expected a number of processes or 'mpi', got {text!r}") from None


SWEEP_HELP = " (a list or range sweeps: 8,16 | 1:64 | 1:64:x2 | 1e6:1e8:20log)"


def _scenario_args(p: argparse.ArgumentParser, sweep: bool = False, ivp_required: bool = True,
                   nodes_default: str = "the machine's") -> None:
    num = str if sweep else _int_arg
    more = SWEEP_HELP if sweep else ""
    p.add_argument("--ivp", required=ivp_required, help="shipped IVP name (autotune list ivps) or a YAML path; "
                   "NAME.interleaved: its two coupled blocks stored interleaved" + (" (comma-separated, or 'all')" if sweep else ""))
    p.add_argument("--nodes", type=str if sweep else _nodes_arg,
                   help=f"cluster nodes, one MPI rank each (default: {nodes_default})" + more
                   + "; or nodes of several kinds, KIND:COUNT,... (each a partition of --machine's cluster "
                     "or a machine): big:4,small:2")
    p.add_argument("--split", help="with nodes of several kinds: the blocks of components, one per rank in "
                   "the kinds' order, C0,C1,... (default: the model's split, per variant)")
    p.add_argument("--threads", type=str if sweep else _nodes_arg,
                   help="OpenMP threads per node (default: all cores)" + more + "; with nodes of several kinds, "
                   "one count for all or KIND:COUNT,... per kind")
    p.add_argument("--n", type=num, help="system size (default: the IVP's default)" + more)
    p.add_argument("--machine", help="shipped machine name or YAML path (default: reference cluster)")
    p.add_argument("--method", default=DEFAULT_METHOD, help=f"ODE method (default: {DEFAULT_METHOD})")
    p.add_argument("--rtol", type=float, help="step-size control: the relative tolerance of the error estimate "
                   "(with --atol, or alone for both; default: a fixed step)")
    p.add_argument("--atol", type=float, help="step-size control: the absolute tolerance (default: --rtol's)")
    p.add_argument("--store", type=_path_arg, help="SQLite store (default: $AUTOTUNE_STORE or the user data folder, "
                   "~/.local/share/autotune/store.sqlite)")
    p.add_argument("--model", choices=MODELS, help="'ecm': predict without the factors the machine learned from "
                   "its runs (calibrate --from-runs); default: with them, where it has them")
    p.add_argument("--jobs", type=_jobs_arg, help="parallel kerncraft analyses (default: available cores), or "
                   "'mpi' for the other ranks of `mpiexec -n P python -m mpi4py.futures -m autotune ...`")


def _format_arg(p: argparse.ArgumentParser, result: str) -> None:
    """--format: the formats the result type of that name is rendered in.  The type and its
    renderers are found (results.registry, report.render) when a value is checked or the help is
    shown, not when the option is added: argparse lists the choices of an option without a metavar
    as it adds it, which would import every renderer for any subcommand."""
    from autotune.report.render import FormatChoices
    p.add_argument("--format", choices=FormatChoices(result), metavar="FORMAT", default="table",
                   help="output format: %(choices)s (default %(default)s)")


def _rank_args(p: argparse.ArgumentParser) -> None:
    _scenario_args(p, sweep=True)
    p.add_argument("--comm", help="comma-separated comm schemes to consider (default: all the IVP allows)")
    p.add_argument("--variant-filter", help="keep the variants that match: key=value[|value...],... or "
                    "'paper' (e.g. lc=jl-onepass|lj-onepass,comm=neighbour)")
    sel = p.add_mutually_exclusive_group()
    sel.add_argument("--top", type=_int_arg, help="pre-select the K best variants")
    sel.add_argument("--within", type=float, help=f"pre-select within PCT %% of the best (default {DEFAULT_WITHIN_PCT:g})")
    p.add_argument("--selected-only", action="store_true",
                   help="in a sweep, write the rows of the pre-selected variants only (batch pre-selection)")
    p.add_argument("--all", dest="every_row", action="store_true",
                   help=f"the table lists every variant (default: the pre-selected ones, then the next ones up to "
                        f"{TABLE_ROWS} rows in all, and the best of the paper's forms where none of them is; csv "
                        f"and json always have every one)")
    _format_arg(p, "RankResult")


def _explain_args(p: argparse.ArgumentParser) -> None:
    _scenario_args(p)
    p.add_argument("--variant", required=True,
                   help="the variant as dimension=value pairs, e.g. lc=jil,comm=neighbour (its name in rank's "
                        "csv or json; the dimensions left out at the paper's values)")
    _format_arg(p, "ExplainResult")


def _generate_args(p: argparse.ArgumentParser) -> None:
    _scenario_args(p)
    p.add_argument("--out", type=_path_arg, default=Path("variants-out"),
                   help="the folder to write the variants' code (or the online solver) into (default variants-out)")
    p.add_argument("--likwid", action="store_true", default=None,
                   help="each sweep of every solver a LIKWID marker region, for likwid-perfctr -m (the build "
                        "commands add -DLIKWID_PERFMON and -llikwid)")
    o = p.add_argument_group("online (docs/online.md): one solver of the pre-selected few, ranked in the scenario")
    o.add_argument("--online", type=_int_arg, nargs="?", const=True, metavar="K",
                   help="write one solver (online.c) that carries the K best variants (at most 8; without K: "
                        "those --within selects) and picks the fastest while it runs")
    o.add_argument("--within", type=float, help=f"with --online: the variants within PCT %% of the best "
                                                f"(default {DEFAULT_WITHIN_PCT:g}, at most 8)")
    o.add_argument("--recheck", type=_int_arg, metavar="M",
                   help="with --online: the solver's default re-check: a trial again every M steps (default 0)")
    _format_arg(p, "GenerateResult")


def _calibrate_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--machine", help="machine name or YAML path to calibrate (with --node: the name or path of "
                                     "the machine file to make, as --name)")
    p.add_argument("--node", action="store_true", help="make a cluster machine file of this host: CPU identified "
                                                       "(see --uarch), cache geometry from the OS, bandwidths measured")
    p.add_argument("--from-kerncraft", type=_path_arg, metavar="FILE",
                   help="make a cluster machine file of a kerncraft machine file (--name, --nodes)")
    p.add_argument("--name", help="with --node or --from-kerncraft: the new machine's name (written to the "
                                  "user's machine folder; --out for another path)")
    p.add_argument("--nodes", type=_int_arg, default=1, help="with --node or --from-kerncraft: the cluster's "
                                                             "node count (default 1)")
    p.add_argument("--uarch", help="with --node: the microarchitecture (OSACA's name, e.g. zen4) where the CPU "
                                   "is not identified; recorded as assumed")
    p.add_argument("--port-model", type=_path_arg, metavar="FILE.yml",
                   help="with --node: an OSACA architecture file (e.g. a newer OSACA's zen5.yml) for the in-core "
                        "analyses, instead of the installed OSACA's model of that name; recorded by its sha256")
    p.add_argument("--dry-run", action="store_true", help="with --node: print what was identified and the file "
                                                          "that would be written; measure and write nothing; with "
                                                          "--from-runs: fit and report, write nothing")
    p.add_argument("--from-runs", action="store_true", help="fit the node model's factors (ECM transfer terms, "
                   "in-core terms per kernel class) to the runs of --machine in the store, cross-validate, and write "
                   "them into the machine file (cluster.learned)")
    p.add_argument("--folds", choices=("scenario", "size", "ivp"), default="scenario",
                   help="with --from-runs: what each cross-validation fold leaves out (default: one scenario)")
    p.add_argument("--holdout", help="with --from-runs: comma-separated IVPs whose runs no fit sees; they are "
                   "predicted by the fit of all the others")
    p.add_argument("--min-seconds", type=float, default=0.1, help="with --node: seconds per bandwidth run")
    p.add_argument("--procs", default="2", help="process counts, e.g. 2,4,8 (default 2)")
    p.add_argument("--kinds", help="partitions of --machine to measure across, e.g. big,small: a group of ranks "
                   "on each (srun in a heterogeneous allocation, or mpiexec); written to cluster.networks")
    p.add_argument("--threads", default="1,2", help="thread counts for the barrier benchmark (default 1,2)")
    p.add_argument("--launcher", help="'mpiexec' (default), 'srun', or a template such as "
                                      "\"srun -N {nodes} -n {procs}\"")
    p.add_argument("--ops", help="operations to measure, comma-separated (default: every one: "
                                 f"{','.join(OPERATIONS)})")
    p.add_argument("--min-bytes", type=_int_arg, default=8)
    p.add_argument("--max-bytes", type=_int_arg, default=64 * 2**20)
    p.add_argument("--factor", type=float, default=2.0, help="message size step factor (default 2)")
    p.add_argument("--max-seconds", type=float, default=0.5, help="time budget per message size")
    p.add_argument("--timeout", type=float, default=900.0, help="seconds per benchmark run")
    p.add_argument("--out", type=_path_arg, help="machine file to write (default: update the one given)")
    p.add_argument("--fresh", action="store_true", help="measure again even what the store has")
    p.add_argument("--raw", type=_path_arg, help="also write every measurement as Extra-P JSON Lines (the "
                   "operations to RAW, the barrier to RAW's name with .barrier before its suffix: Extra-P wants "
                   "one set of parameters per file)")
    p.add_argument("--plot", type=_path_arg, help="write measured points and fitted curves (.png, .svg or .pdf)")
    p.add_argument("--store", type=_path_arg)
    _format_arg(p, "CalibrateResult")


def _tune_args(p: argparse.ArgumentParser) -> None:
    _scenario_args(p, ivp_required=False)
    p.add_argument("--plan", type=_path_arg, help="run a plan written by `autotune plan` (resumes: variants the "
                                             "store has measured are not run again)")
    p.add_argument("--variant-filter", help="keep the variants that match: key=value[|value...],... or "
                    "'paper' (e.g. lc=jl-onepass|lj-onepass,comm=neighbour)")
    pick = p.add_mutually_exclusive_group()
    pick.add_argument("--all", action="store_true", help="run every applicable variant")
    pick.add_argument("--variants", help="semicolon-separated variant names")
    pick.add_argument("--top", type=_int_arg)
    pick.add_argument("--within", type=float)
    from autotune.request.run import RunOptions
    run = RunOptions()
    p.add_argument("--steps", type=_int_arg, default=run.steps)
    p.add_argument("--warmup", type=_int_arg, default=run.warmup)
    p.add_argument("--reps", type=_reps_arg, default=run.reps, help="runs per variant, the median reported; "
                   "auto: race them (a variant runs on only while it could still be the best)")
    p.add_argument("--budget", help="with --reps auto: stop the race after N runs, or Ns seconds")
    p.add_argument("--h", type=float, help="step size (default: the IVP's step_size)")
    p.add_argument("--flags", help="compiler flags for mpicc (default: -O3, the machine file's instruction set (-march, -m<ext>: what the analysis assumed), -fopenmp)")
    p.add_argument("--launcher", help="as for calibrate (default mpiexec -n {procs})")
    p.add_argument("--timeout", type=float, default=run.timeout, help="seconds per run")
    p.add_argument("--replay", action="store_true", help="build and run nothing: report the repetitions the "
                   "store holds of each variant (same scenario and flags); a variant it does not hold is an error")
    p.add_argument("--plot", type=_path_arg, help="predicted against measured per variant (.png/.svg)")
    p.add_argument("--sample", metavar="K", help="check the pre-selection: also run K variants drawn at "
                                                 "random from the others with a prediction")
    p.add_argument("--seed", metavar="S", default="0", help="seed of the --sample draw (default 0)")
    p.add_argument("--baseline", action="store_true", help="also run the paper's forms (six loop orders "
                   "for each scheme) that are not run already, as the baseline of the fast forms")
    o = p.add_argument_group("online (docs/online.md)")
    o.add_argument("--online", action="store_true", help="build one solver that carries the chosen variants "
                   "(at most 8: --top K, --within PCT or --variants), run it once for --steps: its trial picks the "
                   "fastest while it runs; the trial's timings go to the store as runs of each, marked online")
    o.add_argument("--recheck", type=_int_arg, metavar="M",
                   help="with --online: a trial again every M steps, to follow drift (default 0: the first only)")
    o.add_argument("--ingest", type=_path_arg, metavar="FILE", help="take the JSON an online solver wrote "
                   "(AUTOTUNE_ONLINE_JSON, or its last output line) into the store; runs nothing")
    b = p.add_argument_group("batch jobs (with --plan)")
    what = b.add_mutually_exclusive_group()
    what.add_argument("--submit", choices=["slurm"], help="submit one batch job per scenario of the plan "
                      "(again: only those neither done, queued nor running); the job ids go to PLAN.state.json")
    what.add_argument("--status", action="store_true", help="per scenario of a submitted plan: done, queued, "
                      "running, failed, cancelled, lost or not submitted, with job ids")
    what.add_argument("--scenario", help="run only these scenario indices of the plan here (what a batch job does)")
    b.add_argument("--partition", help="sbatch --partition")
    b.add_argument("--account", help="sbatch --account")
    b.add_argument("--time", help="sbatch --time per job (default: from the predictions, at least 10 min)")
    b.add_argument("--sbatch-args", help="further sbatch options, e.g. \"--qos=short --constraint=hwperf\"")
    b.add_argument("--setup", action="append", metavar="LINE", help="a shell line each job runs before the "
                   "solver, e.g. 'module load gcc openmpi' (again for more lines)")
    b.add_argument("--shared-nodes", action="store_true", default=None, help="let other jobs share the nodes "
                   "(default: each job asks for whole nodes, --exclusive, since it times its runs)")
    _format_arg(p, "TuneResult")


def _scale_args(p: argparse.ArgumentParser) -> None:
    _scenario_args(p, sweep=True, nodes_default=SCALE_NODES)
    p.add_argument("--comm", help="comma-separated comm schemes to consider (default: all the IVP allows)")
    p.add_argument("--variant-filter", help="keep the variants that match: key=value[|value...],... or "
                    "'paper' (e.g. lc=jl-onepass|lj-onepass,comm=neighbour)")
    p.add_argument("--rule", default="efficiency:0.5", help="node-count advice: efficiency:<min> (default "
                    "efficiency:0.5, the largest p that keeps it), fastest, or node-seconds")
    p.add_argument("--plot", type=_path_arg, help="time and efficiency against nodes, one line per variant (.png/.svg)")
    _format_arg(p, "ScaleResult")


def _plan_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("scenarios", type=_path_arg, help="YAML list of scenarios (ivp, n, nodes, threads, machine, "
                                                 "top/within/all, steps, reps ...)")
    p.add_argument("--out", type=_path_arg, default=Path("plan.json"), help="plan file to write (default plan.json)")
    p.add_argument("--store", type=_path_arg)
    p.add_argument("--jobs", type=_jobs_arg, help="as for rank")
    _format_arg(p, "PlanResult")


def _list_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("what", choices=["ivps", "machines", "methods", "variants"])
    p.add_argument("--ivp", help="for variants: only this IVP")
    p.add_argument("--format", choices=["table", "json", "csv"], default="table",
                   help="output format: table, json or csv (default table)")


def _schema_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("name", choices=["machine", "ivp", "method", "plan"],
                   help="the kind of file: its JSON Schema (draft 2020-12) goes to stdout, for an editor or a validator")


# subcommand -> (its line in `autotune --help`, the builder of its options)
SUBCOMMANDS = {
    "rank": ("rank every applicable variant by predicted seconds per step (one scenario, or a sweep in "
             "long format)", _rank_args),
    "explain": ("per-kernel breakdown of one variant's prediction", _explain_args),
    "generate": ("write every variant's kernel parts (the code kerncraft analyses)", _generate_args),
    "calibrate": ("run the MPI micro-benchmarks, fit the communication model, write it into the machine file",
                  _calibrate_args),
    "tune": ("build and run variants, report predicted against measured", _tune_args),
    "scale": ("predicted scalability over node counts: speedup, efficiency, bound, crossovers, recommended "
              "node count", _scale_args),
    "plan": ("pre-select variants for a batch of scenarios (YAML) into a plan for tune --plan", _plan_args),
    "list": ("list shipped IVPs, machines, methods or an IVP's variants", _list_args),
    "schema": ("print the JSON Schema of a machine, IVP, method or scenarios file", _schema_args),
}

"""`autotune calibrate`: run the MPI micro-benchmarks through a launcher, fit, and record.

The edge of the communication model: it runs subprocesses (launcher + the
benchmarks in benchmarks_mpi/), keeps every raw measurement in the store as
soon as a run finishes (an interrupted calibration resumes where it
stopped), fits with the pure functions of commfit, and writes the fitted
model into the machine file.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from autotune.progress import Progress
from autotune.errors import InputError, ToolError
from autotune.request.calibrate import Plan
from autotune.results.calibrate import CalibrateResult, caveat
from autotune.specs.schemes import OPERATIONS
from autotune.storage.atomic import write_text, writing
from autotune.storage.store import Store
from autotune.tools.mpiinfo import launch_argv, placement, placement_error, world_size_error

_WORLD = re.compile(r"MPI world of (\d+) rank")


def _run(argv: list[str], log: Path, timeout: float, what: str, ranks: int | None = None) -> None:
    try:
        with open(log, "w") as f:
            proc = subprocess.run(argv, stdout=f, stderr=subprocess.STDOUT, timeout=timeout)
    except FileNotFoundError:
        raise ToolError(f"{what}: command '{argv[0]}' not found (install MPI, e.g. pip install mpich, "
                        f"or give --launcher); command: {' '.join(argv)}") from None
    except subprocess.TimeoutExpired:
        raise ToolError(f"{what}: timed out after {timeout:g} s: {' '.join(argv)} (log: {log})") from None
    if proc.returncode != 0:
        lines = log.read_text(errors="replace").splitlines()
        worlds = [int(m.group(1)) for m in map(_WORLD.search, lines) if m]
        if ranks and worlds:        # the benchmark's own check: the launcher did not connect the ranks
            raise ToolError(world_size_error(what, len(worlds), worlds[0], ranks, argv))
        last = next((ln for ln in reversed(lines) if ln.strip()), "")
        raise ToolError(f"{what}: exit status {proc.returncode}: {' '.join(argv)}"
                        + (f": {last.strip()[-300:]}" if last else "") + f" (log: {log})")


def _read_records(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _placed(records: list[dict], what: str, plan: Plan, p: int, argv: list[str],
            progress: Progress) -> list[dict]:
    """The records with where their ranks ran (mpiinfo.placement: nodes, ranks per node, virtual,
    packed); a run the launcher was told to spread over more nodes than it reached is no result."""
    nodes = plan.nodes.get(p, p)
    where = placement(records[0].get("placement"), nodes)
    wrong = placement_error(what, where, nodes, argv) if plan.launcher.places_nodes else None
    if wrong:
        raise ToolError(wrong)
    if where:
        kind = " (virtual nodes: one host)" if where["virtual"] else " (packed: fewer nodes than asked)" \
            if where["packed"] else ""
        progress.say(f"{what}: ranks on " + ", ".join(f"{n} x{k}" if k > 1 else n
                                                  for n, k in where["ranks_per_node"].items()) + kind)
    return [dict(r, placement=where) for r in records]


def measure(plan: Plan, store: Store, workdir: Path, progress: Progress,
            fresh: bool = False) -> tuple[dict[str, list[dict]], int]:
    """Raw records per operation (and 'barrier'); returns them and how many runs were made."""
    out: dict[str, list[dict]] = {op: [] for op in plan.ops}
    out["barrier"] = []
    runs = 0
    todo = [(op, p) for op in plan.ops for p in plan.procs]
    for i, (op, p) in enumerate(todo, 1):
        key = plan.series(op, p)
        records = [] if fresh else store.get_measurements(key)
        if records:
            progress.say(f"{op} p={p} ({i}/{len(todo)}): reused {len(records)} sizes from the store")
        else:
            progress.say(f"{op} p={p} ({i}/{len(todo)}): measuring {plan.min_bytes} B .. {plan.max_bytes} B")
            data, log = workdir / f"{op}-p{p}.jsonl", workdir / f"{op}-p{p}.log"
            cmd = [sys.executable, "-m", OPERATIONS[op].benchmark, "--min-bytes", str(plan.min_bytes),
                   "--max-bytes", str(plan.max_bytes), "--factor", str(plan.factor),
                   "--max-seconds", str(plan.max_seconds), "--out", str(data), "--ranks", str(p)]
            argv = _argv(plan, p, cmd)
            _run(argv, log, plan.timeout, f"{op} benchmark on {p} ranks", p)
            records = _read_records(data)
            if not records:
                raise ToolError(f"{op} benchmark on {p} ranks wrote no measurements (log: {log})")
            sizes = {r["params"]["p"] for r in records}
            if sizes != {p}:
                raise ToolError(world_size_error(f"{op} benchmark", len(sizes), min(sizes), p, argv))
            records = _placed(records, f"{op} benchmark on {p} ranks", plan, p, argv, progress)
            store.put_measurements(key, plan.machine.name, op, records)
            runs += 1
        out[op] += records
    exe = None
    for t in plan.threads:
        key = plan.barrier_series(t)
        records = [] if fresh else store.get_measurements(key)
        if not records:
            progress.say(f"barrier threads={t}: measuring")
            from benchmarks_mpi import barrier as bb
            try:
                exe = exe or bb.build(plan.machine.compiler, workdir)
                records = [bb.run(exe, t)]
            except FileNotFoundError:
                raise ToolError(f"barrier benchmark: compiler '{plan.machine.compiler}' not found") from None
            except subprocess.CalledProcessError as e:
                raise ToolError(f"barrier benchmark: {' '.join(map(str, e.cmd))} failed: {(e.stderr or '').strip()[:300]}") from None
            store.put_measurements(key, plan.machine.name, "barrier", records)
            runs += 1
        out["barrier"] += records
    return out, runs


def _argv(plan: Plan, p: int, cmd: list[str]) -> list[str]:
    """The launch of a benchmark on p ranks: across kinds, one group of ranks per kind (srun's
    heterogeneous step, or mpiexec's MPMD form: tools.launcher.mpmd_argv)."""
    if not plan.kinds:
        return launch_argv(plan.launcher, p, cmd, plan.nodes.get(p))
    from autotune.tools.launcher import mpmd_argv
    from autotune.tools.mpiinfo import srun_pmi
    from autotune.tools.toolchain import resolve_argv
    pmi = srun_pmi() if "srun" in plan.launcher.template else "pmi2"
    return resolve_argv(mpmd_argv(plan.launcher, plan.groups(p), cmd, pmi))


def where_measured(raw: dict[str, list[dict]]) -> dict | None:
    """Where the benchmarks' ranks ran, over every stored run: the nodes, and whether any run was
    on virtual nodes (one host) or packed on fewer nodes than asked.  Pure; None where no record
    says (measurements stored before records carried their placement)."""
    found = [r["placement"] for records in raw.values() for r in records if r.get("placement")]
    if not found:
        return None
    return {"nodes": sorted({n for w in found for n in w["nodes"]}),
            "virtual": any(w["virtual"] for w in found), "packed": any(w["packed"] for w in found)}


def fit_all(raw: dict[str, list[dict]]) -> dict:
    """Fits and held-out errors for every measured operation (pure, given the records)."""
    from autotune.model import commfit
    result: dict = {"operations": {}}
    for op, records in raw.items():
        if op == "barrier" or not records:
            continue
        points = [(r["params"]["p"], r["params"]["bytes"], r["median"]) for r in records]
        fit = commfit.fit_operation(op, points)
        result["operations"][op] = {
            "fit": fit.to_dict(),
            "heldout_error_pct": commfit.heldout_sizes(op, points),
            "heldout_p_error_pct": commfit.heldout_p(op, points),
            "measured_p": sorted({p for p, _, _ in points}),
        }
    if raw.get("barrier"):
        result["barrier"] = commfit.fit_barrier([(r["params"]["threads"], r["median"]) for r in raw["barrier"]])
    return result


def write_machine(source: Path, target: Path, result: dict, plan: Plan) -> None:
    """Update the cluster section of a machine file (comments and the rest kept as they are)."""
    from autotune.storage.yamlfile import dump_text, round_trip_yaml

    yaml = round_trip_yaml()
    with open(source) as f:
        data = yaml.load(f)
    when = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    net, kept = data["cluster"]["network"], {}
    if plan.kinds:          # across kinds: a network of its own, the cluster network's for the rest
        nets = data["cluster"].setdefault("networks", {})
        kept = dict(net.get("fits") or {})
        nets["+".join(plan.kinds)] = {k: net[k] for k in ("latency_s", "bandwidth_Bps") if k in net}
        net = nets["+".join(plan.kinds)]
    net["model"] = "fitted"
    net["calibrated"] = when
    net["provenance"] = (f"fitted by autotune calibrate on {when} from {', '.join(result['operations'])} "
                         f"on p = {','.join(map(str, plan.procs))} with '{plan.launcher.template}', "
                         + (f"ranks across {' and '.join(plan.kinds)}, " if plan.kinds else "")
                         + f"{plan.min_bytes} B .. {plan.max_bytes} B; other operations: "
                         + ("the cluster network's" if plan.kinds else "data sheet")
                         + "".join(f"; {c}" for c in [caveat(result.get("measured_on"))] if c))
    if result.get("measured_on"):
        net["measured_on"] = result["measured_on"]
    net["fits"] = {**kept, **{op: r["fit"] for op, r in result["operations"].items()}}
    net["heldout_error_pct"] = {op: r["heldout_error_pct"] for op, r in result["operations"].items()}
    if "barrier" in result:
        bar = data["cluster"]["barrier"]
        bar["model"] = "fitted"
        bar["calibrated"] = when
        bar["provenance"] = f"fitted by autotune calibrate on {when} for {','.join(map(str, plan.threads))} threads"
        bar["per_doubling_s"] = float(result["barrier"]["per_doubling_s"])
        bar["error_pct"] = result["barrier"]["error_pct"]
    write_text(target, dump_text(yaml, data), "out", make_folders=True)


def raw_files(raw: dict[str, list[dict]], path: Path) -> dict[Path, list[dict]]:
    """The measurements by file: Extra-P reads a JSON Lines file's parameters off its first line
    and wants them on every line, so each set of parameter names gets a file of its own.  The
    operations' (p, bytes) go to `path`, the barrier's (threads) to path's name with
    `.barrier` before its suffix (raw.jsonl: raw.barrier.jsonl)."""
    groups: dict[tuple, list[dict]] = {}
    for records in raw.values():
        for r in records:
            groups.setdefault(tuple(r["params"]), []).append(r)
    out = {}
    for i, records in enumerate(groups.values()):
        name = path if i == 0 else path.with_name(f"{path.stem}.{records[0]['callpath']}{path.suffix}")
        out[name] = records
    return out


def calibrate(plan: Plan, store: Store, target: Path, progress: Progress,
              fresh: bool = False, raw_out: Path | None = None) -> CalibrateResult:
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="autotune-calibrate-") as tmp:
        workdir = Path(tmp)
        try:
            raw, runs = measure(plan, store, workdir, progress, fresh)
        except ToolError as e:
            # keep the logs: the message names them
            keep = Path(tempfile.mkdtemp(prefix="autotune-calibrate-logs-"))
            for f in workdir.glob("*.log"):
                (keep / f.name).write_text(f.read_text())
            raise ToolError(str(e).replace(str(workdir), str(keep))) from None
    if raw_out is not None:  # every repetition, as Extra-P JSON Lines: one file per set of parameters
        for path, records in raw_files(raw, Path(raw_out)).items():
            with writing(path, "raw") as f:
                f.writelines(json.dumps(r) + "\n" for r in records)
    result = fit_all(raw)
    result["measured_on"] = where_measured(raw)
    if not result["operations"]:
        raise InputError("calibrate: nothing was measured (check --ops and --procs)")
    result.update(machine=plan.machine.name, machine_file=str(target), runs=runs,
                  wall_s=time.perf_counter() - t0, procs=list(plan.procs), threads=list(plan.threads))
    write_machine(Path(plan.machine.path), target, result, plan)
    store.put_comm_fit(plan.machine.name, result)
    return CalibrateResult.of(result, raw)

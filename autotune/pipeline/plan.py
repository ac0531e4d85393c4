"""Plans for the empirical search: `autotune plan scenarios.yaml` pre-selects variants for a batch
of scenarios; `autotune tune --plan plan.json` runs them, skipping every variant whose
measurement the store already holds, and keeps going past failures (edge: files, store).

scenarios.yaml is a list of scenarios, or {defaults: {...}, scenarios: [...]}.  A scenario
names an IVP and may give n, nodes and threads (a value or a sweep such as 1:8:x2: it then
expands into one scenario per value), machine, partition, method, the selection (top: K,
within: PCT or all: true) and how to run (steps, warmup, reps, flags, h, launcher, timeout).

One plan can cover several kinds of node: a scenario's `partition` (its own, else the
defaults') is the Slurm partition its batch job goes to, and picks its machine.  The machine
of a scenario is, first found:
  1. the scenario's own `machine` (its partition then only says where its job goes);
  2. its partition's machine: from `defaults.partitions: {NAME: MACHINE}`, else from the
     `cluster.partitions` map of the machine it would otherwise get (defaults' machine, or
     the default machine); a relative path there is taken beside that machine file;
  3. defaults' `machine`;
  4. the default machine.
A partition that neither map names, where it has to pick the machine, is refused before any
ranking (the entry's field and the partitions known).  The plan records each scenario's
partition (null: none; the job goes to tune's --partition or Slurm's default) and machine.

A path in the scenarios file (ivp, machine, method, defaults.partitions) is taken relative to
the file's folder; a bare name (no YAML suffix, no folder) is a shipped or user name.  The plan
records the absolute path of every file it loaded (ivp_path, machine_path, method_path), so that
tune --plan and its batch jobs run from any working directory.
"""
from __future__ import annotations

import json
import time
from collections.abc import Collection
from pathlib import Path

from autotune.arith import ordered_sum
from autotune.errors import InputError, ToolError
from autotune.progress import SILENT, Progress
from autotune.model.preselect import Rule
from autotune.pipeline.predict import rank_many, rank_scenario
from autotune.pipeline.sweep import scenarios as expand
from autotune.pipeline.tune import tune
from autotune.request.run import RunOptions
from autotune.request.scenario import DEFAULT_METHOD, ScenarioRequest
from autotune.request.selection import selection
from autotune.results.plan import PLAN_VERSION, READABLE_VERSIONS, PlannedScenario, PlannedVariant, PlanResult
from autotune.results.tune import PlanRunResult, PlanScenarioRun, PlanTotals
from autotune.specs.control import Control
from autotune.specs.ivp import load_ivp
from autotune.specs.loading import absolute_path, beside, read_yaml, validate
from autotune.specs.machine import load_machine
from autotune.specs.machine_schema import PARTITION
from autotune.specs.method import load_method, method_file
from autotune.pipeline.applicable import applicable_pool
from autotune.specs.scenario import Scenario, check_scenario, scenario_spaces
from autotune.specs.variants import parse_variant
from autotune.specs.schema import first_error
from autotune.storage.atomic import write_json

_SWEEPABLE = {"type": ["integer", "string"]}
# nodes and threads may name kinds of node: {big: 4, small: 2} (or "big:4,small:2"; request.mixed)
_KINDS = {"type": ["integer", "string", "object"], "additionalProperties": {"type": "integer"}}
_SCENARIO_FIELDS = {
    "ivp": {"type": "string"}, "n": _SWEEPABLE, "nodes": _KINDS, "threads": _KINDS,
    "machine": {"type": "string"}, "partition": PARTITION, "method": {"type": "string"},
    "top": {"type": "integer", "minimum": 1}, "within": {"type": "number", "minimum": 0},
    "all": {"type": "boolean"},
    "steps": {"type": "integer", "minimum": 1}, "warmup": {"type": "integer", "minimum": 0},
    "reps": {"type": ["integer", "string"]}, "budget": {"type": ["integer", "string"]},   # RunOptions checks them
    "flags": {"type": "string"},
    "h": {"type": "number", "exclusiveMinimum": 0}, "launcher": {"type": "string"},
    "timeout": {"type": "number", "exclusiveMinimum": 0},
    "rtol": {"type": "number"}, "atol": {"type": "number"},     # step-size control (specs.control checks them)
}
SCENARIO_SCHEMA = {"type": "object", "required": ["ivp"], "additionalProperties": False,
                   "properties": _SCENARIO_FIELDS}
_PARTITIONS = {"type": "object", "additionalProperties": {"type": "string"}}    # partition -> machine
FILE_SCHEMA = {"type": "object", "required": ["scenarios"], "additionalProperties": False, "properties": {
    "defaults": {"type": "object", "additionalProperties": False,
                 "properties": dict({k: v for k, v in _SCENARIO_FIELDS.items() if k != "ivp"},
                                    partitions=_PARTITIONS)},
    "scenarios": {"type": "array", "minItems": 1, "items": SCENARIO_SCHEMA}}}
_RUN_FIELDS = tuple(RunOptions.__dataclass_fields__)


def _entry_error(path: Path, i: int, e: InputError) -> InputError:
    """An error about one scenario entry, naming its field as the file does."""
    where = f"scenarios[{i}]" + (f".{e.field}" if e.field else "")
    return InputError(f"{path}: field '{where}': {e.message.lstrip(': ')}")


class _Partitions:
    """Where a scenarios file finds a partition's machine: its defaults' map, then the cluster
    section of the machine its scenarios get without one (loaded once, when first asked)."""

    def __init__(self, path: Path, defaults: dict):
        self.path, self.base = path, defaults.get("machine")
        self.mapped = {str(k): v for k, v in (defaults.get("partitions") or {}).items()}
        self._cluster: dict[str, str] | None = None

    def cluster(self) -> dict[str, str]:
        if self._cluster is None:
            try:
                self._cluster = load_machine(self.base).partitions
            except InputError as err:
                raise InputError(f"{self.path}: field 'defaults.machine': {err}") from None
        return self._cluster

    def machine(self, partition: str, i: int) -> str:
        found = self.mapped.get(partition) or self.cluster().get(partition)
        if found is None:
            known = ", ".join(sorted(set(self.mapped) | set(self.cluster()))) or "none"
            raise InputError(f"{self.path}: field 'scenarios[{i}].partition': unknown partition '{partition}' "
                             f"(known: {known}; name its machine under defaults.partitions or in the "
                             f"machine file's cluster.partitions)")
        return found


def _anchored(entry: dict, folder: Path) -> dict:
    """An entry (or the defaults) with its paths taken beside the scenarios file, in `folder`."""
    out = dict(entry)
    for key in ("machine", "method"):
        if key in out:
            out[key] = beside(out[key], folder)
    if "ivp" in out:           # a comma-separated list of names and paths
        out["ivp"] = ",".join(beside(v.strip(), folder) for v in out["ivp"].split(","))
    if "partitions" in out:
        out["partitions"] = {k: beside(v, folder) for k, v in out["partitions"].items()}
    return out


def read_scenarios(path: Path) -> list[tuple[ScenarioRequest, Rule, RunOptions, str | None]]:
    """The requests of a scenarios file, defaults applied, each with its partition (None: none);
    the machine as the module's docstring says (InputError names the entry's field)."""
    data = read_yaml(path)
    if isinstance(data, list):
        data = {"scenarios": data}
    validate(data, FILE_SCHEMA, path)
    folder = path.absolute().parent
    defaults = _anchored(data.get("defaults") or {}, folder)
    partitions = _Partitions(path, defaults)
    out = []
    for i, entry in enumerate(data["scenarios"]):
        entry = _anchored(entry, folder)
        e = dict(defaults, **entry)
        partition = e.get("partition")
        machine = entry.get("machine") or (partitions.machine(partition, i) if partition else e.get("machine"))
        try:
            req = ScenarioRequest(e["ivp"], e.get("n"), e.get("nodes"), e.get("threads"), machine,
                                  e.get("method", DEFAULT_METHOD), rtol=e.get("rtol"), atol=e.get("atol"))
            rule = selection(e.get("top"), e.get("within"), bool(e.get("all")))
            run = RunOptions(**{k: e[k] for k in _RUN_FIELDS if k in e})
        except InputError as err:
            raise _entry_error(path, i, err) from None
        out.append((req, rule, run, partition))
    return out


def make_plan(path: Path, store, progress: Progress = SILENT, jobs: int | None = None) -> PlanResult:
    out, skipped, expanded = [], [], []
    for i, (req, rule, run, partition) in enumerate(read_scenarios(path)):   # every entry checked before any work
        try:
            spec = req.sweep_spec()
            if spec.mix:        # nodes of several kinds: its kinds are its partitions, checked now
                if partition:
                    raise InputError(f"{partition}: not with nodes of several kinds (each kind is a partition "
                                     f"of the machine's cluster.partitions)", field="partition")
                req.mixed()
                if run.reps == "auto":
                    raise InputError(": nodes of several kinds run a fixed number of repetitions", field="reps")
                items = ("mixed", req, [])
            else:
                items = expand(spec)                    # loads the method: method_file finds it
            expanded.append((rule, run, partition, _absolute(method_file(spec.method)), *items))
        except InputError as err:
            raise _entry_error(path, i, err) from None
    for i, (rule, run, partition, method_path, items, requested, skip) in enumerate(expanded):
        skipped += [dict(s, scenario=i) for s in skip]
        if items == "mixed":
            from autotune.pipeline.mixedplan import plan_mixed
            out.append(plan_mixed(requested, rule, run, method_path, store, progress, jobs))
            continue
        ranked = rank_many(items, rule, store, progress, jobs)
        for res, n_req in zip(ranked, requested):
            sc = res.scenario
            chosen = [r for r in res.ordered if r.prediction and r.variant.name in res.preselected]
            rest = [r for r in res.ordered if r.prediction and r.variant.name not in res.preselected]
            out.append(PlannedScenario(
                f"{sc.ivp.name}/n={sc.n}/nodes={sc.nodes}/threads={sc.threads}/{sc.machine.name}"
                + (f"/partition={partition}" if partition else ""),
                sc.ivp.name, _absolute(sc.ivp.path), sc.method.name, sc.machine.name, _absolute(sc.machine.path),
                sc.n, n_req, sc.nodes, sc.threads, rule.describe(), run.to_dict(),
                [PlannedVariant(r.variant.name, r.prediction.total_s) for r in chosen], len(rest),
                ordered_sum(r.prediction.total_s for r in rest) * run.steps * run.fixed_reps, partition, method_path,
                sc.control.tolerances() if sc.control else None))
    if not out:
        raise InputError(f"{path}: no scenario can run: " + "; ".join(sorted({s['reason'] for s in skipped})[:3]))
    return PlanResult(_absolute(path), time.strftime("%Y-%m-%d %H:%M:%S %Z"), out, skipped)


def _absolute(path: Path | str) -> str:
    """Where a plan points to a file: from the root, so that it reads from any folder."""
    return str(absolute_path(path))


def write_plan(plan: PlanResult, target: Path) -> None:
    """Atomically: a plan half written is never read back."""
    write_json(target, plan.to_dict(), "out", make_folders=True)


def read_plan(path: Path) -> dict:
    try:
        plan = json.loads(path.read_text())
    except OSError as e:
        raise InputError(f"{path}: cannot read ({e.strerror})", field="plan") from None
    except json.JSONDecodeError as e:
        raise InputError(f"{path}: not JSON (line {e.lineno}: {e.msg})", field="plan") from None
    version = plan.get("plan_version") if isinstance(plan, dict) else None
    # exactly an int: JSON's true would pass as 1 (and 1.0 as 1) in a plain comparison
    unknown = type(version) is not int or version not in READABLE_VERSIONS
    if unknown or not isinstance(plan.get("scenarios"), list):
        shown = unknown and isinstance(version, (bool, int, float, str))
        got = f", not {json.dumps(version)}" if shown else ""
        raise InputError(f"{path}: field 'plan_version': expected a plan written by `autotune plan` "
                         f"(version {PLAN_VERSION}){got}", field="plan")
    for i, sc in enumerate(plan["scenarios"]):
        for key in ("ivp_path", "method", "machine_path", "n", "nodes", "threads", "run", "variants"):
            if key not in sc:
                raise InputError(f"{path}: field 'scenarios[{i}].{key}': required field is missing", field="plan")
        err = first_error(sc.get("partition"), dict(PARTITION, type=["string", "null"]))
        if err:
            raise InputError(f"{path}: field 'scenarios[{i}].partition': {err[1]}", field="plan")
    return plan


def run_plan(plan: dict, store, progress: Progress, jobs: int | None = None, launcher: str | None = None,
             only: Collection[int] | None = None, batch: dict[int, tuple[str, str | None]] | None = None,
             online: bool = False, recheck: int = 0) -> PlanRunResult:
    """Run every planned variant the store has no measurement of; report all of them (reused
    ones from the store).  A failing scenario or variant is reported and the rest go on.
    launcher: overrides the plan's; only: the scenario indices to run (a batch job runs one);
    batch: index -> (status, job id) of a submitted plan: its scenarios are never run here: a
    queued or running one is reported as pending, the others are collected from the store.
    online: each scenario runs one online solver of its variants (pipeline.online), once."""
    results, totals = [], PlanTotals(len(plan["scenarios"]))
    online = online and batch is None          # collecting a submitted plan runs nothing
    for i, entry in enumerate(plan["scenarios"]):
        if only is not None and i not in only:
            continue
        label = f"[{i + 1}/{len(plan['scenarios'])}] {entry.get('id', i)}"
        status, job = (batch or {}).get(i, (None, None))
        if status in ("queued", "running"):
            totals.pending += 1
            results.append(PlanScenarioRun(entry.get("id"), entry.get("selection"), None, None, status, job))
            continue
        if entry.get("kinds"):              # nodes of several kinds (pipeline.mixedplan)
            from autotune.pipeline.mixedplan import run_entry
            try:
                progress.say(label)
                res = run_entry(entry, store, progress, launcher, jobs, run_missing=batch is None)
            except (InputError, ToolError) as e:
                progress.say(f"{label}: failed: {e}")
                totals.scenario_errors += 1
                results.append(PlanScenarioRun(entry.get("id"), entry.get("selection"), str(e), None, status, job))
                continue
            totals.ran += sum(len(c.runs) - c.reused for c in res.configs)
            totals.reused += sum(c.reused for c in res.configs)
            totals.failed += sum(1 for c in res.configs if not c.runs)
            results.append(PlanScenarioRun(entry.get("id"), entry.get("selection"), None, res, status, job))
            continue
        try:
            ctl = entry.get("control")
            sc = Scenario(load_ivp(entry["ivp_path"]), load_method(entry.get("method_path") or entry["method"]),
                          load_machine(entry["machine_path"]), entry["n"], entry["nodes"], entry["threads"],
                          Control(ctl["rtol"], ctl["atol"]) if ctl else None)
            check_scenario(sc.ivp, sc.n, sc.nodes, sc.threads, sc.machine)
            variants, excluded = applicable_pool(sc)
            # as this version names them (a plan of a controlled scenario written before the step
            # control's dimensions names its variants without them: the paper's control)
            names = [_named(v["name"], sc) for v in entry["variants"]]
            ranked = rank_scenario(sc, variants, Rule("top", max(len(names), 1)), store, excluded, None, jobs)
            by_name = {r.variant.name: r.variant for r in ranked.ordered}
            missing = set(names) - set(by_name)
            if missing:
                raise InputError(f"variant {sorted(missing)[0]} cannot run in this scenario")
            chosen = [by_name[name] for name in names]     # the plan names them: its file's edge
            ranked.preselected = set(names)
            run = RunOptions(**dict(entry["run"], **({"launcher": launcher} if launcher else {})))
            rp = run.plan(run.h if run.h is not None else sc.ivp.default_step(sc.n), sc.machine.isa_flags)
            progress.say(label)
            if online:
                from autotune.pipeline.online import tune_online
                res = tune_online(ranked, chosen, rp, store, progress, recheck)
            else:
                res = tune(ranked, chosen, rp, store, progress, resume=True, run_missing=batch is None)
        except (InputError, ToolError) as e:
            progress.say(f"{label}: failed: {e}")
            totals.scenario_errors += 1
            results.append(PlanScenarioRun(entry.get("id"), entry.get("selection"), str(e), None, status, job))
            continue
        if online:
            totals.ran += sum(1 for c in res.candidates if c.stored)
            results.append(PlanScenarioRun(entry.get("id"), entry.get("selection"), None, res, status, job))
            continue
        rows = res.variants
        totals.ran += sum(1 for r in rows if not r.reused and r.measured_s is not None)
        totals.reused += sum(1 for r in rows if r.reused)
        totals.failed += sum(1 for r in rows if r.measured_s is None)
        results.append(PlanScenarioRun(entry.get("id"), entry.get("selection"), None, res, status, job))
    return PlanRunResult(plan.get("source"), results, totals)


def _named(name: str, sc: Scenario) -> str:
    """A plan's variant as this version names it in the scenario (unchanged where it cannot be
    read: the check that it runs there says why)."""
    try:
        return parse_variant(name, scenario_spaces(sc)).name
    except InputError:
        return name

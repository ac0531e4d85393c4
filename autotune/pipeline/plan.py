"""Plans for the empirical search: `autotune plan scenarios.yaml` pre-selects variants for a batch
of scenarios; `autotune tune --plan plan.json` runs them, skipping every variant whose
measurement the store already holds, and keeps going past failures (edge: files, store).

scenarios.yaml is a list of scenarios, or {defaults: {...}, scenarios: [...]}.  A scenario
names an IVP and may give n, nodes and threads (a value or a sweep such as 1:8:x2: it then
expands into one scenario per value), machine, method, the selection (top: K, within: PCT or
all: true) and how to run (steps, warmup, reps, flags, h, launcher, timeout).
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

from autotune.pipeline.batch import SweepSpec, scenarios as expand
from autotune.errors import InputError, ToolError
from autotune.pipeline.predict import Scenario, applicable_variants, check_scenario, rank_many, rank_scenario
from autotune.model.ranking import DEFAULT_WITHIN_PCT, Rule
from autotune.specs.loading import read_yaml, validate
from autotune.specs.ivp import load_ivp
from autotune.specs.machine import load_machine
from autotune.specs.method import load_method
from autotune.request.values import parse_values
from autotune.pipeline.tune import RunPlan, tune

PLAN_VERSION = 1
_SWEEPABLE = {"type": ["integer", "string"]}
_SCENARIO_FIELDS = {
    "ivp": {"type": "string"}, "n": _SWEEPABLE, "nodes": _SWEEPABLE, "threads": _SWEEPABLE,
    "machine": {"type": "string"}, "method": {"type": "string"},
    "top": {"type": "integer", "minimum": 1}, "within": {"type": "number", "minimum": 0},
    "all": {"type": "boolean"},
    "steps": {"type": "integer", "minimum": 1}, "warmup": {"type": "integer", "minimum": 0},
    "reps": {"type": "integer", "minimum": 1}, "flags": {"type": "string"},
    "h": {"type": "number", "exclusiveMinimum": 0}, "launcher": {"type": "string"},
    "timeout": {"type": "number", "exclusiveMinimum": 0},
}
SCENARIO_SCHEMA = {"type": "object", "required": ["ivp"], "additionalProperties": False,
                   "properties": _SCENARIO_FIELDS}
FILE_SCHEMA = {"type": "object", "required": ["scenarios"], "additionalProperties": False, "properties": {
    "defaults": {"type": "object", "additionalProperties": False,
                 "properties": {k: v for k, v in _SCENARIO_FIELDS.items() if k != "ivp"}},
    "scenarios": {"type": "array", "minItems": 1, "items": SCENARIO_SCHEMA}}}
RUN_DEFAULTS = {"steps": 10, "warmup": 2, "reps": 3, "flags": "-O3 -march=native -fopenmp", "h": None,
                "launcher": None, "timeout": 600.0}


def read_scenarios(path: Path) -> list[dict]:
    """The scenario entries of a scenarios file, defaults applied (InputError names the field)."""
    data = read_yaml(path)
    if isinstance(data, list):
        data = {"scenarios": data}
    validate(data, FILE_SCHEMA, path)
    out = []
    for i, entry in enumerate(data["scenarios"]):
        merged = dict(data.get("defaults") or {}, **entry)
        if sum(k in merged for k in ("top", "within", "all")) > 1:
            raise InputError(f"{path}: field 'scenarios.{i}': give one of top, within, all")
        if merged.get("warmup", RUN_DEFAULTS["warmup"]) >= merged.get("steps", RUN_DEFAULTS["steps"]):
            raise InputError(f"{path}: field 'scenarios.{i}.warmup': expected fewer warm-up steps than steps")
        out.append(merged)
    return out


def _rule(entry: dict) -> Rule:
    if entry.get("all"):
        return Rule("all")
    if "top" in entry:
        return Rule("top", entry["top"])
    return Rule("within", entry.get("within", DEFAULT_WITHIN_PCT))


def _values(entry: dict, key: str, where: str) -> list[int] | None:
    return None if key not in entry else parse_values(str(entry[key]), f"{where} {key}")


def make_plan(path: Path, store, progress=None, jobs: int | None = None) -> dict:
    entries = read_scenarios(path)
    out, skipped = [], []
    for i, entry in enumerate(entries):
        where = f"{path}: scenarios.{i}"
        spec = SweepSpec([entry["ivp"]], _values(entry, "n", where), _values(entry, "nodes", where),
                         _values(entry, "threads", where), entry.get("machine"), entry.get("method", "radauIIA7"))
        items, requested, skip = expand(spec)
        skipped += [dict(s, scenario=i) for s in skip]
        rule = _rule(entry)
        ranked = rank_many(items, rule, store, progress, jobs)
        run = {k: entry.get(k, v) for k, v in RUN_DEFAULTS.items()}
        for res, n_req in zip(ranked, requested):
            sc = res.scenario
            chosen = [r for r in res.ordered if r.prediction and r.variant.name in res.preselected]
            rest = [r for r in res.ordered if r.prediction and r.variant.name not in res.preselected]
            out.append({
                "id": f"{sc.ivp.name}/n={sc.n}/nodes={sc.nodes}/threads={sc.threads}/{sc.machine.name}",
                "ivp": sc.ivp.name, "ivp_path": sc.ivp.path, "method": sc.method.name, "machine": sc.machine.name,
                "machine_path": sc.machine.path, "n": sc.n, "n_requested": n_req, "nodes": sc.nodes,
                "threads": sc.threads,
                "selection": rule.describe(),
                "run": run,
                "variants": [{"name": r.variant.name, "predicted_s": r.prediction.total_s} for r in chosen],
                "not_selected": len(rest),
                "not_selected_predicted_cost_s": sum(r.prediction.total_s for r in rest) * run["steps"] * run["reps"],
            })
    if not out:
        raise InputError(f"{path}: no scenario can run: " + "; ".join(sorted({s['reason'] for s in skipped})[:3]))
    return {"plan_version": PLAN_VERSION, "source": str(path), "created": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
            "scenarios": out, "skipped": skipped}


def write_plan(plan: dict, target: Path) -> None:
    """Atomically: a plan half written is never read back."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(target.name + ".tmp")
        tmp.write_text(json.dumps(plan, indent=2) + "\n")
        os.replace(tmp, target)
    except OSError as e:
        raise InputError(f"--out {target}: cannot write ({e.strerror})") from None


def read_plan(path: Path) -> dict:
    try:
        plan = json.loads(path.read_text())
    except OSError as e:
        raise InputError(f"--plan {path}: cannot read ({e.strerror})") from None
    except json.JSONDecodeError as e:
        raise InputError(f"--plan {path}: not JSON (line {e.lineno}: {e.msg})") from None
    if not isinstance(plan, dict) or plan.get("plan_version") != PLAN_VERSION or not isinstance(
            plan.get("scenarios"), list):
        raise InputError(f"--plan {path}: field 'plan_version': expected a plan written by `autotune plan` "
                         f"(version {PLAN_VERSION})")
    for i, sc in enumerate(plan["scenarios"]):
        for key in ("ivp_path", "method", "machine_path", "n", "nodes", "threads", "run", "variants"):
            if key not in sc:
                raise InputError(f"--plan {path}: field 'scenarios.{i}.{key}': required field is missing")
    return plan


def run_plan(plan: dict, store, say, jobs: int | None = None) -> dict:
    """Run every planned variant the store has no measurement of; report all of them (reused
    ones from the store).  A failing scenario or variant is reported and the rest go on."""
    results, totals = [], {"scenarios": len(plan["scenarios"]), "ran": 0, "reused": 0, "failed": 0,
                           "scenario_errors": 0}
    for i, entry in enumerate(plan["scenarios"]):
        label = f"[{i + 1}/{len(plan['scenarios'])}] {entry.get('id', i)}"
        try:
            sc = Scenario(load_ivp(entry["ivp_path"]), load_method(entry["method"]),
                          load_machine(entry["machine_path"]), entry["n"], entry["nodes"], entry["threads"])
            check_scenario(sc.ivp, sc.n, sc.nodes, sc.threads, sc.machine)
            variants, excluded = applicable_variants(sc)
            names = [v["name"] for v in entry["variants"]]
            ranked = rank_scenario(sc, variants, Rule("top", max(len(names), 1)), store, excluded, None, jobs)
            missing = set(names) - {r.variant.name for r in ranked.ordered}
            if missing:
                raise InputError(f"variant {sorted(missing)[0]} cannot run in this scenario")
            ranked.preselected = set(names)
            run = dict(RUN_DEFAULTS, **entry["run"])
            rp = RunPlan.of(run["steps"], run["warmup"], run["reps"],
                            run["h"] if run["h"] is not None else sc.ivp.default_step(sc.n),
                            run["flags"], run["launcher"], run["timeout"])
            say(label)
            res = tune(ranked, names, rp, store, say, resume=True)
        except (InputError, ToolError) as e:
            say(f"{label}: failed: {e}")
            totals["scenario_errors"] += 1
            results.append({"id": entry.get("id"), "error": str(e), "variants": [], "summary": None})
            continue
        rows = res["variants"]
        totals["ran"] += sum(1 for r in rows if not r["reused"] and r["measured_s"] is not None)
        totals["reused"] += sum(1 for r in rows if r["reused"])
        totals["failed"] += sum(1 for r in rows if r["measured_s"] is None)
        results.append(dict(res, id=entry.get("id"), selection=entry.get("selection"), error=None))
    return {"plan": plan.get("source"), "scenarios": results, "totals": totals}

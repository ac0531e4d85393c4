"""tune --online and tune --ingest (docs/online.md): one solver carries the pre-selected few, its
trial picks one while it runs, and what the trial measured goes to the store as runs of each
candidate, marked online, under the keys tune files its own runs under (so calibrate
--from-runs, tune --resume and a plan's status count them).  A production run started outside
autotune writes the same JSON (AUTOTUNE_ONLINE_JSON); --ingest takes it in.

The edge is build_and_run and the store; what a record says (record_of, stored_rows, result_of)
is pure."""
from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

from autotune.codegen.online import MAX_CANDIDATES, OnlineSolver, meta_of, online_source, trial_steps
from autotune.model.race import CONFIDENCE, MARGIN_PCT, MAX_ROUNDS, t_quantile
from autotune.request.run import machine_flags
from autotune.errors import InputError
from autotune.progress import Progress
from autotune.pipeline.runners import LaunchRunner, run_key_of
from autotune.request.run import RunPlan
from autotune.results.online import OnlineCandidate, OnlineResult, OnlineSourceResult
from autotune.results.rank import RankResult
from autotune.results.variant import VariantResult
from autotune.specs.control import Control
from autotune.specs.variants import Variant
from autotune.storage.store import Store
from autotune.tools.toolchain import package_version

_TOP = ("n", "ranks", "threads", "steps", "online")
_META = ("ivp", "method", "machine", "flags", "candidates", "trials", "steps_by_candidate")


def online_solver(ivp, method, variants, n: int, machine, meta: dict, recheck: int = 0,
                  control: Control | None = None, uneven: bool = False) -> OnlineSolver:
    """codegen.online's source with the trial's race: model.race's confidence and margin, a t
    quantile for each round up to its most rounds; control: step-size control (specs.control);
    uneven: at the blocks AUTOTUNE_COUNTS gives."""
    quantiles = [t_quantile(CONFIDENCE, df) for df in range(1, MAX_ROUNDS + 1)]
    return online_source(ivp, method, variants, n, machine, meta, quantiles, MARGIN_PCT, recheck=recheck,
                         control=control, uneven=uneven)


def record_of(text: str, where: str) -> dict:
    """The online run's JSON line (the last line of text that is one), checked: what the store
    needs is there.  where: the file, for the message."""
    lines = [ln for ln in text.splitlines() if ln.startswith("{")]
    try:
        rec = json.loads(lines[-1]) if lines else None
    except json.JSONDecodeError as e:
        raise InputError(f"{where}: not JSON ({e.msg}, column {e.colno})", field="ingest") from None
    if not isinstance(rec, dict):
        raise InputError(f"{where}: expected the JSON line an online solver writes", field="ingest")
    missing = [k for k in _TOP if k not in rec] + [f"online.{k}" for k in _META
                                                    if not isinstance(rec.get("online"), dict) or k not in rec["online"]]
    if missing:
        raise InputError(f"{where}: field '{missing[0]}': required (the JSON an online solver writes, "
                         f"AUTOTUNE_ONLINE_JSON)", field="ingest")
    on = rec["online"]
    if not on["machine"]:
        raise InputError(f"{where}: field 'online.machine': the solver was generated without a machine; the "
                         f"store files runs by machine", field="ingest")
    names = on["candidates"]
    for t in on["trials"]:
        if [c.get("variant") for c in t.get("candidates", [])] != names:
            raise InputError(f"{where}: field 'online.trials': each trial lists the candidates in order",
                             field="ingest")
    return rec


def _candidates(rec: dict) -> list[OnlineCandidate]:
    on = rec["online"]
    predicted = on.get("predicted_s") or [None] * len(on["candidates"])
    out = []
    for i, name in enumerate(on["candidates"]):
        cand = OnlineCandidate(name, predicted[i], steps=on["steps_by_candidate"][i])
        for t in on["trials"]:
            c = t["candidates"][i]
            cand.steps_s += [s for s in c["steps_s"] if s is not None]
            cand.out, cand.out_after, cand.ratio = c.get("out"), c.get("out_after"), c.get("ratio")
        cand.trial_steps = len(cand.steps_s)
        cand.trial_s = statistics.median(cand.steps_s) if cand.steps_s else None
        cand.chosen = name == on.get("choice")
        if cand.trial_s and cand.predicted_s:
            cand.deviation_pct = 100.0 * (cand.predicted_s - cand.trial_s) / cand.trial_s
        out.append(cand)
    return out


def stored_rows(rec: dict, h: float | None, date: str) -> list[tuple[str, str, dict]]:
    """(store key, variant, row) of every candidate the trial timed: a run of it as tune stores
    one (runs_s: its timed trial steps, measured_s their median), marked online."""
    on = rec["online"]
    rows = []
    for c in _candidates(rec):
        if not c.steps_s:
            continue
        key = run_key_of(on["machine"], on["ivp"], on["method"], rec["n"], rec["ranks"], rec["threads"], c.name,
                         on["flags"], on.get("control"))
        rows.append((key, c.name, {
            "name": c.name, "predicted_s": c.predicted_s, "measured_s": c.trial_s, "runs_s": c.steps_s,
            "error": None, "online": True, "chosen": c.chosen, "out": c.out, "method": on["method"], "n": rec["n"],
            "nodes": rec["ranks"], "threads": rec["threads"], "steps": 1, "warmup": 0, "h": h,
            "flags": on["flags"], "kerncraft": package_version("kerncraft"), "date": date,
            "placement": rec.get("placement")}))
    return rows


def result_of(rec: dict, source: str, build_s: float | None = None, wall_s: float | None = None,
              log: list[str] | None = None) -> OnlineResult:
    on = rec["online"]
    cands = _candidates(rec)
    for c in cands:
        c.stored = bool(c.steps_s)
    first = on["trials"][0]["steps"] if on["trials"] else 0
    return OnlineResult(on["ivp"], on["method"], on["machine"], rec["n"], rec["ranks"], rec["threads"], rec["steps"],
                        list(on["flags"]), cands, on.get("choice"), on["trials"], first, rec.get("median_step_s"),
                        list(log or []), source, build_s, wall_s, on.get("recheck", 0), on.get("switches", 0),
                        dict(rec["control"], t=rec.get("t")) if rec.get("control") else None)


def _store(rec: dict, store: Store, h: float | None) -> int:
    rows = stored_rows(rec, h, time.strftime("%Y-%m-%d %H:%M:%S %Z"))
    for key, name, row in rows:
        store.put_run(key, rec["online"]["machine"], rec["online"]["ivp"], name, row["measured_s"], row)
    return len(rows)


def ingest(path: Path, store: Store, progress: Progress) -> OnlineResult:
    """tune --ingest FILE: an online run's JSON into the store."""
    try:
        text = Path(path).read_text()
    except OSError as e:
        raise InputError(f"{path}: {e.strerror}", field="ingest") from None
    rec = record_of(text, str(path))
    progress.say(f"{path}: {_store(rec, store, None)} candidates' trial runs stored")
    return result_of(rec, str(path))


def tune_online(ranked: RankResult, chosen: list[Variant], plan: RunPlan, store: Store, progress: Progress,
                recheck: int = 0) -> OnlineResult:
    """Build the online solver of the chosen variants (the model's order), run it once for the
    plan's steps, store its trial."""
    sc = ranked.scenario
    chosen = one_way(chosen, progress)
    if not 1 <= len(chosen) <= MAX_CANDIDATES:
        raise InputError(f"{len(chosen)} variants chosen: the online solver carries 1 to {MAX_CANDIDATES} "
                         f"(give --top K or fewer --variants)", field="online")
    by_name = {r.variant.name: r for r in ranked.ordered}
    predicted = [by_name[v.name].prediction.total_s if by_name[v.name].prediction else None for v in chosen]
    meta = meta_of(sc.ivp, sc.method, sc.machine, plan.flags, predicted, sc.control)
    src = online_solver(sc.ivp, sc.method, chosen, sc.n, sc.machine, meta, recheck=recheck, control=sc.control)
    runner = LaunchRunner(sc, plan, store, progress)
    runner.check([v.name for v in chosen])
    progress.say(f"online solver of {len(chosen)} variants: build ({src.parts} parts)")
    from autotune.tools import build as buildmod
    t0 = time.perf_counter()
    exe = buildmod.build(src.source, plan.flags, buildmod.find_mpicc(), parts=src.parts)
    build_s = time.perf_counter() - t0
    progress.say(f"online solver: run {plan.steps} steps, a trial of at most {trial_steps(plan.steps, len(chosen))} "
        f"steps first" + (f", again every {recheck}" if recheck else ""))
    t0 = time.perf_counter()
    out = buildmod.run(exe, plan.launcher, sc.nodes, sc.threads, sc.n, sc.ivp.size_value(sc.n), plan.steps, plan.h,
                       plan.warmup, timeout=plan.timeout, pin=sc.ranks_per_node == 1,
                       nodes=sc.nodes // sc.ranks_per_node)
    wall_s = time.perf_counter() - t0
    for line in out.get("log", []):
        progress.say(line)
    rec = record_of(json.dumps(out), "the online solver's result")
    progress.say(f"{_store(rec, store, plan.h)} candidates' trial runs stored, marked online")
    return result_of(rec, "run", build_s, wall_s, out.get("log"))


def chosen_of(ranked: RankResult, progress: Progress) -> list[VariantResult]:
    """The pre-selected variants' rankings in the model's order, those that store the IVP as the
    first does (one_way), at most MAX_CANDIDATES (the rest said)."""
    chosen = [r for r in ranked.ordered if r.variant.name in ranked.preselected and r.prediction]
    kept = {v.name for v in one_way([r.variant for r in chosen], progress)}
    chosen = [r for r in chosen if r.variant.name in kept]
    if len(chosen) > MAX_CANDIDATES:
        progress.say(f"{len(chosen)} variants pre-selected: the online solver carries the first {MAX_CANDIDATES}")
    return chosen[:MAX_CANDIDATES]


def one_way(variants: list[Variant], progress: Progress) -> list[Variant]:
    """The variants that store the IVP as the first does (Variant.stored_as; the others
    said): one solver holds its vector one way, and its driver gives every candidate the same."""
    way = variants[0].stored_as if variants else ()
    kept = [v for v in variants if v.stored_as == way]
    if len(kept) < len(variants):
        progress.say(f"the online solver holds the IVP's vector as {variants[0].name} stores it: "
                     f"{len(variants) - len(kept)} variants that store it otherwise are left out")
    return kept


def generate_online(ranked: RankResult, out: Path, progress: Progress, recheck: int = 0) -> OnlineSourceResult:
    """generate --online: the online solver of the pre-selection, written to out/online.c, with
    the commands that build it (the machine's flags) in out/online.json."""
    from autotune.storage.atomic import make_folder, write_json, write_text
    sc = ranked.scenario
    chosen = chosen_of(ranked, progress)
    flags = machine_flags(sc.machine.isa_flags).split()
    predicted = [r.prediction.total_s for r in chosen]
    src = online_solver(sc.ivp, sc.method, [r.variant for r in chosen], sc.n, sc.machine,
                        meta_of(sc.ivp, sc.method, sc.machine, flags, predicted, sc.control), recheck=recheck,
                        control=sc.control)
    make_folder(out, "out")
    path = Path(out) / "online.c"
    build = [f"mpicc {' '.join(flags)} -DAUTOTUNE_PART={k} -c online.c -o online.{k}.o" for k in range(src.parts)]
    build.append(f"mpicc {' '.join(flags)} " + " ".join(f"online.{k}.o" for k in range(src.parts)) + " -o online -lm")
    res = OnlineSourceResult(sc.ivp.name, sc.method.name, sc.machine.name, sc.n, sc.nodes, sc.threads, str(path),
                             [{"name": r.variant.name, "predicted_s": t} for r, t in zip(chosen, predicted)], src.parts, build,
                             flags, recheck, max(0, len(ranked.preselected) - len(chosen)), sc.machine.sha256 or None)
    write_text(path, src.source, "out")
    write_json(Path(out) / "online.json", res.to_dict(), "out")
    return res

"""tune --online over a mixed allocation: one online solver of the chosen variants, built for
uneven blocks, run once across the kinds at one split (the given one, else the model's for the
best-ranked candidate), its trial racing the candidates there (docs/online.md)."""
from __future__ import annotations

import json
import time

from autotune.codegen.online import MAX_CANDIDATES, meta_of
from autotune.errors import InputError
from autotune.model.preselect import Rule
from autotune.pipeline.mixed import rank_mixed
from autotune.pipeline.mixedtune import _chosen, _flags, mixed_machine
from autotune.pipeline.online import one_way, online_solver, record_of, result_of
from autotune.progress import SILENT, Progress
from autotune.request.run import RunOptions
from autotune.results.online import OnlineResult
from autotune.specs.mixed import MixedScenario
from autotune.storage.store import Store


def tune_online_mixed(msc: MixedScenario, rule: Rule, run: RunOptions, store: Store, progress: Progress = SILENT,
                      named: list[str] | None = None, jobs: int | None = None) -> OnlineResult:
    """Build the online solver of the chosen variants (the model's order) for uneven blocks and
    run it once at one split; its trial is reported, not stored (a mixed allocation's runs are
    stored per split by tune without --online)."""
    from autotune.tools import build as buildmod
    from autotune.tools.launcher import mpmd_argv
    from autotune.tools.mixedrun import run_split
    flags = _flags(msc, run)
    plan = run.plan(run.h if run.h is not None else msc.ivp.default_step(msc.n))
    groups = [(k.nodes, k.threads) for k in msc.kinds]
    mpmd_argv(plan.launcher, groups, [])
    ranking = rank_mixed(msc, rule, store, progress, jobs)
    rows = [r for r in _chosen(ranking, named) if r.split is not None]
    kept = {v.name for v in one_way([r.variant for r in rows], progress)}
    rows = [r for r in rows if r.variant.name in kept][:MAX_CANDIDATES]
    if not rows:
        raise InputError(": no chosen variant can be predicted here", field="online")
    split = msc.given or tuple(rows[0].split)
    progress.say(f"online solver of {len(rows)} variants at the split {','.join(map(str, split))}"
                 + ("" if msc.given else f" (the model's for {rows[0].variant.name})"))
    meta = dict(meta_of(msc.ivp, msc.method, msc.kinds[0].machine, flags, [r.step_s for r in rows], msc.control),
                machine=mixed_machine(msc))
    src = online_solver(msc.ivp, msc.method, [r.variant for r in rows], msc.n, msc.kinds[0].machine, meta,
                        recheck=run.recheck, control=msc.control, uneven=True)
    t0 = time.perf_counter()
    exe = buildmod.build(src.source, flags, buildmod.find_mpicc(), parts=src.parts)
    build_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    out = run_split(exe, plan.launcher, groups, split, msc.n, msc.ivp.size_value(msc.n), plan.steps, plan.h,
                    plan.warmup, plan.timeout)
    wall_s = time.perf_counter() - t0
    for line in out.get("log", []):
        progress.say(line)
    return result_of(record_of(json.dumps(out), "the online solver's result"), "run", build_s, wall_s, out.get("log"))

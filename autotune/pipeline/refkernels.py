"""calibrate --node, its last step: the reference kernels settle how the machine file just
written composes transfers and at what rate each cache level moves them.  Orchestration only:
the file's measurements and the fit are model/refkernels.py's, kerncraft's analyses
tools/refkernels_ecm.py's.  The file is edited in place (each cache level's `transfers overlap`
and `upstream throughput`, `provenance.transfers` and `.assumed`) and loaded back."""
from __future__ import annotations

import time
from pathlib import Path

from autotune.progress import Progress
from autotune.errors import ToolError
from autotune.model import reffit as rf
from autotune.model import refkernels as rk
from autotune.model import refreport as rr
from autotune.storage.atomic import write_text
from autotune.storage.yamlfile import dump_text, round_trip_yaml


def settle_transfers(target: Path, progress: Progress, jobs: int | None = None) -> dict:
    """Analyse the streaming kernels against the machine file at `target`, price them with their
    measured in-core time as rank would, fit each cache level's transfer rate under every
    composition rule kerncraft accepts, keep the rule and rates that predict what the file's
    benchmark measured on one core best, and write them into the file; return the summary
    (model.refkernels.summary), {} where the file holds no one-thread measurement."""
    from autotune.specs.machine import load_machine
    from autotune.tools import refkernels_ecm
    t0 = time.perf_counter()
    yaml = round_trip_yaml()
    with open(target) as f:
        data = yaml.load(f)
    measured = rk.one_thread(data)
    if not measured:
        return {}
    as_written = rk.rule_of(data)
    kernels = rk.reference_kernels(data)
    try:
        analyses, _ = refkernels_ecm.analyse(target, {lv: m["working_set"] for lv, m in measured.items()}, jobs,
                                             kernels)
    except ToolError as e:
        progress.say(f"warning: the reference kernels could not be analysed ({e}); transfers as the design states")
        analyses = {}
    for line in rk.disagreements(analyses, as_written):
        progress.say(f"warning: kerncraft composes otherwise than assumed: {line}")
    clock = rk.clock_hz(data)
    refs = rk.references(analyses, measured, clock, rk.line_bytes(data), kernels, rk.every_core(data))
    when, tolerance = rf.incore_policy(data)
    fit = rf.fit_model(refs, as_written, rf.design_rates(data), when, incore_tolerance=tolerance)
    rk.with_rule(data, fit.rule)
    rf.with_rates(data, fit.fitted_rates())
    prov = data.setdefault("provenance", {})
    assumed, design = rr.assumed_after(str(prov.get("assumed", "")), fit)
    if prov.get("assumed"):
        prov["assumed"] = assumed
    prov["transfers"] = rr.provenance(fit, design)
    write_text(target, dump_text(yaml, data), "out")
    load_machine(str(target))   # the edited file must load like any other
    res = rr.summary(fit, refs, clock, time.perf_counter() - t0)
    progress.say(f"transfers: {fit.rule.short}, rates {rr.describe_rates(fit.rates)} ({res['compared']} reference "
             f"kernel-levels; mean |log(pred/meas)| {rr.err_text(fit.as_designed)} as designed, "
             f"{rr.err_text(fit.error)} fitted) in {res['wall_s']:.1f} s")
    return res

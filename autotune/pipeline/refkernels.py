"""calibrate --node, its last step: the reference kernels settle how the machine file just
written composes transfers.  Orchestration only: the file's measurements and the choice are
model/refkernels.py's, kerncraft's analyses tools/refkernels_ecm.py's.  The file is edited in
place (each cache level's `transfers overlap`, `provenance.transfers`) and loaded back."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Callable

from autotune.errors import ToolError
from autotune.model import refkernels as rk
from autotune.storage.atomic import write_text
from autotune.storage.yamlfile import dump_text, round_trip_yaml


def settle_transfers(target: Path, progress: Callable[[str], None], jobs: int | None = None) -> dict:
    """Analyse the streaming kernels against the machine file at `target` in every composition
    rule kerncraft accepts, keep the rule that predicts what the file's benchmark measured on one
    core best, and write it into the file; return the summary (model.refkernels.summary), {} where
    the file holds no one-thread measurement."""
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
    try:
        analyses, _ = refkernels_ecm.analyse(target, {lv: m["working_set"] for lv, m in measured.items()}, jobs)
    except ToolError as e:
        progress(f"warning: the reference kernels could not be analysed ({e}); transfers as the design states")
        analyses = {}
    for line in rk.disagreements(analyses, as_written):
        progress(f"warning: kerncraft composes otherwise than assumed: {line}")
    clock = rk.clock_hz(data)
    refs = rk.references(analyses, measured, clock, rk.line_bytes(data))
    choice = rk.choose(refs, as_written)
    rk.with_rule(data, choice.rule)
    data.setdefault("provenance", {})["transfers"] = rk.provenance(choice)
    write_text(target, dump_text(yaml, data), "out")
    load_machine(str(target))   # the edited file must load like any other
    res = rk.summary(choice, refs, clock, time.perf_counter() - t0)
    errs = "; ".join(f"{name} {e:.3f}" if e is not None else f"{name} n/a" for name, e in res["errors"].items())
    progress(f"transfers: {choice.rule.short} ({res['compared']} reference kernel-levels; mean "
             f"|log(pred/meas)|: {errs}) in {res['wall_s']:.1f} s")
    return res

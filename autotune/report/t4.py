"""A tune as Kernel Tuner's T4 results (the Open Autotuning Results Schema, version 1.0.0), so
that tools which read Kernel Tuner's output read autotune's: one result per variant run, its
configuration the variant's dimension values, its runtimes the seconds per step of each
repetition, its measurements the measured and predicted seconds per step and their deviation
(docs/usage.md#output-formats).  A variant that failed is marked by where it failed."""
from __future__ import annotations

import json
from datetime import datetime, timezone

from autotune.report.registry import renderer
from autotune.results.frames import configuration
from autotune.results.tune import TuneResult, TuneRow

T4_VERSION = "1.0.0"


def _invalidity(row: TuneRow) -> str:
    """T4's invalidity: correct, or where the variant failed (compile, timeout, runtime)."""
    if row.measured_s is not None:
        return "correct"
    error = (row.error or "").lower()
    if "compil" in error or "build" in error:
        return "compile"
    return "timeout" if "timed out" in error or "timeout" in error else "runtime"


def _result(row: TuneRow, when: str) -> dict:
    measurements = [{"name": "time", "value": row.measured_s, "unit": "s"}] if row.measured_s is not None else []
    if row.predicted_s is not None:
        measurements.append({"name": "predicted_time", "value": row.predicted_s, "unit": "s"})
    if row.deviation_pct is not None:
        measurements.append({"name": "deviation", "value": row.deviation_pct, "unit": "%"})
    return {"timestamp": when, "configuration": configuration(row.name), "objectives": ["time"],
            "times": {"runtimes": list(row.runs_s)}, "invalidity": _invalidity(row),
            "correctness": 1 if row.measured_s is not None else 0, "measurements": measurements}


def t4_document(result: TuneResult, now: datetime | None = None) -> dict:
    when = (now or datetime.now(timezone.utc)).isoformat(timespec="seconds")
    return {"schema_version": T4_VERSION, "results": [_result(row, when) for row in result.variants]}


@renderer(TuneResult, "t4")
def tune_t4(result: TuneResult) -> str:
    return json.dumps(t4_document(result), indent=2)

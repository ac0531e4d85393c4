"""tune's rows at the store's edge: the JSON a variant's measurement is stored as, the JSON of the
repetitions of an unfinished one (its partial record), and both read back.

The JSON is the one tune has always stored: a run is its row's fields (STORED, in that order; an
empty list, a race it did not leave and, without a measurement, the phases and the state are left
out), then the run's (RUN); an online trial's runs (pipeline.online) carry ONLINE beside them.
Every field a stored run has ever held is one of these, so reading one back, any other field is
an error (a store written by a newer autotune, or a damaged one), not dropped.
"""
from __future__ import annotations

from autotune.errors import InputError
from autotune.results.tune import TuneRow

STORED = ("name", "predicted_s", "measured_s", "runs_s", "error", "preselected", "sampled", "baseline", "reused",
          "runs_round", "runs_state", "noisy_runs_s", "race", "phases", "predicted_state_s", "deviation_state_pct",
          "state", "state_factor", "runs_steal_pct", "runs_wall_over_cpu")
_LISTS = ("runs_round", "runs_state", "noisy_runs_s", "runs_steal_pct", "runs_wall_over_cpu")   # left out when empty
_MEASURED = ("phases", "predicted_state_s", "deviation_state_pct", "state", "state_factor")   # only when measured
RUN = ("method", "model", "n", "nodes", "threads", "steps", "warmup", "h", "flags", "compiler", "kerncraft", "date",
       "placement")
ONLINE = ("online", "chosen", "out")
PARTIAL = ("runs_s", "phase_runs", "runs_state", "runs_steal_pct", "runs_wall_over_cpu")


def stored_record(row: TuneRow, run: dict) -> dict:
    """The JSON of a finished variant (measured or failed): its row's fields, then the run's
    (run: RUN's fields: the scenario, run length, build, date and placement)."""
    extra = [k for k in run if k not in RUN]
    if extra:
        raise ValueError(f"stored run of {row.name}: '{extra[0]}' is not a field of a run")
    rec = {}
    for k in STORED:
        v = getattr(row, k)
        if not ((k in _LISTS and not v) or (k == "race" and v is None) or (k in _MEASURED and row.measured_s is None)):
            rec[k] = v
    return dict(rec, **run)


def row_of_stored(rec: dict, where: str) -> tuple[TuneRow, dict]:
    """A stored run read back: its row, and the run's fields (RUN, ONLINE).  A field neither the
    row's nor the run's is an InputError (where: the run, for the message)."""
    run = {k: rec[k] for k in RUN + ONLINE if k in rec}
    return TuneRow.of({k: v for k, v in rec.items() if k not in run}, where), run


def partial_record(row: TuneRow, phase_runs: dict[str, list[float]]) -> dict:
    """The JSON of an unfinished variant's repetitions so far (seconds per step, per phase, and the
    state of each)."""
    return {"runs_s": row.runs_s, "phase_runs": phase_runs, "runs_state": row.runs_state,
            "runs_steal_pct": row.runs_steal_pct, "runs_wall_over_cpu": row.runs_wall_over_cpu}


def partial_of(rec: dict, where: str) -> tuple[list[float], dict[str, list[float]], list, list, list]:
    """A partial record read back: (runs_s, phase_runs, and one per run: runs_state, runs_steal_pct,
    runs_wall_over_cpu, None where a record from before they were measured has none)."""
    unknown = [k for k in rec if k not in PARTIAL]
    if unknown:
        raise InputError(f"{where}: field '{unknown[0]}': not a field of unfinished repetitions "
                         f"(its fields: {', '.join(PARTIAL)})")
    runs = rec["runs_s"]
    per_run = [(rec.get(k) or [None] * len(runs))[:len(runs)] for k in ("runs_state", "runs_steal_pct",
                                                                          "runs_wall_over_cpu")]
    return (runs, rec["phase_runs"], *per_run)

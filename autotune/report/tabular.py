"""CSV of the results whose rows are their frame: one row per kernel part (explain), per fitted
segment (calibrate), per bandwidth (calibrate --node), per variant written (generate), per
candidate (generate --online), per planned run (plan).  Every report has a csv form; these
have no columns of their own beyond the frame's (docs/usage.md#output-formats)."""
from __future__ import annotations

from autotune.report.registry import renderer
from autotune.results.calibrate import CalibrateResult, HostMachineResult
from autotune.results.generate import GenerateResult
from autotune.results.online import OnlineSourceResult
from autotune.results.plan import PlanResult
from autotune.results.rank import ExplainResult

FRAME_CSV = (ExplainResult, CalibrateResult, HostMachineResult, GenerateResult, OnlineSourceResult, PlanResult)


def frame_csv(result) -> str:
    """The result's frame (its to_frame()) as CSV, a header and one line per row."""
    return result.to_frame().to_csv(index=False, lineterminator="\n")


for _type in FRAME_CSV:
    renderer(_type, "csv")(frame_csv)

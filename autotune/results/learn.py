"""The result of `calibrate --from-runs`: the fitted parameters against the benchmarked ones, and
how well the fit predicts runs it never saw."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from autotune.results.frames import frame
from autotune.results.registry import result_type


@dataclass
class ParameterRow:
    name: str                 # RHS/core, LC/L2-L3, LC/L3-MEM:copy, ...
    benchmarked: float        # the factor the ECM model alone uses (1)
    fitted: float
    observations: int         # phase measurements whose predicted time moves with it (at the fit)


@dataclass
class FoldRow:
    """One cross-validation fold (runs the fit did not see), or one held-out scenario."""
    label: str
    runs: int
    fitted_on: int            # scenarios the fit of this fold used
    median_abs_dev_before_pct: float | None    # of the step time, ECM alone
    median_abs_dev_after_pct: float | None     # with the fold's learned factors
    spearman_before: float | None
    spearman_after: float | None
    top1_loss_before_pct: float | None
    top1_loss_after_pct: float | None


FOLD_COLUMNS = [f for f in FoldRow.__dataclass_fields__]


@result_type
@dataclass
class LearnResult:
    machine: str
    machine_file: str          # where the factors were written ("" for a dry run)
    runs: int
    scenarios: int
    skipped: int               # stored runs that could not be priced again (an IVP, method or variant no longer known)
    folds: str                 # what a cross-validation fold leaves out: scenario, size or ivp
    parameters: list[ParameterRow]
    residual_before_pct: float | None   # median |measured / predicted - 1| of the fitted phases
    residual_after_pct: float | None
    cross_validation: list[FoldRow]
    held_out: list[FoldRow]    # IVPs left out of every fit, predicted by the fit of all the others
    pooled: dict = field(default_factory=dict)
    # what the factors still fit: the step time's median |deviation| of the runs fitted on, with the
    # node model alone and with the factors, and the factors furthest from 1 (pipeline.learn.left_to_fit)
    left_to_fit: dict = field(default_factory=dict)
    kerncraft: str = ""
    dry_run: bool = False

    def to_dict(self) -> dict:
        return asdict(self)

    def rows(self) -> list[dict]:
        """One row per cross-validation fold and held-out scenario (kind: cv or held-out)."""
        return ([dict(asdict(r), kind="cv") for r in self.cross_validation]
                + [dict(asdict(r), kind="held-out") for r in self.held_out])

    def to_frame(self):
        return frame(self.rows(), ["kind"] + FOLD_COLUMNS)

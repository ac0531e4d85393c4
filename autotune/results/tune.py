"""Results of empirical runs: tune (one scenario) and tune --plan (a batch)."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields

from autotune.errors import InputError
from autotune.results.frames import DIMENSION_KEYS, RunScenario, configuration, frame, scenario_head
from autotune.results.registry import result_type

ROW_COLUMNS = ["ivp", "machine", "n", "nodes", "threads", "name", *DIMENSION_KEYS, "predicted_s", "measured_s", "deviation_pct",
               "predicted_state_s", "deviation_state_pct",
               "rank_predicted", "rank_measured", "preselected", "sampled", "baseline", "error"]


@dataclass
class TuneRow:
    """One variant: predicted and measured seconds per step (median of the runs).  tune's selection
    makes it, its measurement, rounds and summary fill it in (pipeline.tune)."""
    name: str
    predicted_s: float | None = None       # None: no prediction
    measured_s: float | None = None        # None: it failed (see error)
    runs_s: list[float] = field(default_factory=list)
    error: str | None = None
    preselected: bool = False
    sampled: bool = False                  # drawn at random to check the pre-selection (--sample)
    baseline: bool = False                 # one of the paper's forms, run as the baseline (--baseline)
    reused: bool = False                   # measured before (from the store)
    phases: dict | None = None             # phase -> {predicted_s, measured_s}
    measured_on: str | None = None
    deviation_pct: float | None = None
    rank_predicted: int | None = None
    rank_measured: int | None = None
    runs_round: list[int] = field(default_factory=list)     # the round of each of runs_s
    runs_state: list = field(default_factory=list)          # the state each ran in ({bandwidth_Bps, clock_hz})
    noisy_runs_s: list[float] = field(default_factory=list)  # runs of noisy rounds, set aside
    runs_steal_pct: list = field(default_factory=list)       # per run: the host's steal share (None: not measured)
    runs_wall_over_cpu: list = field(default_factory=list)   # per run: its cores' wall time over their CPU time
    race: dict | None = None               # racing: the verdict it left the race on (None: it stayed)
    state: dict | None = None              # the median state of its runs, beside the file's
    predicted_state_s: float | None = None     # the prediction priced again at that state
    deviation_state_pct: float | None = None   # the state-adjusted deviation
    state_factor: dict | None = None       # {total, phases}: the file's prediction over the state's
    control: dict | None = None            # step-size control: its runs' accepted and rejected steps, the
                                           # rejected per accepted one, seconds per unit of simulated time

    @classmethod
    def of(cls, d: dict, where: str = "tune row") -> "TuneRow":
        """The row of its fields read back (a tune's JSON, the store): a field left out takes its
        default; one a row does not have is an InputError (where: what d is, for the message)."""
        names = [f.name for f in fields(cls)]
        unknown = [k for k in d if k not in names]
        if unknown or "name" not in d:
            why = f"field '{unknown[0]}': not a field of a tune row" if unknown else "field 'name': required"
            raise InputError(f"{where}: {why} (its fields: {', '.join(names)})")
        return cls(**d)


@dataclass
class TuneCheck:
    """The pre-selection against a random sample of the variants it left out (model.check)."""
    seed: int
    sampled: int                           # variants drawn (fewer than asked when few were left)
    pool: int                              # variants with a prediction: an exhaustive search's runs
    preselected: int
    preselected_best: dict | None          # {name, measured_s}; None: none was measured
    sample_best: dict | None
    sample_beats_preselected: bool | None  # None: one side has no measurement
    sample_gain_pct: float | None          # how much faster the sample's best is, % of the pre-selected best
    held_margin_pct: float                 # a gain up to this still counts as held
    runs_saved_pct: float | None           # 100 * (1 - preselected / pool)
    verdict: str
    sample_gain_interval_pct: list[float] | None = None   # the gain's bootstrap interval (model.confidence)


@dataclass
class TuneSummary:
    measured: int
    failed: int
    spearman: float | None
    kendall: float | None
    top1_loss_pct: float | None
    deviation_pct_range: list[float] | None
    phase_ratio: dict
    top1_loss_worst_pct: float | None = None
    median_abs_deviation_pct: float | None = None
    predicted_best_tied: list[str] = field(default_factory=list)
    predicted_best: str | None = None
    measured_best: str | None = None
    skipped: int = 0                       # variants not run (not pre-selected)
    skipped_predicted_cost_s: float = 0.0  # their predicted run time
    bound_s: float | None = None           # the scenario's floor (model.bound)
    best_over_bound: float | None = None   # measured best / bound_s (below 1: a bug to find)
    bound_wa_s: float | None = None        # the floor with write-allocate (stores through the caches)
    best_paper_form: str | None = None     # the measured best of the paper's forms in this run
    best_over_paper_form: float | None = None   # measured best / that variant's measured time
    check: TuneCheck | None = None         # tune --sample: the pre-selection checked
    state: dict | None = None              # the run's measured state (median of its runs) and the file's
    median_abs_deviation_state_pct: float | None = None   # deviations at each variant's own state
    deviation_state_pct_range: list[float] | None = None
    bound_state_s: float | None = None     # the floor at the run's measured bandwidth and clock
    best_over_bound_state: float | None = None
    probe_cost_pct: float | None = None    # the reference kernels' share of the tune's wall time
    noisy_rounds: int = 0                  # rounds whose reference kernels strayed
    retaken_rounds: int = 0                # of those, taken again
    steal: dict | None = None              # the runs' steal shares (median, max, runs), where measured
    race: dict | None = None               # reps auto: how the race went (model.race)
    intervals: dict | None = None          # bootstrap intervals of the figures (model.confidence)


@result_type
@dataclass
class TuneResult(RunScenario):
    steps: int
    warmup: int
    reps: int
    h: float
    flags: list[str]
    selection: str
    variants: list[TuneRow]
    summary: TuneSummary
    model: str = "ecm"                     # what the predictions rest on (RankResult.model)
    design: str = "fixed"                  # fixed repetitions, or auto (raced; reps: the most rounds)
    machine_sha256: str | None = None      # of the machine file's text (the JSON document's meta)

    def to_dict(self) -> dict:
        d = asdict(self)
        for row in d["variants"]:
            row["configuration"] = configuration(row["name"])
        return d

    @property
    def measured_any(self) -> bool:
        """Whether some variant ran and was timed (the command line's exit status 0; 1 without)."""
        return any(v.measured_s is not None for v in self.variants)

    def to_frame(self):
        """One row per variant run."""
        return frame([dict(scenario_head(self), **asdict(v), **configuration(v.name)) for v in self.variants],
                     ROW_COLUMNS)


@dataclass
class PlanScenarioRun:
    id: str | None
    selection: str | None
    error: str | None
    result: TuneResult | None              # None: the scenario failed (see error) or its job is pending;
                                           # an OnlineResult where the plan ran online (tune --plan --online)
    status: str | None = None              # of a submitted plan: done, queued, running, failed, ...
    job: str | None = None                 # its latest batch job

    def to_dict(self) -> dict:
        batch = {"status": self.status, "job": self.job} if self.status else {}
        if self.result is None:
            return {"id": self.id, "error": self.error, "variants": [], "summary": None, **batch}
        return dict(self.result.to_dict(), id=self.id, selection=self.selection, error=None, **batch)


@dataclass
class PlanTotals:
    scenarios: int
    ran: int = 0
    reused: int = 0
    failed: int = 0
    scenario_errors: int = 0
    pending: int = 0                       # scenarios whose batch job is queued or running


@result_type
@dataclass
class PlanRunResult:
    plan: str | None
    scenarios: list[PlanScenarioRun]
    totals: PlanTotals

    def to_dict(self) -> dict:
        return {"plan": self.plan, "scenarios": [s.to_dict() for s in self.scenarios], "totals": asdict(self.totals)}

    def to_frame(self):
        """One row per variant of every scenario that ran."""
        import pandas as pd

        frames = [s.result.to_frame().assign(scenario=s.id) for s in self.scenarios if s.result]
        return pd.concat(frames, ignore_index=True) if frames else frame([], ROW_COLUMNS + ["scenario"])

"""Results of an online run: the solver that carried the pre-selected few and picked one while it
ran (tune --online), or such a run's JSON taken into the store (tune --ingest)."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from autotune.results.frames import DIMENSION_KEYS, SCENARIO_COLUMNS, RunScenario, configuration, frame, scenario_head
from autotune.results.registry import result_type

CANDIDATE_COLUMNS = [*SCENARIO_COLUMNS, "name", *DIMENSION_KEYS, "predicted_s", "trial_s", "deviation_pct", "trial_steps", "out",
                     "out_after", "ratio", "chosen", "stored"]


@dataclass
class OnlineCandidate:
    """One variant the solver carried: its trial steps (the slowest rank's seconds each)."""
    name: str
    predicted_s: float | None
    trial_s: float | None = None          # the median of its timed trial steps (None: it ran none)
    steps_s: list[float] = field(default_factory=list)
    trial_steps: int = 0                   # its timed trial steps, over every trial
    steps: int = 0                         # every step it ran
    out: str | None = None                 # why it left the (last) trial: None, it stayed
    out_after: int | None = None           # after which timed round
    ratio: float | None = None             # its time over the leader's in the (last) trial
    chosen: bool = False
    deviation_pct: float | None = None     # (predicted - trial) / trial
    stored: bool = False                   # its trial went to the store as a run of it


@result_type
@dataclass
class OnlineResult(RunScenario):
    steps: int
    flags: list[str]
    candidates: list[OnlineCandidate]
    choice: str
    trials: list[dict]                     # as the solver wrote them: step, steps, rounds, choice, why
    trial_steps: int                       # the steps of the first trial
    median_step_s: float | None            # the run's median step
    log: list[str] = field(default_factory=list)     # the solver's trial and choice lines
    source: str = "run"                    # "run" (tune --online), or the file tune --ingest read
    build_s: float | None = None           # seconds to build the online solver (None: not built here)
    wall_s: float | None = None            # seconds of the run, launch to exit
    recheck: int = 0
    switches: int = 0
    control: dict | None = None            # step-size control: the run's steps as the solver reported them

    def to_dict(self) -> dict:
        d = _configured(asdict(self))
        if self.control is None:           # a fixed step's JSON is as it was
            d.pop("control")
        return d

    @property
    def measured_any(self) -> bool:
        """Whether the run timed a step (the command line's exit status 0; 1 without)."""
        return self.median_step_s is not None or any(c.trial_s is not None for c in self.candidates)

    def to_frame(self):
        """One row per candidate."""
        return frame([dict(scenario_head(self), **asdict(c), **configuration(c.name)) for c in self.candidates],
                     CANDIDATE_COLUMNS)


@result_type
@dataclass
class OnlineSourceResult(RunScenario):
    """generate --online: the online solver's source, its candidates and how to build it."""
    source: str                            # the C file written
    candidates: list[dict]                 # {name, predicted_s}, in the model's order
    parts: int
    build: list[str]                       # the commands that build it
    flags: list[str]
    recheck: int = 0
    left_out: int = 0                      # pre-selected beyond the most one solver carries
    machine_sha256: str | None = None      # of the machine file's text (the JSON document's meta)

    def to_dict(self) -> dict:
        return _configured(asdict(self))

    def to_frame(self):
        return frame([dict(scenario_head(self), **c, **configuration(c["name"])) for c in self.candidates],
                     [*SCENARIO_COLUMNS, "name", *DIMENSION_KEYS, "predicted_s"])


def _configured(d: dict) -> dict:
    """A result's dict with each candidate's configuration (every dimension's value)."""
    for c in d["candidates"]:
        c["configuration"] = configuration(c["name"])
    return d

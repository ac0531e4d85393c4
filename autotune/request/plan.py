"""Requests of the batch commands: `plan` (a scenarios file pre-selected into a plan) and `tune
--plan` (a plan run here, one scenario of it run by a batch job, submitted, or its jobs'
status), and which of tune's three forms a set of tune options asks for.  Every rule between
their options is checked here, once, for every front end."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from autotune.errors import InputError
from autotune.request.keywords import Keywords

SUBMIT_ONLY = ("partition", "account", "time", "sbatch_args", "setup", "shared_nodes")   # the batch system's options


@dataclass(frozen=True)
class PlanRequest(Keywords):
    """plan: the scenarios file (YAML) to pre-select, and the plan file to write."""
    PRIMARY = "scenarios"

    scenarios: Path
    out: Path = Path("plan.json")

    def __post_init__(self):
        object.__setattr__(self, "scenarios", Path(self.scenarios))
        object.__setattr__(self, "out", Path(self.out))


def indices(text: str | None, count: int) -> list[int] | None:
    """The scenario indices of `tune --plan --scenario` (None: every scenario)."""
    if text is None:
        return None
    try:
        out = [int(x) for x in str(text).split(",") if x.strip()]
    except ValueError:
        out = []
    if not out or any(not 0 <= i < count for i in out):
        raise InputError(f"{text}: expected scenario indices 0..{count - 1}, comma-separated", field="scenario")
    return out


@dataclass(frozen=True)
class TunePlanRequest(Keywords):
    """tune --plan: run a plan's variants here (all its scenarios, or those `scenario` names), or
    with `submit` one batch job per scenario, or report the submitted jobs' `status`; launcher,
    online and recheck as for tune."""
    PRIMARY = "plan"

    plan: Path
    scenario: str | None = None        # indices, comma-separated (what a batch job runs)
    submit: str | None = None          # the batch system
    status: bool = False
    partition: str | None = None
    account: str | None = None
    time: str | None = None
    sbatch_args: str | None = None
    setup: tuple[str, ...] | None = None   # shell lines each job runs before the solver
    shared_nodes: bool | None = None       # jobs share their nodes (default: exclusive ones)
    launcher: str | None = None
    online: bool = False
    recheck: int | None = None         # with online: given (0 too) only with it; None: 0

    def __post_init__(self):
        object.__setattr__(self, "plan", Path(self.plan))
        if self.setup is not None:
            object.__setattr__(self, "setup", (self.setup,) if isinstance(self.setup, str) else tuple(self.setup))
        if self.shared_nodes is False:
            object.__setattr__(self, "shared_nodes", None)
        for name in SUBMIT_ONLY:
            if getattr(self, name) is not None and not self.submit:
                raise InputError(f"{getattr(self, name)}: only with --submit", field=name)
        check_recheck(self.recheck, self.online)


def check_recheck(recheck: int | None, online: bool) -> None:
    if recheck is not None and not online:
        raise InputError(f"{recheck}: only with --online", field="recheck")


def tune_form(ivp=None, plan=None, ingest=None, online: bool = False, recheck: int | None = None, sample=None,
              baseline: bool = False, replay: bool = False, plot=None, fmt: str | None = None) -> str:
    """Which tune the options ask for: "ingest" (an online solver's JSON into the store), "plan"
    (tune --plan) or "scenario" (one scenario); InputError for options that do not go together
    (recheck given, 0 too, without online; the T4 export of anything but a tune of variants)."""
    if fmt == "t4" and (ingest or plan or online):
        raise InputError(": t4 is a tune of variants (not with --ingest, --plan or --online)", field="format")
    if ingest:
        if ivp or online or plan or recheck is not None:
            raise InputError(f"{ingest}: not with --ivp, --plan, --online or --recheck (the file says what it ran)",
                             field="ingest")
        return "ingest"
    check_recheck(recheck, online)
    if plan:
        if sample is not None:
            raise InputError(f"{sample}: not with --plan, which runs the planned variants", field="sample")
        if baseline:
            raise InputError(": not with --plan, which runs the planned variants", field="baseline")
        if replay:
            raise InputError(": not with --plan (replay one scenario: tune --ivp ... --replay)", field="replay")
        return "plan"
    if not ivp:
        raise InputError("tune: give --ivp (and the scenario) or --plan")
    if plot and online:
        raise InputError(f"{plot}: not with --online (its report is the trial)", field="plot")
    return "scenario"

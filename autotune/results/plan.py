"""A plan: the pre-selected variants of a batch of scenarios, as `autotune plan` writes it and
`tune --plan` reads it."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from autotune.results.frames import frame
from autotune.results.registry import result_type

# 2: scenarios carry their partition (a reader of version 1 would send every job to one partition)
PLAN_VERSION = 2
# 3: a scenario may span nodes of several kinds (its kinds, each variant's split); only a plan that
# has such a scenario is written as 3 (a reader of version 2 would run it on one kind)
MIXED_PLAN_VERSION = 3
READABLE_VERSIONS = (1, 2, 3)          # a version 1 plan reads as one without partitions


@dataclass
class PlannedVariant:
    name: str
    predicted_s: float
    split: list[int] | None = None     # a mixed allocation's: the model's block per rank


@dataclass
class PlannedScenario:
    id: str
    ivp: str
    ivp_path: str
    method: str
    machine: str
    machine_path: str
    n: int
    n_requested: int
    nodes: int
    threads: int
    selection: str
    run: dict                          # RunOptions.to_dict()
    variants: list[PlannedVariant]
    not_selected: int
    not_selected_predicted_cost_s: float
    partition: str | None = None       # the Slurm partition its job goes to (None: tune's --partition)
    method_path: str | None = None     # the method's file (None, in older plans: load `method` by name)
    control: dict | None = None        # step-size control's {rtol, atol} (None: a fixed step)
    # nodes of several kinds: [{kind, partition, machine, machine_path, nodes, threads}] in rank
    # order (None: one kind); nodes is then the ranks of all, machine the cluster's file
    kinds: list[dict] | None = None


@result_type
@dataclass
class PlanResult:
    source: str
    created: str
    scenarios: list[PlannedScenario]
    skipped: list[dict] = field(default_factory=list)
    plan_version: int = PLAN_VERSION

    @property
    def variant_runs(self) -> int:
        return sum(len(s.variants) for s in self.scenarios)

    def __post_init__(self):
        if any(s.kinds for s in self.scenarios):
            self.plan_version = max(self.plan_version, MIXED_PLAN_VERSION)

    def to_dict(self) -> dict:
        """The plan file's content."""
        return {"plan_version": self.plan_version, "source": self.source, "created": self.created,
                "scenarios": [asdict(s) for s in self.scenarios], "skipped": self.skipped}

    def to_frame(self):
        """One row per planned (scenario, variant)."""
        cols = ["scenario", "ivp", "machine", "partition", "n", "nodes", "threads", "variant", "predicted_s"]
        rows = [dict({c: getattr(s, c) for c in cols[1:-2]}, scenario=s.id, variant=v.name, predicted_s=v.predicted_s)
                for s in self.scenarios for v in s.variants]
        return frame(rows, cols)


@dataclass
class ScenarioStatus:
    """Where one scenario of a submitted plan stands."""
    index: int
    id: str
    status: str                 # done, queued, running, failed, cancelled, lost, not submitted
    job: str | None             # the latest batch job
    scheduler_state: str | None  # what the batch system says of it (None: it no longer knows the job)
    measured: int               # planned variants the store holds a run of
    variants: int
    jobs: list[str] = field(default_factory=list)   # every job submitted for it, oldest first
    log: str | None = None      # the latest job's output file


@result_type
@dataclass
class PlanStatusResult:
    plan: str
    state: str                  # the state file
    scenarios: list[ScenarioStatus]
    submitted: list[str] = field(default_factory=list)   # "scenario -> job" of this command
    store: str | None = None    # the store the jobs write, and its journal mode and why
    store_mode: str | None = None

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for s in self.scenarios:
            out[s.status] = out.get(s.status, 0) + 1
        return out

    def to_dict(self) -> dict:
        return {"plan": self.plan, "state": self.state, "counts": self.counts(), "submitted": self.submitted,
                "store": self.store, "store_mode": self.store_mode, "scenarios": [asdict(s) for s in self.scenarios]}

    def to_frame(self):
        cols = ["index", "id", "status", "job", "scheduler_state", "measured", "variants", "log"]
        return frame([{c: getattr(s, c) for c in cols} for s in self.scenarios], cols)

"""tune over a mixed allocation (pipeline.mixedtune): each chosen variant run at its split and at
the even split, predicted against measured, for the step and for each kind's own time."""
from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from pathlib import Path

from autotune.results.frames import frame
from autotune.results.mixed import MixedRankResult, MixedRow
from autotune.results.registry import result_type


@dataclass
class SplitRun:
    """One variant at one split ('model', 'given' or 'even'), its runs and failures."""
    row: MixedRow
    which: str
    split: tuple[int, ...]
    exe: Path | None = None
    runs: list[dict] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    key: str = ""                  # the store's key of its runs
    reused: int = 0                # of its runs, those the store held before (tune --plan resumed)

    @property
    def measured_s(self) -> float | None:
        """The median over the runs of each run's median step."""
        got = [r["median_step_s"] for r in self.runs]
        return statistics.median(got) if got else None

    def busy_s(self, at: int, ranks: int) -> float | None:
        """The median over the runs of the largest busy time (outside the exchange) of ranks
        [at, at + ranks): one kind's."""
        got = [max(r["rank_busy_s"][at:at + ranks]) for r in self.runs if r.get("rank_busy_s")]
        return statistics.median(got) if got else None


def deviation(predicted: float | None, measured: float | None) -> float | None:
    """predicted / measured - 1 (negative: the model is too fast)."""
    return predicted / measured - 1.0 if predicted and measured else None


@result_type
class MixedTuneResult:
    """The runs of a mixed allocation's chosen variants, each at its split and at the even one."""

    def __init__(self, ranking: MixedRankResult, configs: list[SplitRun], steps: int, warmup: int, reps: int):
        self.ranking, self.configs, self.steps, self.warmup, self.reps = ranking, configs, steps, warmup, reps

    @property
    def measured_any(self) -> bool:
        return any(c.runs for c in self.configs)

    def kinds(self, c: SplitRun) -> list[dict]:
        """Per kind at this configuration's split: its share and block, the predicted step and
        node time (theta) there, the measured busy time of its slowest rank, and the deviation
        of the node time."""
        sc = self.ranking.scenario
        even = c.which == "even"
        step = c.row.even_kind_s if even else c.row.kind_s
        node = c.row.even_kind_node_s if even else c.row.kind_node_s
        out, at = [], 0
        for i, (k, share, block) in enumerate(zip(sc.kinds, sc.shares(c.split), sc.kind_blocks(c.split))):
            busy = c.busy_s(at, k.nodes)
            theta = node[i] if node else None
            out.append({"kind": k.name, "share": share, "block": block, "predicted_s": step[i] if step else None,
                        "predicted_node_s": theta, "measured_busy_s": busy, "node_deviation": deviation(theta, busy)})
            at += k.nodes
        return out

    def rows(self) -> list[dict]:
        out = []
        for c in self.configs:
            predicted = c.row.even_s if c.which == "even" else c.row.step_s
            out.append({"variant": c.row.variant.name, "split_kind": c.which, "split": ";".join(map(str, c.split)),
                        "predicted_s": predicted, "measured_s": c.measured_s,
                        "deviation": deviation(predicted, c.measured_s), "runs": len(c.runs),
                        "errors": " | ".join(c.errors) or None,
                        **{f"{k['kind']}_{f}": k[f] for k in self.kinds(c)
                           for f in ("share", "predicted_node_s", "measured_busy_s", "node_deviation")}})
        return out

    def columns(self) -> list[str]:
        kinds = [f"{k.name}_{f}" for k in self.ranking.scenario.kinds
                 for f in ("share", "predicted_node_s", "measured_busy_s", "node_deviation")]
        return ["variant", "split_kind", "split", "predicted_s", "measured_s", "deviation", "runs", "errors", *kinds]

    def to_dict(self) -> dict:
        sc = self.ranking.scenario
        return {"ivp": sc.ivp.name, "method": sc.method.name, "n": sc.n, "nodes": sc.label, "ranks": sc.ranks,
                "kinds": [{"kind": k.name, "machine": k.machine.name, "nodes": k.nodes, "threads": k.threads}
                          for k in sc.kinds],
                "interconnect": {"from": sc.network_from},
                "steps": self.steps, "warmup": self.warmup, "reps": self.reps,
                "runs": [dict(r, kinds=self.kinds(c)) for r, c in zip(self.rows(), self.configs)]}

    def to_frame(self):
        """One row per variant and split."""
        return frame(self.rows(), self.columns())

"""Result of a scaling study: every variant over node counts (autotune.model.scaling)."""
from __future__ import annotations

from dataclasses import asdict, dataclass

from autotune.model.scaling import ScaleAnalysis, ScaleRow
from autotune.results.frames import frame
from autotune.results.registry import result_type

COLUMNS = [f for f in ScaleRow.__dataclass_fields__]


@result_type
@dataclass
class ScaleResult:
    ivp: str
    method: str
    machine: str
    n: int
    n_requested: int
    threads: int
    nodes: list[int]
    skipped: list[dict]
    analyses_run: int
    notes: list[str]
    analysis: ScaleAnalysis

    @property
    def recommended(self):
        return self.analysis.recommended

    def to_dict(self) -> dict:
        return {"ivp": self.ivp, "method": self.method, "machine": self.machine, "n": self.n,
                "n_requested": self.n_requested, "threads": self.threads, "nodes": self.nodes,
                "skipped": self.skipped, "analyses_run": self.analyses_run, "notes": self.notes,
                "analysis": self.analysis.to_dict()}

    def to_frame(self):
        """One row per (variant, node count)."""
        return frame([asdict(r) for r in self.analysis.rows], COLUMNS)

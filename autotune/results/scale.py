"""Result of a scaling study: every variant over node counts (autotune.model.scaling)."""
from __future__ import annotations

from dataclasses import dataclass

from autotune.model.scaling import ScaleAnalysis, ScaleRow
from autotune.results.frames import DIMENSION_KEYS, configuration, frame
from autotune.results.registry import result_type

_ROW = list(ScaleRow.__dataclass_fields__)
COLUMNS = [_ROW[0], *DIMENSION_KEYS, *_ROW[1:]]     # the variant's dimensions after its name


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
    machine_sha256: str | None = None     # of the machine file's text (the JSON document's meta)

    @property
    def recommended(self):
        return self.analysis.recommended

    def to_dict(self) -> dict:
        return {"ivp": self.ivp, "method": self.method, "machine": self.machine, "n": self.n,
                "n_requested": self.n_requested, "threads": self.threads, "nodes": self.nodes,
                "skipped": self.skipped, "analyses_run": self.analyses_run, "notes": self.notes,
                "analysis": self.analysis.to_dict(), "machine_sha256": self.machine_sha256}

    def to_frame(self):
        """One row per (variant, node count)."""
        return frame(self.rows(), COLUMNS)

    def rows(self) -> list[dict]:
        """One flat row per (variant, node count), the variant's dimensions beside its name."""
        return [dict(vars(r), **configuration(r.variant)) for r in self.analysis.rows]

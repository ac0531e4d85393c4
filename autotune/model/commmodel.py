"""Fitted communication-cost models: evaluation only (pure Python, cheap to import).

The fitting itself (numpy/scipy) lives in commfit.py; `rank` only evaluates.
    t(m, p) = a_k * L(p) + b_k * W(p) * m   for m in size segment k
with L (latency rounds) and W (link volume) declared with the operation (specs.schemes.OPERATIONS).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from autotune.specs.schemes import OPERATIONS

@dataclass(frozen=True)
class Segment:
    max_bytes: float        # upper end (inf for the last segment)
    latency_s: float        # a: seconds per latency round
    per_byte_s: float       # b: seconds per byte through one link


def _segments_to_list(segs) -> list[dict]:
    return [{"max_bytes": None if math.isinf(s.max_bytes) else s.max_bytes,
             "latency_s": s.latency_s, "per_byte_s": s.per_byte_s} for s in segs]


def _segments_from_list(items) -> tuple[Segment, ...]:
    return tuple(Segment(math.inf if s["max_bytes"] is None else float(s["max_bytes"]),
                         float(s["latency_s"]), float(s["per_byte_s"])) for s in items)


@dataclass(frozen=True)
class OpFit:
    """A fitted operation: one joint model over all p (for node counts not measured) and,
    for every measured p, that p's own segments (used at exactly that p)."""
    op: str
    segments: tuple[Segment, ...]
    points: int
    per_p: tuple[tuple[int, tuple[Segment, ...]], ...] = ()

    def measured(self, p: int) -> bool:
        return any(q == p for q, _ in self.per_p)

    def predict(self, nbytes: float, p: int) -> float:
        if p <= 1 or nbytes <= 0:
            return 0.0
        op = OPERATIONS[self.op]
        lat, vol = op.rounds, op.volume
        segments = self.segments
        for q, segs in self.per_p:
            if q == p:
                segments = segs
                break
        for seg in segments:
            if nbytes <= seg.max_bytes:
                break
        return seg.latency_s * lat(p) + seg.per_byte_s * vol(p) * nbytes

    def to_dict(self) -> dict:
        return {"segments": _segments_to_list(self.segments), "points": self.points,
                "per_p": {str(q): _segments_to_list(segs) for q, segs in self.per_p}}

    @staticmethod
    def from_dict(op: str, d: dict) -> "OpFit":
        per_p = tuple(sorted((int(q), _segments_from_list(v)) for q, v in (d.get("per_p") or {}).items()))
        return OpFit(op, _segments_from_list(d["segments"]), int(d.get("points", 0)), per_p)

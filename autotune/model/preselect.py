"""Ranking and pre-selection of variants by predicted seconds per step.  Pure."""
from __future__ import annotations

from dataclasses import dataclass
from operator import itemgetter


@dataclass(frozen=True)
class Rule:
    kind: str      # "within", "top" or "all"
    value: float = 0.0

    def describe(self) -> str:
        if self.kind == "all":
            return "every variant"
        if self.kind == "top":
            return f"top {int(self.value)} by predicted time"
        return f"within {self.value:g} % of the best predicted time"


def rank(items: list[tuple[str, float | None]]) -> list[tuple[str, float | None]]:
    """Order (name, seconds) best first; failed predictions (None) go last, by name."""
    ok = [x for x in items if x[1] is not None]
    ok.sort(key=itemgetter(1, 0))
    if len(ok) == len(items):
        return ok
    return ok + sorted((x for x in items if x[1] is None), key=itemgetter(0))


def preselect(ranked: list[tuple[str, float | None]], rule: Rule) -> set[str]:
    valid = [(n, t) for n, t in ranked if t is not None]
    if not valid:
        return set()
    if rule.kind == "all":
        return {n for n, _ in valid}
    if rule.kind == "top":
        return {n for n, _ in valid[: int(rule.value)]}
    best = valid[0][1]
    return {n for n, t in valid if t <= best * (1.0 + rule.value / 100.0)}

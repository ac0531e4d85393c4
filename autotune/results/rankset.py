"""Result of ranking every shipped IVP at the same other options (rank --ivp all): one ranking per
IVP, each what rank of that IVP alone gives."""
from __future__ import annotations

from dataclasses import dataclass

from autotune.results.frames import frame
from autotune.results.rank import COLUMNS, RankResult
from autotune.results.registry import result_type


@result_type
@dataclass
class RankSet:
    results: list[RankResult]     # one per IVP, in the order of `autotune list ivps`
    skipped: list[dict]           # IVPs whose scenario cannot run, with the reason

    def by_ivp(self) -> dict[str, RankResult]:
        return {r.scenario.ivp.name: r for r in self.results}

    def rows(self) -> list[dict]:
        """One flat row per IVP and variant (COLUMNS: the IVP first), best first within an IVP."""
        return [row for r in self.results for row in r.rows()]

    def to_dict(self) -> dict:
        """{"ivps": {name: what rank --ivp name --format json prints}, "skipped": [...]}."""
        return {"ivps": {name: r.to_dict() for name, r in self.by_ivp().items()}, "skipped": self.skipped}

    def to_frame(self):
        """One row per IVP and variant."""
        return frame(self.rows(), COLUMNS)

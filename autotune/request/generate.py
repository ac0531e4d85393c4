"""The request of `generate`: every variant's kernel parts and solvers for an IVP at one size
(for a machine's caches), or with `online` one solver of the variants pre-selected in a
scenario (docs/online.md); the rules between its options are checked here, once."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autotune.errors import InputError
from autotune.model.preselect import Rule
from autotune.request.keywords import Keywords, pick
from autotune.request.scenario import ScenarioRequest
from autotune.request.selection import online_rule

SCENARIO_KEYWORDS = ScenarioRequest.keyword_names()
ONLINE_ONLY = ("within", "recheck", "nodes", "threads")     # the scenario is the online solver's


@dataclass(frozen=True)
class GenerateRequest(Keywords):
    """generate: the IVP, method, size and machine (scenario), the folder to write (out), and for
    one online solver its pre-selection (online: None for every variant's code) and its default
    re-check (a trial again every `recheck` steps)."""
    PRIMARY = "ivp"

    scenario: ScenarioRequest
    out: Path = Path("variants-out")
    online: Rule | None = None
    recheck: int = 0
    likwid: bool = False          # each sweep of every solver a LIKWID marker region (not the online solver's)

    def __post_init__(self):
        if not str(self.out).strip():
            raise InputError(f": expected a folder, got {str(self.out)!r}", field="out")
        object.__setattr__(self, "out", Path(self.out))
        if self.likwid and self.online is not None:
            raise InputError(": not with --online (the markers are the variants' own solvers')", field="likwid")

    @classmethod
    def keyword_names(cls) -> tuple[str, ...]:
        return (*SCENARIO_KEYWORDS, "out", "online", "within", "recheck", "likwid")

    @classmethod
    def _build(cls, given: dict[str, Any]) -> GenerateRequest:
        online = given.get("online")
        if online is None or online is False:
            for opt in ONLINE_ONLY:
                if opt in given:        # given as None is not given; 0 is
                    raise InputError(f"{given[opt]}: only with --online", field=opt)
            rule = None
        else:       # --online alone (True): the default rule; a K of 0 is refused (online_rule)
            rule = online_rule(None if online is True else online, given.get("within"))
        return cls(ScenarioRequest.of(**pick(given, SCENARIO_KEYWORDS)), given.get("out", Path("variants-out")),
                   rule, int(given.get("recheck", 0)), bool(given.get("likwid", False)))

    def as_keywords(self) -> dict[str, Any]:
        online = None if self.online is None else (
            int(self.online.value) if self.online.kind == "top" else True)
        within = self.online.value if self.online is not None and self.online.kind == "within" else None
        return {**self.scenario.as_keywords(), "out": self.out, "online": online, "within": within,
                "recheck": self.recheck if self.online is not None else None, "likwid": self.likwid}

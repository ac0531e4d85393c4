"""The request of a whole command: the scenario (request.scenario), which variants (the rule of
request.selection) and, for tune, how to run them (request.run).  The command line and the
Python API build them with the same `of` (request.keywords; docs/design.md#the-python-api):

    RankRequest.of("heat2d", nodes=8, top=5)
    TuneRequest.of("heat2d", nodes=8, top=3, reps="auto", budget="90s", sample=4)
    TuneRequest(ScenarioRequest("heat2d", nodes=8), run=RunOptions(steps=20))
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from autotune.errors import InputError
from autotune.model.preselect import Rule
from autotune.request.keywords import Keywords, pick
from autotune.request.run import RunOptions
from autotune.request.scenario import ScenarioRequest
from autotune.request.selection import RULE_KEYWORDS, Sample, check_sample, rule_keywords, sample_of, selection
from autotune.request.values import name_list

SCENARIO_KEYWORDS = ScenarioRequest.keyword_names()
RUN_KEYWORDS = tuple(f.name for f in fields(RunOptions))


def _rule(given: dict[str, Any]) -> Rule:
    return selection(given.get("top"), given.get("within"), bool(given.get("all", False)))


@dataclass(frozen=True)
class RankRequest(Keywords):
    """rank and sweep: the scenario (or sweep), the pre-selection rule (top, within or all;
    default within 10 %), and for a sweep whether to keep the pre-selected variants' rows only."""
    PRIMARY = "ivp"
    EXCLUSIVE = (RULE_KEYWORDS,)

    scenario: ScenarioRequest
    rule: Rule = field(default_factory=selection)
    selected_only: bool = False

    @classmethod
    def keyword_names(cls) -> tuple[str, ...]:
        return (*SCENARIO_KEYWORDS, *RULE_KEYWORDS, "selected_only")

    @classmethod
    def _build(cls, given: dict[str, Any]) -> RankRequest:
        return cls(ScenarioRequest.of(**pick(given, SCENARIO_KEYWORDS)), _rule(given),
                   bool(given.get("selected_only", False)))

    def as_keywords(self) -> dict[str, Any]:
        return {**self.scenario.as_keywords(), **rule_keywords(self.rule), "selected_only": self.selected_only}


@dataclass(frozen=True)
class TuneRequest(Keywords):
    """tune: the one scenario; the variants to build and run (the rule's pre-selection, or
    `variants` by name); a random `sample` of the others that checks the pre-selection;
    `baseline`: the paper's forms too; and how to run them (RunOptions)."""
    PRIMARY = "ivp"
    EXCLUSIVE = (RULE_KEYWORDS,)

    scenario: ScenarioRequest
    rule: Rule = field(default_factory=selection)
    run: RunOptions = field(default_factory=RunOptions)
    variants: tuple[str, ...] | None = None
    sample: Sample | None = None
    baseline: bool = False

    def __post_init__(self):
        object.__setattr__(self, "variants", name_list(self.variants, ";"))
        if self.scenario.comm is not None:
            raise InputError(f"{self.scenario.comm}: tune takes no comm schemes; name variants or give "
                             "variant_filter comm=...", field="comm")
        check_sample(self.sample, self.rule, bool(self.variants))
        if self.run.online and (self.sample or self.baseline):
            raise InputError(": not with --online, which runs the chosen variants in one solver",
                             field="sample" if self.sample else "baseline")

    @property
    def named(self) -> list[str] | None:
        """The variants named to run (None: the rule's pre-selection)."""
        return list(self.variants) if self.variants else None

    @classmethod
    def keyword_names(cls) -> tuple[str, ...]:
        return (*SCENARIO_KEYWORDS, *RULE_KEYWORDS, "variants", "sample", "seed", "baseline", *RUN_KEYWORDS)

    @classmethod
    def _build(cls, given: dict[str, Any]) -> TuneRequest:
        scenario = ScenarioRequest.of(**pick(given, SCENARIO_KEYWORDS))
        rule = _rule(given)
        variants = name_list(given.get("variants"), ";")
        sample = sample_of(given.get("sample"), given.get("seed"), rule, bool(variants))
        run = RunOptions(**pick(given, RUN_KEYWORDS))
        return cls(scenario, rule, run, variants, sample, bool(given.get("baseline", False)))

    def as_keywords(self) -> dict[str, Any]:
        sample = {"sample": self.sample.size, "seed": self.sample.seed} if self.sample else {}
        return {**self.scenario.as_keywords(), **rule_keywords(self.rule),
                "variants": list(self.variants) if self.variants else None, **sample, "baseline": self.baseline,
                **{name: getattr(self.run, name) for name in RUN_KEYWORDS}}

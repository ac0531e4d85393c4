"""Which variants to pre-select (or run): the rule and its default, declared once; and the random
sample that checks a pre-selection (tune --sample)."""
from __future__ import annotations

from dataclasses import dataclass

from autotune.errors import InputError
from autotune.model.preselect import Rule
from autotune.request.defaults import DEFAULT_WITHIN_PCT


def selection(top: int | None = None, within: float | None = None, all: bool = False) -> Rule:  # noqa: A002
    """top K, within PCT % of the best, or every variant; the default is within 10 %."""
    if sum(x is not None and x is not False for x in (top, within, all or None)) > 1:
        raise InputError(": give one of top, within, all", field="top")
    if all:
        return Rule("all")
    if top is not None:
        if isinstance(top, bool) or not isinstance(top, int) or top < 1:
            raise InputError(f"{top}: expected an integer >= 1", field="top")
        return Rule("top", top)
    if within is not None:
        if isinstance(within, bool) or not isinstance(within, (int, float)) or not within >= 0:   # nan too
            raise InputError(f"{within}: expected a percentage >= 0", field="within")
        return Rule("within", float(within))
    return Rule("within", DEFAULT_WITHIN_PCT)


def online_rule(k: int | None, within: float | None, field: str = "online") -> Rule:
    """The pre-selection of an online solver: the top k (1 to codegen.online.MAX_CANDIDATES), or
    those within PCT % of the best (None, None: the default rule); field: the option k came as."""
    from autotune.codegen.online import MAX_CANDIDATES
    if k is not None and within is not None:
        raise InputError(f"{k}: give K or within, not both", field=field)
    if k is not None and not 1 <= k <= MAX_CANDIDATES:
        raise InputError(f"{k}: expected K from 1 to {MAX_CANDIDATES}", field=field)
    return selection(top=k, within=within)


RULE_KEYWORDS = ("top", "within", "all")     # selection's keywords: one of them is the rule


def rule_keywords(rule: Rule) -> dict:
    """The keyword that gives `rule` back through selection()."""
    if rule.kind == "all":
        return {"all": True}
    return {"top": int(rule.value)} if rule.kind == "top" else {"within": rule.value}


@dataclass(frozen=True)
class Sample:
    """tune's check of the pre-selection: size variants drawn with random.Random(seed) from the
    ranked variants it leaves out, run beside it."""
    size: int
    seed: int = 0


def _integer(value, field: str) -> int:
    """An integer from the API (an int) or the command line (its text)."""
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            raise InputError(f"{value}: expected an integer", field=field) from None
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"{value!r}: expected an integer", field=field)
    return value


def sample_of(size=None, seed=0, rule: Rule | None = None, named: bool = False) -> Sample | None:
    """The checked sample (None: no check).  Nothing is left to sample beside every variant
    (rule all), and named variants are no pre-selection to check."""
    seed = _integer(0 if seed is None else seed, "seed")
    if size is None:
        return None
    size = _integer(size, "sample")
    if size < 1:
        raise InputError(f"{size}: expected an integer >= 1", field="sample")
    return check_sample(Sample(size, seed), rule, named)


def check_sample(sample: Sample | None, rule: Rule | None = None, named: bool = False) -> Sample | None:
    """The sample, where there is something to check with it (InputError where not)."""
    if sample is None:
        return None
    if rule is not None and rule.kind == "all":
        raise InputError(f"{sample.size}: every variant runs already (all), none is left to sample",
                         field="sample")
    if named:
        raise InputError(f"{sample.size}: not with named variants: the sample checks the pre-selection",
                         field="sample")
    return sample

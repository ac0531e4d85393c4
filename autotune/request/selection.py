"""Which variants to pre-select (or run): the rule and its default, declared once."""
from __future__ import annotations

from autotune.errors import InputError
from autotune.model.ranking import Rule

DEFAULT_WITHIN_PCT = 10.0


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
        if isinstance(within, bool) or not isinstance(within, (int, float)) or within < 0:
            raise InputError(f"{within}: expected a percentage >= 0", field="within")
        return Rule("within", float(within))
    return Rule("within", DEFAULT_WITHIN_PCT)

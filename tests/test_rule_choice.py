"""The composition rule moves away from the file's only where another wins clearly (model.reffit)."""
from __future__ import annotations

from autotune.model.reffit import RULE_TOLERANCE, clearly_better


def test_a_rule_better_on_every_reference_wins_clearly():
    assert clearly_better([0.05] * 20, [0.10] * 20)


def test_a_lead_within_the_tolerance_is_no_clear_win():
    assert not clearly_better([0.09] * 20, [0.09 + RULE_TOLERANCE / 2] * 20)


def test_a_lead_that_rests_on_few_references_is_no_clear_win():
    """Better by 0.036 on the mean, but on 3 references of 20: the resamples that leave them out
    (or draw the one it loses on twice) do not agree."""
    a = [0.30] * 2 + [0.02] * 3 + [0.10] * 15
    b = [0.10] * 2 + [0.33] * 3 + [0.10] * 15
    assert sum(b) / 20 - sum(a) / 20 > RULE_TOLERANCE
    assert not clearly_better(a, b)


def test_the_answer_is_the_same_for_the_same_data():
    a, b = [0.02, 0.03, 0.09, 0.04] * 5, [0.05, 0.05, 0.05, 0.08] * 5
    assert clearly_better(a, b) == clearly_better(a, b)
    assert not clearly_better(a, b[:-1])      # not the same references

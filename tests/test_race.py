"""Racing tune's repetitions (model.race): who leaves, when, and why the race ends.  Pure."""
import math

import pytest

from autotune.model.race import BUDGET_ROUNDS, RacePolicy, compare_to, step

POLICY = RacePolicy()


def rounds(*series):
    """{name: {round: seconds}} from lists of seconds per round."""
    return {name: dict(enumerate(values)) for name, values in series}


def test_a_clearly_slower_variant_leaves_after_the_first_rounds_and_not_before():
    runs = rounds(("a", [1.00, 1.02, 0.99]), ("b", [1.30, 1.33, 1.29]))
    early = step({k: {r: s for r, s in v.items() if r < 2} for k, v in runs.items()}, ["a", "b"], {}, 2, 4, 8.0,
                 POLICY)
    assert early.alive == ["a", "b"] and not early.verdicts and early.stop is None    # 2 rounds: nobody leaves
    st = step(runs, ["a", "b"], {}, 3, 6, 12.0, POLICY)
    assert st.alive == ["a"] and st.leader == "a" and st.verdicts["b"].out == "slower"
    assert st.stop == "separated" and st.separated
    v = st.verdicts["b"]
    assert v.ratio == pytest.approx(math.exp(sum(math.log(b / a) for a, b in zip(runs["a"].values(),
                                                                                 runs["b"].values())) / 3))
    assert 1.0 < v.low < v.ratio < v.high


def test_a_near_tie_stays_in_the_race_until_the_budget():
    # 1 % apart with 3 % noise: neither surely slower nor surely within the 2 % margin
    runs = rounds(("a", [1.00, 1.04, 0.98, 1.01]), ("b", [1.03, 0.99, 1.02, 1.05]))
    st = step(runs, ["a", "b"], {}, 4, 8, 9.0, RacePolicy(budget_runs=9))
    assert set(st.alive) == {"a", "b"} and not st.verdicts
    assert st.stop == "the budget of 9 runs" and not st.separated
    assert step(runs, ["a", "b"], {}, 4, 8, 9.0, RacePolicy(budget_s=8.5)).stop == "the budget of 8.5 s"
    assert step(runs, ["a", "b"], {}, 4, 8, 9.0, RacePolicy(max_rounds=4)).stop == "the most rounds (4)"
    assert step(runs, ["a", "b"], {}, 4, 8, 9.0, POLICY).stop is None


def test_a_variant_surely_within_the_margin_leaves_as_equivalent():
    # the same speed, 0.2 % noise: the ratio's bounds lie within 1 -+ 2 %
    runs = rounds(("a", [1.000, 1.002, 0.999, 1.001]), ("b", [1.001, 1.001, 1.000, 1.002]))
    st = step(runs, ["a", "b"], {}, 4, 8, 8.0, POLICY)
    assert len(st.alive) == 1 and st.verdicts[({"a", "b"} - set(st.alive)).pop()].out == "equivalent"
    assert st.stop == "within the margin" and not st.separated


def test_the_comparison_uses_the_rounds_both_ran():
    runs = {"a": {0: 1.0, 1: 1.0, 2: 1.0, 3: 1.0}, "b": {0: 2.0, 2: 2.0}}
    v = compare_to("b", "a", runs, POLICY)
    assert v.rounds == 2 and v.out is None      # fewer common rounds than the race's minimum


def test_the_default_budget_is_half_a_seven_repetition_design():
    assert BUDGET_ROUNDS == 3.5
    assert RacePolicy().budgeted(5).budget_runs == 18 and RacePolicy().budgeted(1).budget_runs == 4
    given = RacePolicy(budget_s=30.0)
    assert given.budgeted(5) is given
    with pytest.raises(ValueError):
        RacePolicy(min_rounds=1)
    with pytest.raises(ValueError):
        RacePolicy(confidence=1.0)


def test_the_leader_is_lowest_against_its_rounds():
    from autotune.model.race import leader
    # each run over the median of its round: a is 2.4 % under its rounds, b 2.4 % over them
    runs = {"a": {0: 1.00, 1: 2.00, 2: 2.00}, "b": {0: 0.95, 1: 2.10, 2: 2.10}, "c": {0: 1.10, 1: 2.05, 2: 2.05}}
    assert sorted(runs, key=lambda k: sorted(runs[k].values())[1])[0] == "a"     # raw medians: a, 2.00
    assert leader(runs, ["a", "b", "c"]) == "a"
    runs["b"] = {0: 0.90, 1: 1.95, 2: 1.95}
    assert leader(runs, ["a", "b", "c"]) == "b"
    assert leader({"a": {0: 1.0}, "b": {0: 1.0}}, ["b", "a"]) == "a"             # a tie: by name

"""tools.ecm_runner.longest_first: the analyses that simulate the caches (seconds each) go to the
pool first, the rest keep their order, so the pool does not end on one long simulation."""
from autotune.tools.ecm_runner import longest_first


def _task(name, *predictors):
    return {"name": name, "regimes": [{"cache_predictor": p} for p in predictors]}


def test_simulations_first_and_the_rest_in_their_order():
    tasks = [_task("a", "LC"), _task("b", "SIM"), _task("c", "LC", "LC"), _task("d", "SIM", "SIM"),
             _task("e", "LC", "SIM"), _task("f", "LC")]
    assert [t["name"] for t in longest_first(tasks)] == ["d", "b", "e", "a", "c", "f"]
    assert [t["name"] for t in tasks] == list("abcdef")      # the caller's list is left as it was

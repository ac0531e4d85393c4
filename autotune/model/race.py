"""Racing the repetitions of tune: after a few rounds, a variant runs on only while it could
still be the best.  Pure.

The rounds are blocks (as in F-race): in round r every variant still in the race runs once, so
a slow or fast spell of a shared machine touches all of them alike, and a variant is compared
with the leader (the lowest median so far) on the rounds both ran, by the logarithm of their
ratio in each round.  With d_r = log(t_v,r / t_leader,r) over k common rounds, mean d, standard
error s / sqrt(k) and Student's t quantile q at the race's confidence (one-sided):

    slower       mean d - q se > 0                          v is slower than the leader: out
    equivalent   -delta < mean d - q se, mean d + q se < delta
                                                            v cannot beat the leader by more
                                                            than delta (log(1 + margin)): out,
                                                            racing on decides nothing worth it

No variant leaves before MIN_ROUNDS rounds.  The race ends when one variant is left (the leader
separated: every other was slower, or within the margin), when the budget is spent (runs or
seconds), or when the leaders reach the most rounds a variant may run.  docs/tuning.md#racing.
"""
from __future__ import annotations

import dataclasses
import math
import statistics
from dataclasses import dataclass

from autotune.arith import ordered_sum

MIN_ROUNDS = 3
MAX_ROUNDS = 10
CONFIDENCE = 0.95
MARGIN_PCT = 2.0        # a leader and a variant this close are as good as each other
# without a budget given, a race runs at most this many runs per variant in all: half of a fixed
# design of 7 repetitions (leaders that cannot be told apart would otherwise run to MAX_ROUNDS)
BUDGET_ROUNDS = 3.5


@dataclass(frozen=True)
class RacePolicy:
    min_rounds: int = MIN_ROUNDS
    max_rounds: int = MAX_ROUNDS
    confidence: float = CONFIDENCE
    margin_pct: float = MARGIN_PCT
    budget_runs: int | None = None      # at most this many runs in all (None: no limit)
    budget_s: float | None = None       # at most this many seconds of runs (None: no limit)

    def __post_init__(self):
        if self.min_rounds < 2 or self.max_rounds < self.min_rounds:
            raise ValueError(f"expected 2 <= min_rounds <= max_rounds, got {self.min_rounds}, {self.max_rounds}")
        if not 0.5 < self.confidence < 1:
            raise ValueError(f"confidence {self.confidence}: expected a number between 0.5 and 1")

    def budgeted(self, variants: int) -> "RacePolicy":
        """The policy with the default budget (BUDGET_ROUNDS runs per variant) where none was given."""
        if self.budget_runs is not None or self.budget_s is not None:
            return self
        return dataclasses.replace(self, budget_runs=max(self.min_rounds * variants,
                                                         math.ceil(BUDGET_ROUNDS * variants)))

    def describe(self) -> str:
        budget = [f"{self.budget_runs} runs" if self.budget_runs else "", f"{self.budget_s:g} s" if self.budget_s else ""]
        budget = [b for b in budget if b]
        return (f"racing: at least {self.min_rounds} and at most {self.max_rounds} rounds, confidence "
                f"{self.confidence:g}, margin {self.margin_pct:g} %" + (f", budget {' and '.join(budget)}" if budget else ""))


@dataclass(frozen=True)
class Verdict:
    """One variant against the leader after the rounds so far."""
    name: str
    rounds: int                  # rounds it shares with the leader
    ratio: float                 # exp(mean d): its time over the leader's
    low: float                   # the ratio's one-sided bounds at the confidence
    high: float
    out: str | None              # "slower", "equivalent", None: still in the race


def t_quantile(confidence: float, df: int) -> float:
    from scipy.stats import t
    return float(t.ppf(confidence, df))


def leader(runs: dict[str, dict[int, float]], alive: list[str]) -> str:
    """The variant in the race with the lowest median time relative to its rounds: each run over
    the median of the race's runs in the same round (the round as a block: a slow spell that
    touched a round touches every run in it), the median of those ratios over its rounds; its
    name breaks a tie."""
    rounds = sorted({r for name in alive for r in runs[name]})
    block = {r: statistics.median(runs[name][r] for name in alive if r in runs[name]) for r in rounds}
    return min(alive, key=lambda name: (statistics.median(t / block[r] for r, t in runs[name].items()
                                                          if r in block), name))


def compare_to(name: str, lead: str, runs: dict[str, dict[int, float]], policy: RacePolicy) -> Verdict:
    """name against the leader on the rounds both ran (runs: variant -> {round: seconds})."""
    common = sorted(set(runs[name]) & set(runs[lead]))
    d = [math.log(runs[name][r] / runs[lead][r]) for r in common]
    k = len(d)
    mean = ordered_sum(d) / k if k else 0.0
    if k < max(2, policy.min_rounds):
        return Verdict(name, k, math.exp(mean), 0.0, math.inf, None)
    se = statistics.stdev(d) / math.sqrt(k)
    q = t_quantile(policy.confidence, k - 1)
    low, high = mean - q * se, mean + q * se
    delta = math.log1p(policy.margin_pct / 100.0)
    out = "slower" if low > 0 else "equivalent" if -delta < low and high < delta else None
    return Verdict(name, k, math.exp(mean), math.exp(low), math.exp(high), out)


@dataclass(frozen=True)
class RaceState:
    alive: list[str]
    verdicts: dict[str, Verdict]        # of every variant that left the race, the verdict it left on
    leader: str | None
    stop: str | None                    # why the race ended (None: it goes on)
    separated: bool = False             # the leader was told apart from every other at the confidence


def step(runs: dict[str, dict[int, float]], alive: list[str], gone: dict[str, Verdict], rounds: int,
         spent_runs: int, spent_s: float, policy: RacePolicy) -> RaceState:
    """After `rounds` rounds: who leaves, who goes on, and whether the race ends.  runs: every
    variant's seconds by round; alive: those still in the race; gone: those that left before."""
    alive = [name for name in alive if runs.get(name)]
    gone = dict(gone)
    if not alive:
        return RaceState([], gone, None, "no variant ran")
    lead = leader(runs, alive)
    if rounds >= policy.min_rounds:
        for name in alive:
            if name != lead:
                v = compare_to(name, lead, runs, policy)
                if v.out:
                    gone[name] = v
        alive = [name for name in alive if name not in gone]
    stop = None
    if len(alive) == 1:
        stop = "separated" if all(v.out == "slower" for v in gone.values()) else "within the margin"
    elif rounds >= policy.max_rounds:
        stop = f"the most rounds ({policy.max_rounds})"
    elif rounds < policy.min_rounds:      # every variant runs its first rounds, whatever the budget
        pass
    elif policy.budget_runs is not None and spent_runs + len(alive) > policy.budget_runs:
        stop = f"the budget of {policy.budget_runs} runs"
    elif policy.budget_s is not None and spent_s >= policy.budget_s:
        stop = f"the budget of {policy.budget_s:g} s"
    separated = len(alive) == 1 and bool(gone) and all(v.out == "slower" for v in gone.values())
    return RaceState(alive, gone, lead, stop, separated)

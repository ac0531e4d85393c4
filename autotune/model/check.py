"""A check of the pre-selection against a random sample of the variants it left out.  Pure.

tune --sample K runs, beside the pre-selected variants, K variants drawn at random from the rest
of the ranked pool.  If the best of the sample is not clearly faster than the best of the
pre-selection, trusting the model's short list cost little; if it is, the model missed.
"""
from __future__ import annotations

import random
from collections.abc import Collection

from autotune.model.confidence import CONFIDENCE, describe

# the sample's best may be this much faster (in % of the pre-selected best) and the
# pre-selection still counts as held: run-to-run noise of a shared node is of this order
HELD_MARGIN_PCT = 5.0


def draw_sample(pool: list[str], taken: Collection[str], k: int, seed: int) -> list[str]:
    """k names drawn at random (random.Random(seed)) from the pool less those taken, all of them
    if fewer are left; in pool order.  The same pool, taken, k and seed give the same draw."""
    taken = set(taken)
    rest = [name for name in pool if name not in taken]
    picked = set(random.Random(seed).sample(rest, min(k, len(rest))))
    return [name for name in rest if name in picked]


def _best(rows: list) -> dict | None:
    ok = [r for r in rows if r.measured_s]
    if not ok:
        return None
    best = min(ok, key=lambda r: (r.measured_s, r.name))
    return {"name": best.name, "measured_s": best.measured_s}


def _variants(k: int) -> str:
    return f"{k} random variant" + ("" if k == 1 else "s")


def _judged(said: str, interval: list[float], margin_pct: float) -> str:
    """The verdict on the gain's bootstrap interval: held when all of it is within the margin,
    missed when all of it is beyond, undecided when it straddles the margin."""
    spread = f"the gain's {CONFIDENCE * 100:g} % interval {describe(interval, '%')}"
    if interval[1] <= margin_pct:
        return f"pre-selection held: {said}; {spread} is within the {margin_pct:g} % margin"
    if interval[0] > margin_pct:
        return f"missed: {said}; {spread} is beyond the {margin_pct:g} % margin"
    return f"undecided: {said}, but {spread} straddles the {margin_pct:g} % margin"


def check_sample(rows: list, pool_size: int, selection: str, seed: int,
                 margin_pct: float = HELD_MARGIN_PCT, gain_interval: list[float] | None = None) -> dict:
    """rows: results.tune.TuneRow (name, measured_s: None if failed, sampled); the rows not sampled
    are the pre-selection.  pool_size: the variants an exhaustive search would run; selection: the rule
    in words.  gain_interval: the bootstrap interval of the gain (model.confidence.gain_interval);
    given, the verdict is held or missed only when the whole interval is on one side of the margin,
    undecided otherwise, and the check carries it as sample_gain_interval_pct.  Returns the check
    (the fields of results.tune.TuneCheck)."""
    pre = [r for r in rows if not r.sampled]
    sample = [r for r in rows if r.sampled]
    pre_best, sample_best = _best(pre), _best(sample)
    base = f"the {len(pre)} pre-selected ({selection})"
    beats, gain = None, None
    if not sample:
        verdict = f"nothing to sample: {base} cover every variant with a prediction"
    elif pre_best is None:
        verdict = f"undecided: none of {base} was measured"
    elif sample_best is None:
        verdict = f"undecided: none of the {_variants(len(sample))} was measured"
    else:
        gain = 100.0 * (pre_best["measured_s"] - sample_best["measured_s"]) / pre_best["measured_s"]
        beats = sample_best["measured_s"] < pre_best["measured_s"]
        how = f"{abs(gain):.1f} % {'faster' if beats else 'slower'}" if gain else "as fast as"
        than = "the best of" if not gain else "than the best of"
        said = f"the best of {_variants(len(sample))} ({sample_best['name']}) is {how} {than} {base}"
        if gain_interval is not None:
            verdict = _judged(said, gain_interval, margin_pct)
        elif gain > margin_pct:
            verdict = f"missed: {said}"
        else:
            verdict = f"pre-selection held: {said}" + (f" (within the {margin_pct:g} % margin)" if beats else "")
    saved = 100.0 * (1.0 - len(pre) / pool_size) if pool_size else None
    check = {"seed": seed, "sampled": len(sample), "pool": pool_size, "preselected": len(pre),
             "preselected_best": pre_best, "sample_best": sample_best, "sample_beats_preselected": beats,
             "sample_gain_pct": gain, "held_margin_pct": margin_pct, "runs_saved_pct": saved,
             "verdict": verdict}
    if gain_interval is not None:    # left out without one: the check is then exactly the plain one
        check["sample_gain_interval_pct"] = list(gain_interval)
    return check

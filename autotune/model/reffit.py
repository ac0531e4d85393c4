"""The fit of the reference kernels (model.refkernels): the in-core time as rank prices it,
each cache level's transfer rate fitted under every composition rule kerncraft accepts, and the
choice of the rule.  Pure."""
from __future__ import annotations

import math
from dataclasses import dataclass

from autotune.arith import ordered_sum
from autotune.model import incore
from autotune.model.refkernels import Model, Reference, Rule, hierarchy_levels, candidates, log_errors, model_error
from autotune.specs.incoremeasure import TOLERANCE as INCORE_TOLERANCE
from autotune.specs.units import quantity

# rules whose errors (mean |log(predicted/measured)|) differ by less than this tie, and the design's
# stays: a bandwidth measured on a shared node moves by about 5 % between runs, so the mean of 20
# kernel-levels is uncertain to about 0.01 (on a 2-core Zen 4 guest the four rules, each with its
# rates fitted, came within 0.006 of each other, and which one was smallest changed between runs)
RULE_TOLERANCE = 0.01
# a rule other than the file's is taken only where it beats the file's clearly: by more than
# RULE_TOLERANCE on the mean, and worse in at most 1 - CLEAR of RESAMPLES paired bootstrap resamples
# of the references (a fixed seed: the same measurements give the same answer).  Three calibrations of
# one Zen 4 guest within 45 minutes chose the additive rule once and the overlapping rule twice,
# and heat2d's predictions moved by up to 2.5 x with the rates fitted under each
CLEAR = 0.95
RESAMPLES = 2000


def clearly_better(a: list[float], b: list[float], tolerance: float = RULE_TOLERANCE) -> bool:
    """Whether the per-reference errors `a` beat `b` (the same references, in order) clearly: a
    mean smaller by more than `tolerance`, and a larger mean in at most 1 - CLEAR of RESAMPLES
    paired bootstrap resamples (a resample without a reference that tells them apart ties)."""
    import random
    if not a or len(a) != len(b) or ordered_sum(a) / len(a) + tolerance >= ordered_sum(b) / len(b):
        return False
    rng = random.Random(0)
    diff = [x - y for x, y in zip(a, b)]
    worse = len([1 for _ in range(RESAMPLES) if ordered_sum([rng.choice(diff) for _ in diff]) > 0.0])
    return worse <= (1.0 - CLEAR) * RESAMPLES


# ---------------------------------------------------------------- the in-core time, measured


@dataclass(frozen=True)
class InCore:
    """A reference kernel's in-core time as rank prices a kernel part's (model.incore)."""
    kernel: str
    port: float                # the port model's: max(T_comp, T_RegL1), cy/CL
    measured: float | None     # the streaming benchmark's in L1: the kernel's in-core time
    source: str                # incore.MEASURED or incore.PORT_MODEL
    why: str
    factor: float              # on T_comp and T_RegL1 (1: the port model's)


def incore_policy(data: dict) -> tuple[str | None, float]:
    """The file's `in-core measured` section: (when, tolerance); when None: the file has none, and
    rank prices every part by the port model."""
    section = data.get("in-core measured") or {}
    when = section.get("when")
    return (str(when) if when else None), float(section.get("tolerance", INCORE_TOLERANCE))


def in_core(refs: list[Reference], first_level: str, when: str | None, tolerance: float) -> dict[str, InCore]:
    """Each analysed kernel's in-core time: its measurement in the first cache level (where the
    time is max(T_comp, T_RegL1) under every rule) used as rank uses a kernel part's, by the
    file's `in-core measured` (model.incore.choose: always, or where it is off the port model by
    more than the tolerance), both in-core terms scaled by one factor (model.incore.factor)."""
    out: dict[str, InCore] = {}
    for r in refs:
        if r.terms is None or (r.kernel in out and r.level != first_level):
            continue
        t = r.terms
        measured = r.measured if r.level == first_level else None
        if when is None:
            source, why = incore.PORT_MODEL, "the file measures no in-core time (no `in-core measured`)"
        else:
            source, why = incore.choose(max(t.t_comp, t.t_regl1), measured, when, tolerance)
        k = incore.factor(t.t_comp, t.t_regl1, measured) if source == incore.MEASURED else 1.0
        out[r.kernel] = InCore(r.kernel, max(t.t_comp, t.t_regl1), measured, source, why, k)
    return out


# ---------------------------------------------------------------- the cache levels' rates, fitted

RATE_GRID = tuple(q / 4 for q in range(16, 1025))   # every 0.25 B/cy from 4 to 256
MIN_KERNELS = 3    # references of a level whose data crosses its interface, for its rate to be fitted


@dataclass(frozen=True)
class LevelRate:
    """A cache level's upstream throughput: the design's (as the file was written and analysed)
    and the one it is priced at, fitted to the level's references or kept."""
    level: str
    design: float              # B/cy
    duplex: str                # half-duplex | full-duplex, kept either way
    rate: float                # B/cy
    fitted: bool
    kernels: int               # references of the level measured and analysed whose data crosses it
    why: str = ""              # why the design's rate is kept
    bound: bool = False        # the fit is at the end of the grid searched

    def to_dict(self) -> dict:
        return {"design": self.design, "rate": self.rate, "duplex": self.duplex, "fitted": self.fitted,
                "kernels": self.kernels, **({"why": self.why} if self.why else {}),
                **({"at_bound": True} if self.bound else {})}


def design_rates(data: dict) -> dict[str, tuple[float, str]]:
    """The cache levels' upstream throughput as the file states it, L2 first: {level: (B/cy,
    duplexness)}; a level whose throughput is not in B/cy (L1's names the in-core model) is left out."""
    out = {}
    for lv in hierarchy_levels(data):
        if not lv.get("cache per group"):
            continue
        rate, duplex = (list(lv.get("upstream throughput") or []) + [None, None])[:2]
        try:
            out[str(lv["level"])] = (quantity(rate, "throughput"), str(duplex))
        except (ValueError, TypeError):
            continue
    return out


def with_rates(data: dict, rates: dict[str, float]) -> dict:
    """data with each named cache level's upstream throughput at its rate (B/cy, written as the
    grid holds it: two decimals), its duplexness kept; changed in place."""
    for lv in hierarchy_levels(data):
        name = str(lv["level"])
        if name in rates:
            duplex = list(lv["upstream throughput"])[1]
            lv["upstream throughput"] = [f"{rates[name]:.2f} B/cy", str(duplex)]
    return data


def fit_rates(refs: list[Reference], rule: Rule, incore_factors: dict[str, float],
              design: dict[str, tuple[float, str]], tolerance: float = 1e-12) -> tuple[LevelRate, ...]:
    """Each cache level's rate under the rule and in-core time, level by level from L2 down: the
    rate of the grid (RATE_GRID, and the design's) with the smallest mean |log(predicted /
    measured)| over that level's references, the rates of the levels above as fitted before it
    (a reference's data in L3 crosses L2's interface too).  A transfer's cycles are lines over
    the rate (kerncraft's models/ecm.py, half- and full-duplex alike), so the terms analysed at
    the design's rate are rescaled, not analysed again.  Ties go to the rate nearest the design's
    (a level whose references are bound elsewhere, in-core, keeps it).  A level with fewer than
    MIN_KERNELS references whose data crosses its interface keeps the design's rate."""
    analysed = {lv: r for lv, (r, _) in design.items()}
    rates: dict[str, float] = {}
    out = []
    for level, (rate0, duplex) in design.items():
        here = [r for r in refs if r.level == level and r.measured and r.terms is not None]
        crossing = len([r for r in here if dict(r.terms.transfers).get(level, 0.0) > 0.0])
        if crossing < MIN_KERNELS:
            rates[level] = rate0
            out.append(LevelRate(level, rate0, duplex, rate0, False, crossing,
                                 f"{crossing} reference kernel{'s' if crossing != 1 else ''} measured in {level} "
                                 f"(fewer than {MIN_KERNELS})"))
            continue
        grid = sorted(set(RATE_GRID) | ({rate0} if RATE_GRID[0] <= rate0 <= RATE_GRID[-1] else set()))
        scored = []
        for g in grid:
            m = Model(rule, tuple((rates | {level: g}).items()), tuple(incore_factors.items()))
            scored.append((model_error(here, m, analysed), abs(math.log(g / rate0)), g))
        best = min(e for e, _, _ in scored)
        rate = min((d, g) for e, d, g in scored if e <= best + tolerance)[1]
        rates[level] = rate
        out.append(LevelRate(level, rate0, duplex, rate, True, crossing,
                             bound=rate in (RATE_GRID[0], RATE_GRID[-1])))
    return tuple(out)


# ---------------------------------------------------------------- the fit: rule, rates, in-core


@dataclass(frozen=True)
class Fit:
    """The model settled on, and how it was found."""
    model: Model                                    # the rule, the fitted rates, the in-core factors
    as_written: Rule
    rates: tuple[LevelRate, ...]                    # each cache level's under the rule chosen
    incore: tuple[InCore, ...]
    errors: tuple[tuple[Rule, float | None], ...]   # each candidate rule's, with its own fitted rates
    as_designed: float | None                       # the file as written: its rule and rates, the port model
    incore_measured: float | None                   # its rule and rates with the in-core time as rank's
    compared: int                                   # references both measured and analysed
    analysed: tuple[tuple[str, float], ...] = ()    # the rate each level was analysed at
    incore_rule: str = ""                           # which in-core time rank uses (incore_rule())
    rule_rates: tuple[tuple[Rule, tuple[LevelRate, ...]], ...] = ()   # each candidate rule's fitted rates

    @property
    def rule(self) -> Rule:
        return self.model.rule

    def error_of(self, rule: Rule) -> float | None:
        return dict(self.errors).get(rule)

    @property
    def error(self) -> float | None:
        return self.error_of(self.rule)

    def fitted_rates(self) -> dict[str, float]:
        return {r.level: r.rate for r in self.rates if r.fitted}


def fit_model(refs: list[Reference], as_written: Rule, design: dict[str, tuple[float, str]] | None = None,
              when: str | None = None, tolerance: float = RULE_TOLERANCE,
              incore_tolerance: float = INCORE_TOLERANCE) -> Fit:
    """The model of the smallest error over every rule kerncraft accepts, each rule with the
    cache levels' rates fitted under it (fit_rates; design: the file's rates, {} or None: none
    fitted) and the in-core time as rank prices it (in_core; when: the file's `in-core
    measured.when`, None: the port model's).  A tie (errors within `tolerance`) goes to the rule
    as written, then to the one that changes fewest levels, and another rule than the file's wins
    only where it is clearly better (clearly_better): only the data moves the file away from what
    it says.  Without a reference to compare, the file stays as written."""
    design = design or {}
    analysed = {lv: r for lv, (r, _) in design.items()}
    first = as_written.levels[0] if as_written.levels else "L1"
    inc = in_core(refs, first, when, incore_tolerance)
    factors = {k: i.factor for k, i in inc.items() if i.factor != 1.0}
    per_rule = {}
    for rule in candidates(as_written.levels):
        rates = fit_rates(refs, rule, factors, design)
        model = Model(rule, tuple((r.level, r.rate) for r in rates), tuple(factors.items()))
        per_rule[rule] = (rates, model, model_error(refs, model, analysed))
    errors = tuple((r, e) for r, (_, _, e) in per_rule.items())
    compared = len(log_errors(refs, Model(as_written), analysed))
    known = [(e, abs(r.overlapping - as_written.overlapping), r) for r, e in errors if e is not None]
    if known:
        best = min(e for e, _, _ in known)
        chosen = min(((d, r) for e, d, r in known if e <= best + tolerance), key=lambda t: t[0])[1]
        if chosen != as_written and as_written in per_rule and per_rule[as_written][2] is not None \
                and not clearly_better(log_errors(refs, per_rule[chosen][1], analysed),
                                       log_errors(refs, per_rule[as_written][1], analysed), tolerance):
            chosen = as_written     # not clearly better: the file's rule stays (CLEAR)
        rates, model, _ = per_rule[chosen]
    else:
        rates = tuple(LevelRate(lv, r, d, r, False, 0, "no reference kernel measured and analysed")
                      for lv, (r, d) in design.items())
        model = Model(as_written)
    return Fit(model, as_written, rates, tuple(inc.values()), errors,
               model_error(refs, Model(as_written), analysed),
               model_error(refs, Model(as_written, (), tuple(factors.items())), analysed), compared,
               tuple(analysed.items()), incore_rule(when, incore_tolerance),
               tuple((r, fitted[0]) for r, fitted in per_rule.items()))

def incore_rule(when: str | None, tolerance: float) -> str:
    """How the file's `in-core measured` says rank uses a measured in-core time."""
    if when is None:
        return "the file measures no in-core time: the port model's"
    if when == "always":
        return "the measured time always: the port model is another core's"
    return f"the measured time where it is more than {100 * tolerance:.0f} % off the port model's"

"""The reference kernels of `calibrate --node`: the streaming kernels whose bandwidths the machine
file holds, analysed with kerncraft's ECM model against that same file, settle how the file
composes data transfers (each cache level's `transfers overlap`) and at what rate each cache
level moves them (its `upstream throughput`).  Pure: the kernels' code, a measured bandwidth as
cycles per cache line of work, kerncraft's composition rule over the ECM terms, the in-core time
as rank prices it, the rates fitted, each rule's error, the choice, and the rows of the table.

kerncraft adds the terms of the levels that do not overlap and takes the maximum with the rest:

    T = max(T_comp, overlapping terms..., sum of the non-overlapping terms)

where T_RegL1 is L1's term, T_L1L2 L2's and so on; the levels that overlap come first (a level
that overlaps below one that does not is refused).  So a rule is how many cache levels, from L1
down, overlap: none (all transfers add) up to all of them (every cache transfer overlaps, main
memory's adds to nothing).  The data of one level tells some rules apart: with the data in L2,
only whether L1 overlaps changes the time (a single non-overlapping term is its own sum).

A cache transfer's term is the bytes of the lines it moves over the level's rate (B/cy), so a
term analysed at the design's rate is rescaled to any other; the in-core terms are scaled by one
factor to the kernel's measured L1 time (model.incore).  Per rule, each level's rate is fitted
to the references of that level, L2 first; the rule whose fitted model errs least is chosen.

A measured kernel names B bytes per iteration (benchmarks_mpi/stream.c counts no write-allocate)
and runs G GB/s: one cache line of work (line / 8 iterations of doubles) takes 8 B / G ns, that
times the file's clock in cycles; kerncraft's prediction is per the same line of work, its
write-allocate reads and evictions included in its terms.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from autotune.arith import ordered_sum
from autotune.model import incore
from autotune.model.learned import scaling
from autotune.specs.hostmachine import RATES_ASSUMED
from autotune.specs.incoremeasure import TOLERANCE as INCORE_TOLERANCE
from autotune.specs.units import quantity

MEMORY = "MEM"      # main memory's level in a machine file
# rules whose errors (mean |log(predicted/measured)|) differ by less than this tie, and the design's
# stays: a bandwidth measured on a shared node moves by about 5 % between runs, so the mean of 20
# kernel-levels is uncertain to about 0.01 (on a 2-core Zen 4 guest the four rules, each with its
# rates fitted, came within 0.006 of each other, and which one was smallest changed between runs)
RULE_TOLERANCE = 0.01

ELEMENT = 8          # bytes of a double
LANES = 32           # partial sums of the benchmark's load kernel


def _load_code() -> str:
    """The benchmark's load: 32 partial sums, so the adds are not one dependency chain (kerncraft
    takes OSACA's loop-carried latency where it exceeds the port throughput: a single sum would
    be predicted latency-bound, 24 cy/CL on Zen 4, where the benchmark streams)."""
    sums = ", ".join(f"s{k}" for k in range(LANES))
    body = "".join(f"    s{k} = s{k} + a[i*{LANES}+{k}];\n" for k in range(LANES))
    return f"double a[N];\ndouble {sums};\n\nfor (int i=0; i<M; ++i) {{\n{body}}}\n"


def _loop(decl: str, statement: str) -> str:
    return f"{decl}\n\nfor (int i=0; i<N; ++i)\n    {statement}\n"


@dataclass(frozen=True)
class RefKernel:
    """One streaming kernel as benchmarks_mpi/stream.c runs it and kerncraft reads it."""
    name: str
    view: str                          # kerncraft C code of the loop: its data transfers
    arrays: int                        # arrays the benchmark splits its working set over
    bytes_per_iteration: int           # the bytes the benchmark counts (no write-allocate)
    code: str | None = None            # the in-core code where it differs from view
    pointer_increment: int | None = None   # bytes per assembly iteration of code (None: kerncraft's)

    @property
    def incore_code(self) -> str:
        return self.code or self.view

    def elements(self, working_set: int) -> int:
        """Elements per array at a working set of `working_set` bytes, as the benchmark sizes them."""
        return max(working_set // (ELEMENT * self.arrays), 64)

    def incore_constants(self) -> dict[str, int]:
        """Constants of the in-core code (its loop bound is a run-time argument: any size will do)."""
        return {"N": 4096, "M": 4096 // LANES} if self.code else {"N": 4096}


REFERENCE_KERNELS = (
    RefKernel("load", _loop("double a[N];\ndouble s;", "s = s + a[i];"), 1, 8, _load_code(), LANES * ELEMENT),
    # + 0.0 as in the benchmark: the compiler would make a plain copy loop a memcpy call
    RefKernel("copy", _loop("double a[N], b[N];", "b[i] = a[i] + 0.0;"), 2, 16),
    RefKernel("update", _loop("double a[N];\ndouble s;", "a[i] = s * a[i];"), 1, 16),
    RefKernel("triad", _loop("double a[N], b[N], c[N], d[N];", "a[i] = b[i] + c[i] * d[i];"), 4, 32),
    RefKernel("daxpy", _loop("double a[N], b[N];\ndouble s;", "a[i] = a[i] + s * b[i];"), 2, 24),
)


def measured_cy_per_cl(bytes_per_iteration: float, gbs: float, clock_hz: float, line: int = 64) -> float:
    """Cycles per cache line of work (line / 8 iterations) of a kernel that names
    bytes_per_iteration bytes and ran at gbs GB/s, at clock_hz."""
    return (line / ELEMENT) * bytes_per_iteration / gbs * clock_hz / 1e9


# ---------------------------------------------------------------- the machine file, read


def _levels(data: dict) -> list[dict]:
    return list(data["memory hierarchy"])


def cache_levels(data: dict) -> list[str]:
    """The cache levels of a machine file, L1 first (main memory is not one)."""
    return [str(lv["level"]) for lv in _levels(data) if lv.get("cache per group")]


def _q(value, kind: str) -> float:
    """A quantity as read from a file: plain text, or a scalar a YAML loader tagged (kerncraft,
    once imported, tags '2.6 GHz' as a prefixed unit in every round-trip load)."""
    return quantity(value if isinstance(value, (int, float)) else str(value), kind)


def clock_hz(data: dict) -> float:
    return _q(data["clock"], "frequency")


def line_bytes(data: dict) -> int:
    return int(_q(data.get("cacheline size", 64), "size"))


def one_thread(data: dict) -> dict[str, dict]:
    """What the file's streaming benchmark measured on one thread, per level:
    {level: {"working_set": bytes, "gbs": {kernel: GB/s}}}; a level without a one-thread run is left out."""
    return _runs(data, lambda threads: 1 if 1 in threads else None)


def every_core(data: dict) -> dict[str, dict]:
    """What it measured in main memory on every core at once (the most threads it ran), where that
    is more than one: {"MEM": {"working_set", "gbs", "threads"}}, else {}."""
    got = _runs(data, lambda threads: max(threads) if threads and max(threads) > 1 else None)
    return {lv: run for lv, run in got.items() if lv == MEMORY}


def _runs(data: dict, pick) -> dict[str, dict]:
    out = {}
    meas = ((data.get("benchmarks") or {}).get("measurements")) or {}
    for level, per_smt in meas.items():
        runs = next(iter(per_smt.values()), None) if isinstance(per_smt, dict) else None
        threads = [int(t) for t in (runs.get("threads") or [])] if runs else []
        t = pick(threads) if threads else None
        if t is None:
            continue
        i = threads.index(t)
        gbs = {}
        for kernel, values in (runs.get("results") or {}).items():
            try:
                gbs[str(kernel)] = _q(values[i], "bandwidth") / 1e9
            except (ValueError, IndexError, TypeError):
                continue
        out[str(level)] = {"working_set": int(_q(runs["size per thread"][i], "size")), "gbs": gbs, "threads": t}
    return out


# ---------------------------------------------------------------- the rules


@dataclass(frozen=True)
class Rule:
    """How a machine file composes transfers: how many cache levels, L1 first, overlap."""
    levels: tuple[str, ...]            # the cache levels, L1 first
    overlapping: int                   # the first `overlapping` of them have transfers overlap

    def flags(self) -> dict[str, bool]:
        return {lv: i < self.overlapping for i, lv in enumerate(self.levels)}

    def describe(self) -> str:
        if self.overlapping == len(self.levels):
            return "overlapping (every cache transfer overlaps)"
        if self.overlapping == 0:
            return "additive (no transfer overlaps)"
        on, off = self.levels[:self.overlapping], self.levels[self.overlapping:]
        return (f"{self.short} ({', '.join(on)} transfers overlap, {', '.join(off)} "
                f"transfer{'s add' if len(off) > 1 else ' adds'})")

    @property
    def short(self) -> str:
        """overlapping, additive, or the overlapping levels' span ("overlap L1-L2")."""
        if self.overlapping == len(self.levels):
            return "overlapping"
        if self.overlapping == 0:
            return "additive"
        on = self.levels[:self.overlapping]
        return f"overlap {on[0]}" + (f"-{on[-1]}" if len(on) > 1 else "")


def rule_of(data: dict) -> Rule:
    """The rule a machine file states: its cache levels' `transfers overlap`, read as kerncraft
    reads them (the overlapping levels first)."""
    levels = tuple(cache_levels(data))
    flags = {str(lv["level"]): bool(lv.get("transfers overlap")) for lv in _levels(data)}
    n = 0
    while n < len(levels) and flags[levels[n]]:
        n += 1
    return Rule(levels, n)


def candidates(levels: tuple[str, ...]) -> list[Rule]:
    """Every rule kerncraft accepts for these cache levels: all overlapping first, none last."""
    return [Rule(levels, n) for n in range(len(levels), -1, -1)]


def flipped(rule: Rule) -> Rule:
    """The other whole-file rule: every cache level flipped (none where some overlap, all where none do)."""
    return Rule(rule.levels, 0 if rule.overlapping else len(rule.levels))


def with_rule(data: dict, rule: Rule) -> dict:
    """data with each cache level's `transfers overlap` as the rule says (main memory's stays
    false: its transfer is the one the overlapping terms are compared with); changed in place."""
    flags = rule.flags()
    for lv in _levels(data):
        lv["transfers overlap"] = flags.get(str(lv["level"]), False)
    return data


# ---------------------------------------------------------------- kerncraft's composition


@dataclass(frozen=True)
class EcmTerms:
    """The terms of one ECM analysis, cycles per cache line of work."""
    t_comp: float
    t_regl1: float
    transfers: tuple[tuple[str, float], ...]   # (level the data moves to, cycles): L2, L3, ..., MEM
    penalty: float = 0.0

    @classmethod
    def of(cls, d: dict) -> "EcmTerms":
        return cls(float(d["t_comp"]), float(d["t_regl1"]),
                   tuple((str(lv), float(c)) for lv, c in d["transfers"]), float(d.get("penalty", 0.0)))

    def priced(self, rates: dict[str, float], analysed: dict[str, float], incore_factor: float = 1.0) -> "EcmTerms":
        """The terms with each named level's transfer at its rate (B/cy) instead of the rate it was
        analysed at, and both in-core terms times incore_factor (model.incore.factor).  kerncraft's
        cycles of a cache transfer are lines over the rate, (loads + stores) * line / rate
        half-duplex, max(loads, stores) * line / rate full-duplex (models/ecm.py
        calculate_cycles): inversely proportional to it either way."""
        transfers = tuple((lv, c * analysed[lv] / rates[lv] if lv in rates and lv in analysed else c)
                          for lv, c in self.transfers)
        return EcmTerms(self.t_comp * incore_factor, self.t_regl1 * incore_factor, transfers, self.penalty)

    def to_dict(self) -> dict:
        return {"T_comp": self.t_comp, "T_RegL1": self.t_regl1,
                **{f"T_{a}{b}": c for a, (b, c) in zip(["L1"] + [lv for lv, _ in self.transfers], self.transfers)}}


def compose(terms: EcmTerms, rule: Rule) -> float:
    """kerncraft's single-core ECM time (models/ecm.py ECM.analyze): T_comp and the terms of the
    overlapping levels each on their own, the rest (and a memory penalty) added up; the maximum."""
    flags = rule.flags()
    first = rule.levels[0] if rule.levels else "L1"
    overlapping, serial = [terms.t_comp], []
    (overlapping if flags.get(first, False) else serial).append(terms.t_regl1)
    for level, cycles in terms.transfers:
        (overlapping if flags.get(level, False) else serial).append(cycles)
    if terms.penalty:
        serial.append(terms.penalty)
    return max(ordered_sum(serial), *overlapping)


# ---------------------------------------------------------------- predicted against measured


@dataclass(frozen=True)
class Reference:
    """One reference kernel in one level: what was measured (cy/CL on one core; None: not
    measured) and kerncraft's terms (None: not analysed, with why), as analysed against the file
    as written (its cache levels' rates)."""
    kernel: str
    level: str
    measured: float | None
    terms: EcmTerms | None
    error: str | None = None
    cores: int = 1             # cores it ran on at once: node cycles per cache line (main memory)


def references(analyses: dict, measured: dict, clock: float, line: int = 64,
               kernels: tuple[RefKernel, ...] = REFERENCE_KERNELS, every: dict | None = None) -> list[Reference]:
    """The references from the edge's analyses ({kernel: {level: {"terms": ...} | {"error": ...}}})
    and the file's one-thread measurements (one_thread()), kernel by kernel, level by level.
    every (every_core()): main memory measured on every core at once, compared there instead.

    Main memory is compared on every core because that is where the model and a single core part
    ways by design: kerncraft's single-core time prices the memory transfer at the bandwidth of
    all the cores of a NUMA domain, which one core alone does not reach (its latency-bound share
    is what the multi-core curve adds), and the solver runs on every core.  So its one-core rows
    would judge the composition rule by something the rule is not about."""
    out = []
    for k in kernels:
        for level, run in measured.items():
            run = (every or {}).get(level, run)
            gbs = run["gbs"].get(k.name)
            cy = measured_cy_per_cl(k.bytes_per_iteration, gbs, clock, line) if gbs and gbs > 0 else None
            a = (analyses.get(k.name) or {}).get(level) or {"error": "not analysed"}
            terms = EcmTerms.of(a["terms"]) if "terms" in a else None
            out.append(Reference(k.name, level, cy, terms, a.get("error"), int(run.get("threads", 1))))
    return out


@dataclass(frozen=True)
class Model:
    """How the references are priced: the rule, the rate (B/cy) each cache level's transfer is
    priced at where it differs from the rate it was analysed at, and each kernel's in-core factor
    (on T_comp and T_RegL1; 1 where a kernel is not named)."""
    rule: Rule
    rates: tuple[tuple[str, float], ...] = ()
    incore: tuple[tuple[str, float], ...] = ()


def predict(ref: Reference, model: Model, analysed: dict[str, float]) -> float | None:
    """The reference's cycles per cache line of work under the model (None: not analysed);
    analysed: the rate (B/cy) each level's transfer was analysed at."""
    if ref.terms is None:
        return None
    terms = ref.terms.priced(dict(model.rates), analysed, dict(model.incore).get(ref.kernel, 1.0))
    single = compose(terms, model.rule)
    if ref.cores <= 1:
        return single
    t_mem = terms.transfers[-1][1] if terms.transfers and terms.transfers[-1][0] == MEMORY else 0.0
    return scaling(single, t_mem, ref.cores, ref.cores)[1][ref.cores - 1]


def _log_errors(refs: list[Reference], model: Model, analysed: dict[str, float]) -> list[float]:
    out = []
    for r in refs:
        if r.measured and r.terms is not None:
            p = predict(r, model, analysed)
            if p > 0:
                out.append(abs(math.log(p / r.measured)))
    return out


def model_error(refs: list[Reference], model: Model, analysed: dict[str, float] | None = None) -> float | None:
    """The mean |log(predicted / measured)| over the references both measured and analysed (None:
    no such reference).  The mean, not the median: a reference that every rule predicts alike
    (its data in L1, or its in-core time above its transfers) adds the same to each rule's mean,
    so two rules compare on the references that tell them apart, however few; a median can hide
    them where they are fewer than half (two rules that differ in memory's references alone tie
    unless those sit at the middle)."""
    e = _log_errors(refs, model, analysed or {})
    return ordered_sum(e) / len(e) if e else None


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
    for lv in _levels(data):
        if not lv.get("cache per group"):
            continue
        rate, duplex = (list(lv.get("upstream throughput") or []) + [None, None])[:2]
        try:
            out[str(lv["level"])] = (_q(rate, "throughput"), str(duplex))
        except (ValueError, TypeError):
            continue
    return out


def with_rates(data: dict, rates: dict[str, float]) -> dict:
    """data with each named cache level's upstream throughput at its rate (B/cy, written as the
    grid holds it: two decimals), its duplexness kept; changed in place."""
    for lv in _levels(data):
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
    as written, then to the one that changes fewest levels: only the data moves the file away
    from what it says.  Without a reference to compare, the file stays as written."""
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
    compared = len(_log_errors(refs, Model(as_written), analysed))
    known = [(e, abs(r.overlapping - as_written.overlapping), r) for r, e in errors if e is not None]
    if known:
        best = min(e for e, _, _ in known)
        chosen = min(((d, r) for e, d, r in known if e <= best + tolerance), key=lambda t: t[0])[1]
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


# ---------------------------------------------------------------- what is reported and written


def table_rows(refs: list[Reference], fit: Fit) -> list[dict]:
    """The rows of the reference table under the fitted model: kernel, level, measured and
    predicted cy/CL and their ratio (None where one is missing), the prediction as the file was
    designed (its rule and rates, the port model's in-core time), the ECM terms as priced."""
    analysed = dict(fit.analysed)
    designed = Model(fit.as_written)
    rows = []
    for r in refs:
        pred = predict(r, fit.model, analysed)
        before = predict(r, designed, analysed)
        row = {"kernel": r.kernel, "level": r.level, "cores": r.cores, "measured_cy_cl": r.measured,
               "predicted_cy_cl": pred,
               "ratio": pred / r.measured if pred is not None and r.measured else None,
               "designed_cy_cl": before,
               "designed_ratio": before / r.measured if before is not None and r.measured else None}
        if r.terms is not None:
            row["terms"] = r.terms.priced(dict(fit.model.rates), analysed,
                                          dict(fit.model.incore).get(r.kernel, 1.0)).to_dict()
        if r.error:
            row["error"] = r.error
        rows.append(row)
    return rows


def summary(fit: Fit, refs: list[Reference], clock: float, wall_s: float) -> dict:
    """What calibrate --node reports of the check (HostMachineResult.reference_kernels); clock:
    the file's, in Hz, that the measured bandwidths were turned into cycles with."""
    return {
        "rule": fit.rule.short, "as_written": fit.as_written.short,
        "overlap": fit.rule.flags(),
        "errors": {r.short: e for r, e in fit.errors},
        "rule_rates": {r.short: {lv.level: lv.rate for lv in rates} for r, rates in fit.rule_rates},
        "error_as_designed": fit.as_designed, "error_incore_measured": fit.incore_measured,
        "error_fitted": fit.error,
        "rates": {r.level: r.to_dict() for r in fit.rates},
        "incore_rule": fit.incore_rule,
        "incore": {i.kernel: {"source": i.source, "why": i.why, "port_cy_cl": i.port,
                              "measured_cy_cl": i.measured, "factor": i.factor} for i in fit.incore},
        "compared": fit.compared, "clock_ghz": clock / 1e9, "wall_s": wall_s,
        "rows": table_rows(refs, fit),
    }


def err_text(e: float | None) -> str:
    return "n/a" if e is None else f"{e:.3f}"


def describe_rates(rates: tuple[LevelRate, ...]) -> str:
    """L2 36.50 B/cy half-duplex (design 64.00), L3 32.00 B/cy (the design's: why it is kept)"""
    def one(r: LevelRate) -> str:
        if not r.fitted:
            return f"{r.level} {r.design:.2f} B/cy (the design's: {r.why})"
        return (f"{r.level} {r.rate:.2f} B/cy {r.duplex} (design {r.design:.2f}"
                + (", at the bound of the search" if r.bound else "") + ")")
    return ", ".join(one(r) for r in rates)


def _rates_short(rates: tuple[LevelRate, ...]) -> str:
    return ", ".join(f"{r.level} {r.rate:.2f}" for r in rates) + " B/cy"


def describe_incore(inc: tuple[InCore, ...]) -> str:
    """measured for load 1.25 cy/CL (port model 1.00); the port model's for copy 2.00 (measured 2.24), ..."""
    measured = [f"{i.kernel} {i.measured:.2f} cy/CL (port model {i.port:.2f})"
                for i in inc if i.source == incore.MEASURED]
    port = [f"{i.kernel} {i.port:.2f}" + (f" (measured {i.measured:.2f})" if i.measured else " (not measured)")
            for i in inc if i.source != incore.MEASURED]
    return "; ".join(([f"measured for {', '.join(measured)}"] if measured else [])
                     + ([f"the port model's for {', '.join(port)}"] if port else [])) or "none analysed"


def incore_rule(when: str | None, tolerance: float) -> str:
    """How the file's `in-core measured` says rank uses a measured in-core time."""
    if when is None:
        return "the file measures no in-core time: the port model's"
    if when == "always":
        return "the measured time always: the port model is another core's"
    return f"the measured time where it is more than {100 * tolerance:.0f} % off the port model's"


def provenance(fit: Fit, design_note: str = "") -> dict:
    """The machine file's provenance.transfers: the rule settled on and why, the rates, the
    in-core time the references are priced with, and the errors before and after; design_note:
    where the design's rates come from."""
    if not fit.compared:
        return {"overlap": f"{fit.rule.describe()}, as the design states it (assumed: no reference kernel "
                           f"was both measured and analysed)",
                "rates": "the design's" + (f": {design_note}" if design_note else "") + ", assumed"}
    rates_of = dict(fit.rule_rates)
    others = "; ".join(f"{r.short} {err_text(e)}" + (f" ({_rates_short(rates_of[r])})" if rates_of.get(r) else "")
                       for r, e in fit.errors if r != fit.rule)
    how = "as the design states it" if fit.rule == fit.as_written else \
        f"instead of the design's {fit.as_written.short}"
    return {
        "overlap": f"{fit.rule.describe()}, {how}: the reference kernels (the streaming kernels analysed "
                   f"against this file, {fit.compared} kernel-level pairs on one core) fit it best, each rule "
                   f"with its own fitted rates, mean |log(predicted/measured)| {err_text(fit.error)} against {others}",
        "rates": f"{describe_rates(fit.rates)}: each level's fitted to its reference kernels, L2 first, "
                 f"{RATE_GRID[0]:g}-{RATE_GRID[-1]:g} B/cy in steps of {RATE_GRID[1] - RATE_GRID[0]:g}, "
                 f"smallest mean |log(predicted/measured)|"
                 + (f"; the design: {design_note}" if design_note else ""),
        "in-core": f"{describe_incore(fit.incore)}: {fit.incore_rule}, as rank prices a kernel part; the "
                   f"measured time is the kernel's one-thread run in L1",
        "error": f"mean |log(predicted/measured)| over {fit.compared} kernel-levels: {err_text(fit.as_designed)} "
                 f"as designed (its rule and rates, the port model's in-core times), "
                 f"{err_text(fit.incore_measured)} with the in-core times, {err_text(fit.error)} with the rule and "
                 f"rates fitted",
    }


def assumed_after(assumed: str, fit: Fit) -> tuple[str, str]:
    """provenance.assumed once the rates are fitted, and the design's note it named (''): its
    clause on the design's cache transfer rates (specs.hostmachine writes it first, "cache
    transfer rates of the <design> design (<source>)") goes where every level's rate is fitted,
    and names the levels that keep the design's otherwise."""
    clauses = assumed.split("; ")
    at = next((i for i, c in enumerate(clauses) if c.startswith(RATES_ASSUMED)), None)
    if at is None:
        return assumed, ""
    note = clauses[at][len(RATES_ASSUMED):]
    kept = [r.level for r in fit.rates if not r.fitted]
    if len(kept) == len(fit.rates):
        return assumed, note
    if kept:
        clauses[at] = f"{', '.join(kept)} cache transfer rate{'s' if len(kept) > 1 else ''} of {note}"
    else:
        del clauses[at]
    return "; ".join(clauses), note


def disagreements(analyses: dict, as_written: Rule, rel: float = 1e-9) -> list[str]:
    """Where kerncraft's own totals (the file as written and flipped) differ from compose() over
    its terms: compose() is how the other rules are priced, so it must be kerncraft's rule."""
    out = []
    for kernel, levels in analyses.items():
        for level, a in levels.items():
            if "terms" not in a:
                continue
            terms = EcmTerms.of(a["terms"])
            for rule, total in ((as_written, a["as_written"]), (flipped(as_written), a["flipped"])):
                if abs(compose(terms, rule) - total) > rel * max(1.0, abs(total)):
                    out.append(f"{kernel} in {level}, {rule.short}: kerncraft {total:.4g}, "
                               f"composed {compose(terms, rule):.4g} cy/CL")
    return out

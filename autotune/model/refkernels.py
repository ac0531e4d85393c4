"""The reference kernels of `calibrate --node`: the streaming kernels whose bandwidths the machine
file holds, analysed with kerncraft's ECM model against that same file, settle how the file
composes data transfers (each cache level's `transfers overlap`) and at what rate each cache
level moves them (its `upstream throughput`).  Pure: the kernels' code, a measured bandwidth as
cycles per cache line of work, kerncraft's composition rule over the ECM terms, the in-core time
as rank prices it, and each model's error; model.reffit fits the rates and chooses the rule,
model.refreport writes the table and the provenance.

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

A measured kernel names B bytes per iteration (autotune/tools/stream.c counts no write-allocate)
and runs G GB/s: one cache line of work (line / 8 iterations of doubles) takes 8 B / G ns, that
times the file's clock in cycles; kerncraft's prediction is per the same line of work, its
write-allocate reads and evictions included in its terms.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

from autotune.arith import ordered_sum
from autotune.model.learned import scaling
from autotune.specs import stencils
from autotune.specs.units import quantity

MEMORY = "MEM"      # main memory's level in a machine file

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
    """One streaming kernel as autotune/tools/stream.c runs it and kerncraft reads it."""
    name: str
    view: str                          # kerncraft C code of the loop: its data transfers
    arrays: int                        # arrays the benchmark splits its working set over
    bytes_per_iteration: int           # the bytes the benchmark counts (no write-allocate)
    code: str | None = None            # the in-core code where it differs from view
    pointer_increment: int | None = None   # bytes per assembly iteration of code (None: kerncraft's)
    row: int | None = None             # a reference stencil's row (doubles): its arrays are rows
    levels: tuple[str, ...] | None = None   # the levels it was measured in (None: every level)

    @property
    def incore_code(self) -> str:
        return self.code or self.view

    def elements(self, working_set: int) -> int:
        """Elements per array at a working set of `working_set` bytes, as the benchmark sizes them."""
        return max(working_set // (ELEMENT * self.arrays), 64)

    def constants(self, working_set: int) -> dict[str, int]:
        """The view's constants at a working set of `working_set` bytes, as the benchmark sizes it."""
        if self.row:
            return {"M": stencils.rows_of(self.row, working_set), "N": self.row}
        return {"N": self.elements(working_set)}

    def incore_constants(self) -> dict[str, int]:
        """Constants of the in-core code (its loop bound is a run-time argument: any size will do)."""
        if self.row:
            return {"M": 16, "N": self.row}
        return {"N": 4096, "M": 4096 // LANES} if self.code else {"N": 4096}

    def measured_in(self, level: str) -> bool:
        return self.levels is None or level in self.levels


REFERENCE_KERNELS = (
    RefKernel("load", _loop("double a[N];\ndouble s;", "s = s + a[i];"), 1, 8, _load_code(), LANES * ELEMENT),
    # + 0.0 as in the benchmark: the compiler would make a plain copy loop a memcpy call
    RefKernel("copy", _loop("double a[N], b[N];", "b[i] = a[i] + 0.0;"), 2, 16),
    RefKernel("update", _loop("double a[N];\ndouble s;", "a[i] = s * a[i];"), 1, 16),
    RefKernel("triad", _loop("double a[N], b[N], c[N], d[N];", "a[i] = b[i] + c[i] * d[i];"), 4, 32),
    RefKernel("daxpy", _loop("double a[N], b[N];\ndouble s;", "a[i] = a[i] + s * b[i];"), 2, 24),
)
# the reference stencils (specs.stencils): b = the five-point sum of a, rows of N doubles
STENCIL_VIEW = ("double a[M][N], b[M][N];\n\nfor (int j=1; j<M-1; ++j)\n    for (int i=1; i<N-1; ++i)\n"
                "        b[j][i] = a[j-1][i] + a[j][i-1] + a[j][i] + a[j][i+1] + a[j+1][i];\n")


def stencil_kernels(data: dict) -> tuple[RefKernel, ...]:
    """The reference stencils a machine file measured, each with its row and levels."""
    measured = stencils.measured_in(data)
    return tuple(RefKernel(name, STENCIL_VIEW, stencils.ARRAYS, stencils.BYTES, row=row,
                           levels=tuple(lv for lv, run in measured.items() if name in run))
                 for name, row in stencils.rows_in(data).items())


def reference_kernels(data: dict) -> tuple[RefKernel, ...]:
    """Every reference kernel of a machine file: the streaming kernels and its stencils."""
    return REFERENCE_KERNELS + stencil_kernels(data)


def measured_cy_per_cl(bytes_per_iteration: float, gbs: float, clock_hz: float, line: int = 64) -> float:
    """Cycles per cache line of work (line / 8 iterations) of a kernel that names
    bytes_per_iteration bytes and ran at gbs GB/s, at clock_hz."""
    return (line / ELEMENT) * bytes_per_iteration / gbs * clock_hz / 1e9


# ---------------------------------------------------------------- the machine file, read


def hierarchy_levels(data: dict) -> list[dict]:
    return list(data["memory hierarchy"])


def cache_levels(data: dict) -> list[str]:
    """The cache levels of a machine file, L1 first (main memory is not one)."""
    return [str(lv["level"]) for lv in hierarchy_levels(data) if lv.get("cache per group")]


def clock_hz(data: dict) -> float:
    return quantity(data["clock"], "frequency")


def line_bytes(data: dict) -> int:
    return int(quantity(data.get("cacheline size", 64), "size"))


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
                gbs[str(kernel)] = quantity(values[i], "bandwidth") / 1e9
            except (ValueError, IndexError, TypeError):
                continue
        out[str(level)] = {"working_set": int(quantity(runs["size per thread"][i], "size")), "gbs": gbs, "threads": t}
    return stencils.with_runs(data, out)


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
    flags = {str(lv["level"]): bool(lv.get("transfers overlap")) for lv in hierarchy_levels(data)}
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
    for lv in hierarchy_levels(data):
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
            if not k.measured_in(level):
                continue
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

    @cached_property
    def rate_of(self) -> dict[str, float]:
        return dict(self.rates)

    @cached_property
    def incore_of(self) -> dict[str, float]:
        return dict(self.incore)


def predict(ref: Reference, model: Model, analysed: dict[str, float]) -> float | None:
    """The reference's cycles per cache line of work under the model (None: not analysed);
    analysed: the rate (B/cy) each level's transfer was analysed at."""
    if ref.terms is None:
        return None
    terms = ref.terms.priced(model.rate_of, analysed, model.incore_of.get(ref.kernel, 1.0))
    single = compose(terms, model.rule)
    if ref.cores <= 1:
        return single
    t_mem = terms.transfers[-1][1] if terms.transfers and terms.transfers[-1][0] == MEMORY else 0.0
    return scaling(single, t_mem, ref.cores, ref.cores)[1][ref.cores - 1]


def log_errors(refs: list[Reference], model: Model, analysed: dict[str, float]) -> list[float]:
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
    e = log_errors(refs, model, analysed or {})
    return ordered_sum(e) / len(e) if e else None


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

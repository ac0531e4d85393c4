"""The reference kernels of `calibrate --node`: the streaming kernels whose bandwidths the machine
file holds, analysed with kerncraft's ECM model against that same file, settle how the file
composes data transfers (each cache level's `transfers overlap`).  Pure: the kernels' code, a
measured bandwidth as cycles per cache line of work, kerncraft's composition rule over the ECM
terms, each rule's error, the choice, and the rows of the table.

kerncraft adds the terms of the levels that do not overlap and takes the maximum with the rest:

    T = max(T_comp, overlapping terms..., sum of the non-overlapping terms)

where T_RegL1 is L1's term, T_L1L2 L2's and so on; the levels that overlap come first (a level
that overlaps below one that does not is refused).  So a rule is how many cache levels, from L1
down, overlap: none (all transfers add) up to all of them (every cache transfer overlaps, main
memory's adds to nothing).  The data of one level tells some rules apart: with the data in L2,
only whether L1 overlaps changes the time (a single non-overlapping term is its own sum).

A measured kernel names B bytes per iteration (benchmarks_mpi/stream.c counts no write-allocate)
and runs G GB/s: one cache line of work (line / 8 iterations of doubles) takes 8 B / G ns, that
times the file's clock in cycles; kerncraft's prediction is per the same line of work, its
write-allocate reads and evictions included in its terms.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from autotune.arith import ordered_sum
from autotune.specs.units import quantity

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
    out = {}
    meas = ((data.get("benchmarks") or {}).get("measurements")) or {}
    for level, per_smt in meas.items():
        runs = next(iter(per_smt.values()), None) if isinstance(per_smt, dict) else None
        if not runs or 1 not in list(runs.get("threads") or []):
            continue
        i = list(runs["threads"]).index(1)
        gbs = {}
        for kernel, values in (runs.get("results") or {}).items():
            try:
                gbs[str(kernel)] = _q(values[i], "bandwidth") / 1e9
            except (ValueError, IndexError, TypeError):
                continue
        out[str(level)] = {"working_set": int(_q(runs["size per thread"][i], "size")), "gbs": gbs}
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
    measured) and kerncraft's terms (None: not analysed, with why)."""
    kernel: str
    level: str
    measured: float | None
    terms: EcmTerms | None
    error: str | None = None


def references(analyses: dict, measured: dict, clock: float, line: int = 64,
               kernels: tuple[RefKernel, ...] = REFERENCE_KERNELS) -> list[Reference]:
    """The references from the edge's analyses ({kernel: {level: {"terms": ...} | {"error": ...}}})
    and the file's one-thread measurements (one_thread()), kernel by kernel, level by level."""
    out = []
    for k in kernels:
        for level, run in measured.items():
            gbs = run["gbs"].get(k.name)
            cy = measured_cy_per_cl(k.bytes_per_iteration, gbs, clock, line) if gbs and gbs > 0 else None
            a = (analyses.get(k.name) or {}).get(level) or {"error": "not analysed"}
            terms = EcmTerms.of(a["terms"]) if "terms" in a else None
            out.append(Reference(k.name, level, cy, terms, a.get("error")))
    return out


def _log_errors(refs: list[Reference], rule: Rule) -> list[float]:
    out = []
    for r in refs:
        if r.measured and r.terms is not None:
            p = compose(r.terms, rule)
            if p > 0:
                out.append(abs(math.log(p / r.measured)))
    return out


def rule_error(refs: list[Reference], rule: Rule) -> float | None:
    """The mean |log(predicted / measured)| of the rule over the references both measured and
    analysed (None: no such reference).  The mean, not the median: a reference that every rule
    predicts alike (its data in L1, or its in-core time above its transfers) adds the same to
    each rule's mean, so two rules compare on the references that tell them apart, however few;
    a median can hide them where they are fewer than half (two rules that differ in memory's
    references alone tie unless those sit at the middle)."""
    e = _log_errors(refs, rule)
    return ordered_sum(e) / len(e) if e else None


@dataclass(frozen=True)
class Choice:
    rule: Rule
    as_written: Rule
    errors: tuple[tuple[Rule, float | None], ...]   # every candidate's error, candidates' order
    compared: int                                   # references both measured and analysed

    def error_of(self, rule: Rule) -> float | None:
        return dict(self.errors).get(rule)


def choose(refs: list[Reference], as_written: Rule, tolerance: float = 1e-12) -> Choice:
    """The rule of the smallest error among every rule kerncraft accepts.  A tie (errors within
    `tolerance`) goes to the rule as written, then to the one that changes fewest levels: only
    the data moves the file away from what it says.  Without a reference to compare, the file
    stays as written."""
    errors = tuple((r, rule_error(refs, r)) for r in candidates(as_written.levels))
    known = [(e, abs(r.overlapping - as_written.overlapping), r) for r, e in errors if e is not None]
    compared = len(_log_errors(refs, as_written))
    if not known:
        return Choice(as_written, as_written, errors, compared)
    best = min(e for e, _, _ in known)
    tied = [(d, r) for e, d, r in known if e <= best + tolerance]
    return Choice(min(tied, key=lambda t: t[0])[1], as_written, errors, compared)


def table_rows(refs: list[Reference], rule: Rule) -> list[dict]:
    """The rows of the reference table under `rule`: kernel, level, measured and predicted cy/CL
    and their ratio (None where one is missing), the ECM terms."""
    rows = []
    for r in refs:
        pred = compose(r.terms, rule) if r.terms is not None else None
        ratio = pred / r.measured if pred is not None and r.measured else None
        row = {"kernel": r.kernel, "level": r.level, "measured_cy_cl": r.measured, "predicted_cy_cl": pred,
               "ratio": ratio}
        if r.terms is not None:
            row["terms"] = r.terms.to_dict()
        if r.error:
            row["error"] = r.error
        rows.append(row)
    return rows


def summary(choice: Choice, refs: list[Reference], clock: float, wall_s: float) -> dict:
    """What calibrate --node reports of the check (HostMachineResult.reference_kernels); clock:
    the file's, in Hz, that the measured bandwidths were turned into cycles with."""
    return {
        "rule": choice.rule.short, "as_written": choice.as_written.short,
        "overlap": choice.rule.flags(),
        "errors": {r.short: e for r, e in choice.errors},
        "compared": choice.compared, "clock_ghz": clock / 1e9, "wall_s": wall_s,
        "rows": table_rows(refs, choice.rule),
    }


def provenance(choice: Choice) -> str:
    """The machine file's provenance.transfers: the rule settled on and why."""
    def err(e):
        return "n/a" if e is None else f"{e:.3f}"
    others = "; ".join(f"{r.short} {err(e)}" for r, e in choice.errors if r != choice.rule)
    if not choice.compared:
        return (f"{choice.rule.describe()}, as the design states it (assumed: no reference kernel "
                f"was both measured and analysed)")
    how = "as the design states it" if choice.rule == choice.as_written else \
        f"instead of the design's {choice.as_written.short}"
    return (f"{choice.rule.describe()}, {how}: the reference kernels (the streaming kernels analysed "
            f"against this file, {choice.compared} kernel-level pairs on one core) fit it best, mean "
            f"|log(predicted/measured)| {err(choice.error_of(choice.rule))} against {others}")


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

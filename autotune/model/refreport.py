"""What calibrate --node reports and writes of the reference kernels (model.refkernels,
model.reffit): the table's rows, the summary, provenance.transfers and what stays assumed.  Pure."""
from __future__ import annotations

from autotune.model import incore
from autotune.model.refkernels import Model, Reference, predict
from autotune.model.reffit import Fit, InCore, LevelRate, RATE_GRID
from autotune.specs.hostmachine import RATES_ASSUMED


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

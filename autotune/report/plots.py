"""Figures (matplotlib, optional), registered by result type: the communication model's fits,
predicted against measured, scalability."""
from __future__ import annotations

from pathlib import Path

from autotune.errors import InputError
from autotune.model.commmodel import OpFit
from autotune.report.registry import plotter
from autotune.results.calibrate import CalibrateResult
from autotune.results.scale import ScaleResult
from autotune.results.tune import TuneResult
from autotune.storage.atomic import replacing
from autotune.storage.paths import OUTPUTS, check_output_path, suffix_choice


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        raise InputError(": needs matplotlib (pip install 'autotune[plots]')", field="plot") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _check_suffix(path: Path) -> None:
    if path.suffix.lower() not in OUTPUTS["plot"].suffixes:
        raise InputError(f"{path}: expected a {suffix_choice(OUTPUTS['plot'].suffixes)} file name", field="plot")


def check_plot_path(path: Path) -> None:
    """Refuse a plot path before the work: unknown extension, no matplotlib, or a folder that
    does not exist or cannot be written."""
    check_output_path(path, "plot", "plot")
    _pyplot()


def _save(plt, fig, path: Path) -> None:
    """The figure to path, whole or not at all (a temporary file of the same suffix, renamed)."""
    try:
        with replacing(path, "plot") as tmp:
            fig.savefig(tmp)
    finally:
        plt.close(fig)


@plotter(CalibrateResult)
def calibration_figure(res: CalibrateResult, path: Path) -> None:
    calibration_plot(res.raw, res.to_dict(), path)


def calibration_plot(raw: dict[str, list[dict]], result: dict, path: Path) -> None:
    """One panel per operation: per-p medians (min..max bars), per-p fits (solid), joint fit (dashed)."""
    _check_suffix(path)
    plt = _pyplot()
    ops = [op for op in result["operations"]]
    fig, axes = plt.subplots(1, len(ops), figsize=(5 * len(ops), 4.2), squeeze=False)
    for ax, op in zip(axes[0], ops):
        fit = OpFit.from_dict(op, result["operations"][op]["fit"])
        joint = OpFit(op, fit.segments, fit.points)
        for i, p in enumerate(sorted({r["params"]["p"] for r in raw[op]})):
            recs = sorted((r for r in raw[op] if r["params"]["p"] == p), key=lambda r: r["params"]["bytes"])
            x = [r["params"]["bytes"] for r in recs]
            med = [r["median"] for r in recs]
            err = [[m - r["min"] for m, r in zip(med, recs)], [r["max"] - m for m, r in zip(med, recs)]]
            color = f"C{i}"
            ax.errorbar(x, med, yerr=err, fmt="o", ms=3, color=color, label=f"measured p={p}")
            ax.plot(x, [fit.predict(m, p) for m in x], "-", color=color, lw=1, label=f"fit p={p}")
            ax.plot(x, [joint.predict(m, p) for m in x], "--", color=color, lw=1, alpha=0.6)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("message bytes per rank")
        ax.set_ylabel("seconds")
        h = result["operations"][op]["heldout_error_pct"]
        ax.set_title(f"{op}" + (f" (held-out median {h['median']:.1f} %)" if h else ""))
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(f"communication model of {result['machine']} (dashed: joint p-dependent fit)")
    fig.tight_layout()
    _save(plt, fig, path)


@plotter(TuneResult)
def tune_plot(result: TuneResult, path: Path) -> None:
    """Predicted and measured seconds per step of every variant that ran."""
    _check_suffix(path)
    res = result.to_dict()
    plt = _pyplot()
    rows = [v for v in res["variants"] if v["measured_s"]]
    fig, ax = plt.subplots(figsize=(max(6, 0.6 * len(rows) + 2), 4.2))
    x = range(len(rows))
    ax.bar([i - 0.2 for i in x], [v["predicted_s"] for v in rows], 0.4, label="predicted")
    ax.bar([i + 0.2 for i in x], [v["measured_s"] for v in rows], 0.4, label="measured")
    ax.set_xticks(list(x))
    ax.set_xticklabels([v["name"].replace(",comm=", "\n") for v in rows], fontsize=7)
    ax.set_ylabel("seconds per step")
    s = res["summary"]
    ax.set_title(f"{res['ivp']} n={res['n']:,} on {res['machine']}: Spearman "
                 f"{'n/a' if s['spearman'] is None else format(s['spearman'], '.2f')}")
    ax.legend()
    fig.tight_layout()
    _save(plt, fig, path)


SCALE_LINES = 8


def _scale_lines(a: dict) -> list[str]:
    """The variants worth a line (a pool of hundreds is unreadable): those that win at some node
    count, the best of the paper's forms, then the fastest others, at most SCALE_LINES."""
    from autotune.specs.variants import Variant, configuration
    best = {}
    for r in a["rows"]:
        best[r["variant"]] = min(best.get(r["variant"], float("inf")), r["predicted_s"])
    ordered = sorted(best, key=best.get)
    paper = [v for v in ordered if Variant(**configuration(v)).is_paper_form][:1]
    chosen = list(dict.fromkeys([w["variant"] for w in a["winners"]] + paper + ordered))
    return chosen[:max(SCALE_LINES, len(set(w["variant"] for w in a["winners"])) + len(paper))]


@plotter(ScaleResult)
def scale_plot(result: ScaleResult, path: Path) -> None:
    """Time per step and efficiency against node count, one line per variant worth showing
    (_scale_lines); hollow markers where the communication model extrapolates; the efficiency
    bound of the winners dashed."""
    _check_suffix(path)
    plt = _pyplot()
    res = result.to_dict()
    a = res["analysis"]
    fig, (ax_t, ax_e) = plt.subplots(1, 2, figsize=(12, 4.6))
    variants = _scale_lines(a)
    for i, v in enumerate(variants):
        rows = sorted((r for r in a["rows"] if r["variant"] == v), key=lambda r: r["nodes"])
        color, style = f"C{i % 10}", "-" if i < 10 else "--"
        x = [r["nodes"] for r in rows]
        for ax, key in ((ax_t, "predicted_s"), (ax_e, "efficiency")):
            ax.plot(x, [r[key] for r in rows], style, color=color, lw=1.2, label=v if ax is ax_t else None)
            ext = [r for r in rows if r["comm_basis"] == "extrapolated"]
            ax.plot([r["nodes"] for r in ext], [r[key] for r in ext], "o", ms=3, mfc="none", color=color)
    by = {(r["variant"], r["nodes"]): r for r in a["rows"]}
    win = [by[(w["variant"], w["nodes"])] for w in a["winners"]]
    ax_e.plot([r["nodes"] for r in win], [r["efficiency_bound"] for r in win], "k--", lw=1,
              label="bound of the best variant (communication ceiling)")
    rec = a["recommended"]["nodes"]
    for ax in (ax_t, ax_e):
        ax.axvline(rec, color="grey", lw=0.8, ls=":")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("nodes")
        ax.grid(True, which="both", alpha=0.3)
    ax_t.set_yscale("log")
    ax_t.set_ylabel("predicted seconds per step")
    ax_e.set_ylabel(f"efficiency (against the best on {a['base_nodes']} node(s))")
    ax_e.set_ylim(0, max(1.05, max(r["efficiency"] for r in a["rows"]) * 1.05))
    ax_t.legend(fontsize=6, ncol=2)
    ax_e.legend(fontsize=7)
    fig.suptitle(f"{res['ivp']} n={res['n']:,} on {res['machine']}, {res['threads']} threads per node: "
                 f"recommended {rec} nodes (dotted); hollow: extrapolated communication\n"
                 f"{len(variants)} of {len({r['variant'] for r in a['rows']})} variants: the winners, "
                 f"the best paper form, the fastest others", fontsize=9)
    fig.tight_layout()
    _save(plt, fig, path)

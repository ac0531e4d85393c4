"""`autotune calibrate --machine M --from-runs`: the node model's uncertain parameters fitted to
the runs M has measured (model.learnfit), cross-validated, and written into M's machine file.

The edge of the learned model: it reads the measured runs from the store, prices each measured
variant with the ECM model as `rank` does (the store's analyses; missing ones run), hands plain
observations to the pure fit, and predicts every held-out fold again through the same pricing
`rank` uses with learned factors, so the cross-validated figures are the product's own.
"""
from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, replace
from pathlib import Path

from autotune.progress import Progress
from autotune.errors import InputError
from autotune.model.compare import PHASE_OF_KERNEL, compare
from autotune.model.learnfit import Fit, Observation, Pricer, Unit, fit, largest
from autotune.model.preselect import Rule
from autotune.pipeline.predict import rank_scenario
from autotune.pipeline.runners import run_key_of
from autotune.pipeline.tunerecord import row_of_stored
from autotune.results.learn import FoldRow, LearnResult, ParameterRow
from autotune.results.tune import TuneRow
from autotune.specs.ivp import load_ivp
from autotune.specs.learned import CORE_CLASS, Learned
from autotune.specs.machine import Machine
from autotune.specs.method import load_method, method_names
from autotune.specs.scenario import Scenario
from autotune.specs.step import SWEEP_PREFIX, SWEEP_TIMER
from autotune.specs.variants import parse_variant, spaces
from autotune.storage.store import Store
from autotune.tools.toolchain import package_version

FIT_PHASES = ("RHS", "LC", "APPROX+UPDATE", "COPY")   # COMM is the network model's, not the node's
SWEEP_PHASES = tuple(SWEEP_PREFIX + kind for kind in SWEEP_TIMER.values())   # the fused sweeps, by kind
# what a cross-validation fold leaves out: one scenario, one size, or one IVP at a time
# (sizes within a few per cent are one size: heat2d's n is the square just below)
FOLDS = {"scenario": lambda key: key, "size": lambda key: float(f"{key[2]:.2g}"), "ivp": lambda key: key[0]}


@dataclass
class Run:
    key: tuple            # (ivp, method, n, nodes, threads)
    variant: str
    measured_s: float
    phases: dict          # phase -> measured seconds per step


def describe(key: tuple) -> str:
    ivp, method, n, nodes, threads = key
    return f"{ivp} {nodes}x{threads} n={n}" + ("" if method == "radauIIA7" else f" {method}")


def stored_runs(store: Store, machine: Machine) -> tuple[list[Run], int]:
    """The latest finished measurement of every fixed-step (scenario, variant) on the machine, and
    how many stored runs could not be placed (a method no longer known)."""
    latest: dict[tuple, Run] = {}
    lost = 0
    methods = method_names()
    for key, ivp, variant, rec in store.measured_runs(machine.name):
        row, r = row_of_stored(rec, f"the store's run of {variant} ({ivp})")
        if row.control:
            continue     # step-size control: its seconds include the control's, which the factors do not price
        method = r.get("method") or next((m for m in methods if run_key_of(
            machine.name, ivp, m, r["n"], r["nodes"], r["threads"], variant, r.get("flags") or []) == key), None)
        if method is None:
            lost += 1
            continue
        phases = {ph: v.get("measured_s") for ph, v in (row.phases or {}).items() if v.get("measured_s")}
        scen = (ivp, method, int(r["n"]), int(r["nodes"]), int(r["threads"]))
        latest[(scen, variant)] = at_file_state(Run(scen, variant, float(row.measured_s), phases), row.state_factor)
    return list(latest.values()), lost


def at_file_state(run: Run, factor: dict | None) -> Run:
    """A run's seconds at the machine file's state: tune priced each variant again at the state
    its rounds measured (memory bandwidth, clock), and the file's prediction over that one turns
    what was measured into what the file's state would have given (a phase without its own
    factor takes the step's).  A run without a measured state is taken as it is."""
    if not factor:
        return run
    total, per = factor["total"], factor.get("phases") or {}
    return Run(run.key, run.variant, run.measured_s * total,
               {ph: s * per.get(ph, total) for ph, s in run.phases.items()})


@dataclass
class Group:
    """One measured scenario, priced by the ECM model alone."""
    key: tuple
    scenario: Scenario
    variants: list
    runs: list[Run]
    ecm_s: dict           # variant -> predicted seconds (ECM alone)


class Observed:
    """Observations of every group, over one table of units."""

    def __init__(self):
        self.units: list[Unit] = []
        self._index: dict[tuple, int] = {}
        self.obs: list[Observation] = []

    def unit(self, sc: Scenario, part, code: int, result: dict) -> int:
        key = (sc.node_threads, sc.ranks_per_node, part.code, code, CORE_CLASS[part.kernel])
        k = self._index.get(key)
        if k is None:
            m = sc.machine
            k = self._index[key] = len(self.units)
            self.units.append(Unit(result, part.kernel, m.clock_hz, sc.node_threads, sc.ranks_per_node,
                                   m.numa_cores, m.cores))
        return k

    def add(self, group: Group, ranked) -> None:
        for run in group.runs:
            if ranked.variant(run.variant).prediction is None:
                continue
            measured = dict(run.phases, **sweep_seconds(run.phases))
            work: dict[str, list] = {}
            for part, code, result, lines in ranked.work(run.variant):
                # a fused sweep timed on its own is observed on its own (it hides in RHS otherwise)
                kind = SWEEP_TIMER.get(part.kernel)
                phase = SWEEP_PREFIX + kind if kind and SWEEP_PREFIX + kind in measured \
                    else PHASE_OF_KERNEL[part.kernel]
                work.setdefault(phase, []).append((self.unit(group.scenario, part, code, result), lines))
            for phase in FIT_PHASES + SWEEP_PHASES:
                if measured.get(phase) and work.get(phase):
                    self.obs.append(Observation(describe(group.key), run.variant, phase, measured[phase],
                                                tuple(work[phase])))


def sweep_seconds(phases: dict[str, float]) -> dict[str, float]:
    """Measured seconds per step of each kind of fused sweep ("sweep.pred", "sweep.corr": the
    corrector's sweeps together, "sweep.final") from the solver's sweep timers."""
    out: dict[str, float] = {}
    for name, seconds in phases.items():
        kind = next((k for k in SWEEP_PHASES if name.startswith(k)), None)
        if kind is not None and seconds:
            out[kind] = out.get(kind, 0.0) + seconds
    return out


def price_groups(runs: list[Run], machine: Machine, store: Store,
                 progress: Progress) -> tuple[list[Group], Observed, int]:
    by_key: dict[tuple, list[Run]] = {}
    for r in runs:
        by_key.setdefault(r.key, []).append(r)
    groups, observed, dropped = [], Observed(), 0
    for i, (key, mine) in enumerate(sorted(by_key.items()), 1):
        ivp_name, method, n, nodes, threads = key
        try:
            ivp = load_ivp(ivp_name)
        except InputError:
            dropped += len(mine)
            continue
        sc = Scenario(ivp, load_method(method), machine, n, nodes, threads)
        variants, kept = [], []
        for r in mine:
            try:
                variants.append(parse_variant(r.variant, spaces(ivp)))
                kept.append(r)
            except InputError:
                dropped += 1
        if not variants:
            continue
        progress.say(f"[{i}/{len(by_key)}] {describe(key)}: {len(kept)} measured variants")
        ranked = rank_scenario(sc, variants, Rule("all"), store)
        group = Group(key, sc, variants, kept, {r.variant: ranked.variant(r.variant).predicted_s for r in kept})
        groups.append(group)
        observed.add(group, ranked)
    return groups, observed, dropped


def _learned(machine: Machine, f: Fit, runs: int, scenarios: int) -> Learned:
    return Learned(dict(f.factors), runs, scenarios, package_version("kerncraft"), machine.kerncraft_digest,
                   time.strftime("%Y-%m-%d"))


def runs_of_tune(result: dict) -> list[Run]:
    """The measured runs of one `tune --format json` output (a field its variants' rows do not have
    is an error; their configuration, which the document adds to each, is the name's again)."""
    key = (result["ivp"], result["method"], int(result["n"]), int(result["nodes"]), int(result["threads"]))
    rows = [TuneRow.of({k: x for k, x in v.items() if k != "configuration"}, f"tune result, variant {i}")
            for i, v in enumerate(result["variants"])]
    return [at_file_state(Run(key, v.name, float(v.measured_s),
                              {ph: q["measured_s"] for ph, q in (v.phases or {}).items() if q.get("measured_s")}),
                          v.state_factor)
            for v in rows if v.measured_s and not v.control]     # (a controlled run: as stored_runs)


def fit_groups(machine: Machine, groups: list[Group], observed: Observed, pricer: Pricer) -> Learned | None:
    """The factors fitted to the observations of these groups (None: nothing to fit)."""
    labels = {describe(g.key) for g in groups}
    f = fit([o for o in observed.obs if o.group in labels], pricer)
    return _learned(machine, f, sum(len(g.runs) for g in groups), len(groups)) if f.factors else None


def predict_with(group: Group, learned: Learned | None, store: Store) -> dict:
    """Variant -> predicted seconds of a group's runs with these factors (None: ECM alone)."""
    if learned is None:
        return group.ecm_s
    sc = replace(group.scenario, machine=replace(group.scenario.machine, learned=learned))
    ranked = rank_scenario(sc, group.variants, Rule("all"), store)
    return {r.variant: ranked.variant(r.variant).predicted_s for r in group.runs}


def _summary(rows: list[TuneRow]) -> tuple:
    """(median |deviation| %, Spearman, top-1 loss %) of {name, predicted_s, measured_s} rows."""
    s = compare(rows)
    return s.get("median_abs_deviation_pct"), s["spearman"], s["top1_loss_pct"]


def _fold_row(label: str, groups: list[Group], learned: Learned | None, store: Store, fitted_on: int) -> FoldRow:
    before, after = [], []
    spear, top1 = [], []
    for g in groups:
        pred = predict_with(g, learned, store)
        b = [TuneRow(r.variant, g.ecm_s[r.variant], r.measured_s) for r in g.runs]
        a = [TuneRow(r.variant, pred[r.variant], r.measured_s) for r in g.runs]
        before += b
        after += a
        sb, sa = _summary(b), _summary(a)
        spear.append((sb[1], sa[1]))
        top1.append((sb[2], sa[2]))
    mb, ma = _summary(before)[0], _summary(after)[0]
    mean = lambda xs: statistics.fmean(xs) if xs else None   # noqa: E731
    return FoldRow(label, len(before), fitted_on, mb, ma,
                   mean([x for x, _ in spear if x is not None]), mean([y for _, y in spear if y is not None]),
                   mean([x for x, _ in top1 if x is not None]), mean([y for _, y in top1 if y is not None]))


def learn(machine: Machine, store: Store, progress: Progress, folds: str = "scenario",
          holdout: tuple[str, ...] = ()) -> tuple[LearnResult, Learned | None]:
    """Fit on every stored run of the machine (but the held-out IVPs), cross-validate by folds,
    and predict the held-out IVPs' runs with the fit of all the others."""
    if folds not in FOLDS:
        raise InputError(f"{folds}: expected one of {', '.join(FOLDS)}", field="folds")
    runs, lost = stored_runs(store, machine)
    if not runs:
        raise InputError(f"the store holds no measured runs of machine {machine.name} (run `autotune tune "
                         f"--machine {machine.name}` first)", field="from_runs")
    groups, observed, dropped = price_groups(runs, machine, store, progress)
    held = [g for g in groups if g.key[0] in holdout]
    used = [g for g in groups if g.key[0] not in holdout]
    if not used:
        raise InputError(f"every measured run is of a held-out IVP ({', '.join(holdout)})", field="holdout")
    labels = {describe(g.key) for g in used}
    pricer = Pricer(observed.units)
    train = [o for o in observed.obs if o.group in labels]
    progress.say(f"fitting {len(train)} phase measurements of {sum(len(g.runs) for g in used)} runs")
    final = fit(train, pricer)
    n_runs = sum(len(g.runs) for g in used)
    learned = _learned(machine, final, n_runs, len(used)) if final.factors else None
    fold_of = FOLDS[folds]
    cv = []
    fold_keys = sorted({fold_of(g.key) for g in used}, key=str)
    for i, fk in enumerate(fold_keys, 1):
        out = [g for g in used if fold_of(g.key) == fk]
        rest = [g for g in used if fold_of(g.key) != fk]
        progress.say(f"cross-validation [{i}/{len(fold_keys)}]: without {_fold_label(folds, fk, out)}")
        lr = fit_groups(machine, rest, observed, pricer) if rest else None
        cv.append(_fold_row(_fold_label(folds, fk, out), out, lr, store, len(rest)))
    held_rows = [_fold_row(describe(g.key), [g], learned, store, len(used)) for g in held]
    whole = _fold_row("fitted runs", used, learned, store, len(used))
    params = [ParameterRow(p, 1.0, final.factors.get(p, 1.0), final.observations.get(p, 0))
              for p in sorted(final.observations)]
    res = LearnResult(machine.name, "", n_runs, len(used), lost + dropped, folds, params,
                      final.residual_before_pct, final.residual_after_pct, cv, held_rows,
                      _pooled(cv), left_to_fit(whole, final.factors), kerncraft=package_version("kerncraft"))
    return res, learned


def left_to_fit(whole: FoldRow, factors: dict) -> dict:
    """How much the factors fit on top of the node model: the median |deviation| of the step time
    of the runs fitted on, with the node model alone and with the factors (in-sample: the
    cross-validation says how well it carries over), and the factors furthest from 1."""
    before, after = whole.median_abs_dev_before_pct, whole.median_abs_dev_after_pct
    top = [{"name": p, "fitted": f, "off_pct": (f - 1.0) * 100.0} for p, f in largest(factors)]
    line = (f"left to fit: median |deviation| {_pct(before)} with the node model alone, {_pct(after)} with the "
            f"factors ({whole.runs} runs)")
    if top:
        line += "; furthest from 1: " + ", ".join(f"{t['name']} {t['fitted']:.2f} ({t['off_pct']:+.0f} %)"
                                                  for t in top)
    return {"median_abs_dev_node_model_pct": before, "median_abs_dev_with_factors_pct": after,
            "runs": whole.runs, "largest_factors": top, "line": line}


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.1f} %"


def _fold_label(folds: str, fk, groups: list[Group]) -> str:
    if folds == "scenario":
        return describe(fk)
    return f"n ~ {fk:.2g}" if folds == "size" else f"{folds} {fk}"


def _pooled(rows: list[FoldRow]) -> dict:
    """Medians over the folds of the fold medians."""
    def med(xs):
        xs = [x for x in xs if x is not None]
        return statistics.median(xs) if xs else None
    return {"median_abs_dev_before_pct": med(r.median_abs_dev_before_pct for r in rows),
            "median_abs_dev_after_pct": med(r.median_abs_dev_after_pct for r in rows)}


def write_learned(source: Path, target: Path, learned: Learned, res: LearnResult) -> None:
    """cluster.learned of a machine file (comments and the rest kept as they are)."""
    from autotune.storage.atomic import write_text
    from autotune.storage.yamlfile import dump_text, round_trip_yaml
    yaml = round_trip_yaml()
    with open(source) as f:
        data = yaml.load(f)
    data["cluster"]["learned"] = {
        "factors": {p: float(f"{v:.6g}") for p, v in sorted(learned.factors.items()) if abs(v - 1.0) > 1e-4},
        "runs": learned.runs, "scenarios": learned.scenarios, "kerncraft": learned.kerncraft,
        "node_digest": learned.node_digest, "date": learned.date,
        "provenance": (f"fitted by autotune calibrate --from-runs on {learned.date} to {learned.runs} measured runs "
                       f"in {learned.scenarios} scenarios; robust least squares on log phase ratios, shrunk "
                       f"toward the ECM model"),
        "residual_pct": {k: round(v, 2) for k, v in (("before", res.residual_before_pct),
                                                      ("after", res.residual_after_pct)) if v is not None},
    }
    write_text(target, dump_text(yaml, data), "out", make_folders=True)

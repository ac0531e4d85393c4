"""A priced batch ranked, scenario by scenario, and turned into results on demand: a sweep writes
a few rows per scenario, so the per-variant objects (predictions, kernel breakdowns) are built
only for the scenarios and rows that are read."""
from __future__ import annotations

from autotune.model import regime as regmod
from autotune.model.ecm import KernelCost, KernelTerm, Prediction, mixed_cost, regime_cost
from autotune.model.ops import SCALAR
from autotune.model.steptime import rank_one, regime_rate
from autotune.model.preselect import Rule
from autotune.pipeline.pricebatch import Priced
from autotune.results.rank import Columns
from autotune.results.variant import VariantResult
from autotune.specs.parts import DOUBLE


def rank_priced(priced: Priced, rule: Rule, detail: bool) -> list["ScenarioRows"]:
    """Order and pre-selection of every scenario of a priced batch."""
    layout, batch = priced.batch.layout, priced.batch
    failed = [priced.failed[f] for f in layout.form_of]
    fields = ("total", "node", "comm", "barrier", "hidden", "control")
    if batch.ops is SCALAR:
        values = [[getattr(t, k) for t in priced.times] for k in fields]
        order, chosen = rank_one([v.name for v in layout.variants], values[0], failed, rule)
        return [ScenarioRows(priced, 0, order, len(chosen), values, failed, detail)]
    import numpy as np
    from autotune.model.batch import rank_table
    size = len(batch.scenarios)
    table = [np.empty((size, len(priced.times))) for _ in fields]
    for j, t in enumerate(priced.times):
        for k, m in zip(fields, table):
            m[:, j] = getattr(t, k)
    broken = np.empty((size, len(failed)), dtype=bool)
    for j, f in enumerate(failed):
        broken[:, j] = f
    order, counts = rank_table(table[0], broken, np.asarray(layout.by_name), rule)
    counts = counts.tolist()
    # the pre-selected lead of every row, as Python numbers at once (what a sweep writes)
    lead = order[:, :max(counts, default=0)]
    heads = [np.take_along_axis(m, lead, axis=1).tolist() for m in table[:4]]
    heads.append(np.take_along_axis(broken, lead, axis=1).tolist())
    heads.insert(0, lead.tolist())
    return [ScenarioRows(priced, i, order[i], counts[i], [t[i] for t in table], broken[i], detail,
                         [h[i][:counts[i]] for h in heads])
            for i in range(size)]


class ScenarioRows:
    """One scenario of a priced batch, as RankResult reads it: predicted_any(), preselected(),
    brief(selected_only), ordered() (with the per-kernel costs where detail is asked for) and
    failures()."""

    def __init__(self, priced: Priced, index: int, order, chosen: int, values: list, failed, detail: bool,
                 lead: list | None = None):
        self.priced, self.index, self.order, self.chosen = priced, index, order, chosen
        self.values, self.failed_variant, self.detail = values, failed, detail
        self.lead = lead     # the pre-selected: [indices, total, node, comm, barrier, failed] as lists

    # what RankResult asks for

    def predicted_any(self) -> bool:
        return not all(_list(self.failed_variant))

    def preselected(self) -> set[str]:
        variants = self.priced.batch.layout.variants
        return {variants[j].name for j in _list(self.order[:self.chosen])}

    def brief(self, selected_only: bool) -> list[tuple]:
        """(rank, variant, predicted, node, comm, barrier seconds or None, pre-selected, failed parts),
        best first; selected_only: the pre-selected ones."""
        layout = self.priced.batch.layout
        if selected_only and self.lead is not None:
            idx, total, node, comm, barrier, failed = self.lead
        else:
            idx = _list(self.order[:self.chosen] if selected_only else self.order)
            total, node, comm, barrier = (_pick(v, idx) for v in self.values[:4])
            failed = _pick(self.failed_variant, idx)
        out = []
        for rank_no, (j, t, n, c, b, bad) in enumerate(zip(idx, total, node, comm, barrier, failed), 1):
            v = layout.variants[j]
            parts = self._failed_parts(layout.form_of[j]) if bad else []
            out.append((rank_no, v, None, None, None, None, rank_no <= self.chosen, parts) if bad else
                       (rank_no, v, t, n, c, b, rank_no <= self.chosen, parts))
        return out

    def columns(self, selected_only: bool) -> Columns | None:
        """brief() as columns, or None where a row failed (brief() then says which parts)."""
        variants = self.priced.batch.layout.variants
        if selected_only and self.lead is not None:
            idx, total, node, comm, barrier, failed = self.lead
        else:
            idx = _list(self.order[:self.chosen] if selected_only else self.order)
            failed = _pick(self.failed_variant, idx)
            total, node, comm, barrier = (_pick(v, idx) for v in self.values[:4])
        if any(failed):
            return None
        return Columns([variants[j] for j in idx], total, node, comm, barrier, min(self.chosen, len(idx)))

    def ordered(self) -> list[VariantResult]:
        layout = self.priced.batch.layout
        idx = _list(self.order)
        total, node, comm, barrier, hidden, control = (_pick(v, idx) for v in self.values)
        failed = _pick(self.failed_variant, idx)
        costs = self._costs() if self.detail else None
        out = []
        for j, t, n, c, b, h, ctl, bad in zip(idx, total, node, comm, barrier, hidden, control, failed):
            f = layout.form_of[j]
            form = layout.forms[f]
            if bad:
                out.append(VariantResult(layout.variants[j], None, self._failed_parts(f), form.counts.comm_phases,
                                         layout.barriers[j]))
                continue
            kernels = tuple(costs[s] for s in form.slots) if costs is not None else ()
            out.append(VariantResult(layout.variants[j], Prediction(t, n, c, b, kernels, h, ctl), [],
                                     form.counts.comm_phases, layout.barriers[j]))
        return out

    def rows_of(self, name: str) -> "ScenarioRows":
        return self

    def failures(self) -> dict[str, dict]:
        """Per failed part: the analysis' error and log, and where its data came from."""
        p, layout = self.priced, self.priced.batch.layout
        if not p.broken[self.index]:
            return {}
        out: dict[str, dict] = {}
        seen = set()
        for pos, s in enumerate(layout.distinct):
            slot = layout.slots[s]
            mix = self._mix(slot.unit)
            part = layout.units[slot.unit].part
            if pos < layout.methods_end:    # a method part recurs alike wherever its mix is the same
                if (part.name, slot.executions, mix) in seen:
                    continue
                seen.add((part.name, slot.executions, mix))
            bad = [code for code, _ in mix if p.numbers[p.key(slot.unit, code)] is None]
            if bad:
                r = p.results[p.key(slot.unit, bad[0])]
                out[part.name] = {k: r.get(k) for k in ("error", "log")} | {"regime": self._label(mix)}
        return out

    def work(self, name: str) -> list[tuple]:
        """A variant's kernel parts in this scenario as (part, regime code, ECM result, lines): its kernel seconds
        are the sum over them of lines x alpha / divisor of the result's rate at the scenario's
        cores (model.steptime: w x executions x beta / delta per level the part's data comes from).
        What the learned model's fit (model.learnfit) prices again with scaled ECM terms."""
        p, layout = self.priced, self.priced.batch.layout
        placed, sc = p.batch.placed, p.batch.first
        per_line = sc.machine.cacheline / DOUBLE
        j = next(i for i, v in enumerate(layout.variants) if v.name == name)
        out = []
        for s in layout.forms[layout.form_of[j]].slots:
            slot = layout.slots[s]
            unit = layout.units[slot.unit]
            part = unit.part
            beta = part.iterations_per_m * _at(placed.m[slot.unit], self.index)
            delta = per_line / part.loops[-1].step
            for code, w in self._mix(slot.unit):
                out.append((part, code, p.results[p.key(slot.unit, code)], w * slot.executions * beta / delta))
        return out

    # the breakdowns

    def _mix(self, unit: int) -> tuple[tuple[int, float], ...]:
        """(regime code, share) of each level the unit's data comes from in this scenario."""
        out = []
        for _, w, code, _ in self.priced.batch.placed.levels[unit]:
            w = _at(w, self.index)
            if w > 0:
                out.append((int(_at(code, self.index)), w))
        return tuple(out)

    def _label(self, mix) -> str:
        lv = self.priced.batch.placed.lv
        if len(mix) == 1:
            return regmod.code_regime(mix[0][0], lv).label
        return " + ".join(f"{regmod.code_regime(c, lv).label} {w:.0%}" for c, w in mix)

    def _failed_parts(self, form: int) -> list[str]:
        p, layout = self.priced, self.priced.batch.layout
        return [layout.units[layout.slots[s].unit].part.name for s in layout.forms[form].slots
                if _at(p.slot_seconds[s], self.index) != _at(p.slot_seconds[s], self.index)]

    def _costs(self) -> list[KernelCost | None]:
        """Per slot, its cost in this scenario with the per-regime terms (model.ecm, on the pricing's
        arithmetic)."""
        p = self.priced
        sc, layout, placed = p.batch.first, p.batch.layout, p.batch.placed
        clock, threads, rpn = sc.machine.clock_hz, sc.node_threads, sc.ranks_per_node
        per_line = sc.machine.cacheline / DOUBLE
        by_unit: dict[tuple, KernelCost | None] = {}
        out = []
        for slot in layout.slots:
            key = (slot.unit, slot.executions)
            if key not in by_unit:
                unit = layout.units[slot.unit]
                part, mix = unit.part, self._mix(slot.unit)
                nums = [p.numbers[p.key(slot.unit, code)] for code, _ in mix]
                if None in nums:
                    by_unit[key] = None
                else:
                    beta = part.iterations_per_m * _at(placed.m[slot.unit], self.index)
                    delta = per_line / part.loops[-1].step
                    costs = []
                    for (code, w), (alpha, sigma, scaling, _) in zip(mix, nums):
                        term = KernelTerm(part.name, part.kernel, regmod.code_regime(code, placed.lv).label, alpha,
                                          sigma, beta, delta, slot.executions)
                        costs.append((w, regime_cost(term, regime_rate(alpha, sigma, scaling, clock, threads, rpn))))
                    by_unit[key] = mixed_cost(costs, self._label(mix))
            out.append(by_unit[key])
        return out


def _list(x) -> list:
    return x if isinstance(x, list) else x.tolist()


def _pick(values, idx: list[int]) -> list:
    if isinstance(values, list):
        return [values[j] for j in idx]
    return values[idx].tolist()


def _at(value, i: int):
    """Scenario i's value of a per-scenario number or array, as a Python number."""
    if isinstance(value, (int, float)):
        return value
    return value.item(i) if value.ndim else value.item()

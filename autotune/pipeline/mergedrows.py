"""One scenario ranked over the ways its IVP can be stored (specs.variants.spaces: string-row's
blocks one after the other, and interleaved): the variants of each way are priced with the IVP
stored so, as a scenario of their own (pipeline.predict), and merged here into the one ranking
the scenario's result reads.  The order is model.preselect's (time, then name; failed last by
name), and the pre-selection is made again over all of them.  Pure."""
from __future__ import annotations

from dataclasses import replace
from functools import cached_property

from autotune.model.preselect import Rule, preselect, rank
from autotune.results.rank import Columns, RankResult
from autotune.results.variant import VariantResult
from autotune.specs.exclusion import Exclusions
from autotune.specs.scenario import Scenario
from autotune.specs.variants import Variant, ivp_for


def split(sc: Scenario, variants: list[Variant], known: dict | None = None
          ) -> list[tuple[Scenario, list[Variant]]] | None:
    """The variants by the way each stores the scenario's IVP, each way's scenario with the IVP
    stored so (None: all store it as it is, the scenario needs no split); known: the ways of the
    lists seen before, by identity (a sweep's scenarios share a few lists)."""
    ways = None if known is None else known.get(id(variants))
    if ways is None:
        grouped: dict[tuple, list[Variant]] = {}
        for v in variants:
            grouped.setdefault(v.stored_as, []).append(v)
        ways = list(grouped.values())
        if known is not None:
            known[id(variants)] = ways
    if len(ways) == 1 and ivp_for(sc.ivp, ways[0][0]) is sc.ivp:
        return None
    return [(replace(sc, ivp=ivp_for(sc.ivp, vs[0])), vs) for vs in ways]


def merged(sc: Scenario, rule: Rule, parts: list[RankResult], excluded: Exclusions | None,
           analyses_run: int) -> RankResult:
    """The scenario's result from its ways' results: their rows merged (MergedRows), their
    failures and in-core times together, and the floor of the way whose floor is lowest (the
    step cannot be faster than that; its other figures, with write-allocate and of a step of
    sweeps, are that way's too; None where no way has one)."""
    failures, incore = {}, {}
    for p in parts:
        failures.update(p.failures)
        incore.update(p.incore)
    bounds = [p.bound for p in parts if p.bound is not None]
    bound = min(bounds, key=lambda b: b.total_s) if bounds else None
    return RankResult(sc, rule, excluded=excluded, analyses_run=analyses_run, failures=failures, bound=bound,
                      source=MergedRows(parts, rule), incore=incore)


class MergedRows:
    """The rows of several results of one scenario as one RowSource (results.rank)."""

    def __init__(self, parts: list[RankResult], rule: Rule) -> None:
        self.parts, self.rule = parts, rule

    @cached_property
    def _rows(self) -> list[tuple]:
        return self._merge(False)

    @cached_property
    def _lead(self) -> list[tuple]:
        """The pre-selected rows alone, from each way's pre-selected: the best of all is the best
        of some way, so a variant within the rule of all is within it of its own way (and the top
        K of all are among the ways' top K)."""
        return self._merge(True)

    def _merge(self, selected_only: bool) -> list[tuple]:
        rows = {r[1].name: r for p in self.parts for r in p.brief(selected_only)}
        order = rank([(name, r[2]) for name, r in rows.items()])
        chosen = preselect(order, self.rule)
        return [(i, rows[name][1], *rows[name][2:6], name in chosen, rows[name][7])
                for i, (name, _) in enumerate(order, 1) if not selected_only or name in chosen]

    @cached_property
    def _owner(self) -> dict[str, RankResult]:
        return {r[1].name: p for p in self.parts for r in p.brief(False)}

    def _part(self, name: str) -> RankResult:
        return self._owner[name]

    def ordered(self) -> list[VariantResult]:
        got = {r.variant.name: r for p in self.parts for r in p.ordered}
        return [got[r[1].name] for r in self._rows]

    def preselected(self) -> set[str]:
        return {r[1].name for r in self._rows if r[6]}

    def predicted_any(self) -> bool:
        return any(p.predicted_any for p in self.parts)

    def brief(self, selected_only: bool) -> list[tuple]:
        if selected_only:
            return list(self._lead) if "_rows" not in self.__dict__ else [r for r in self._rows if r[6]]
        return list(self._rows)

    def columns(self, selected_only: bool) -> Columns | None:
        """The ways' columns merged (the pre-selected from theirs, as _lead), or None where a row
        failed."""
        got = [p.columns(selected_only) for p in self.parts]
        if any(c is None for c in got):
            return None
        variants = [v for c in got for v in c.variants]
        cols = [[x for c in got for x in getattr(c, f)] for f in ("total", "node", "comm", "barrier")]
        order = sorted(range(len(variants)), key=lambda i: (cols[0][i], variants[i].name))
        chosen = len(preselect([(variants[i].name, cols[0][i]) for i in order], self.rule))
        if selected_only:
            order = order[:chosen]
        return Columns([variants[i] for i in order], *([col[i] for i in order] for col in cols), chosen)

    def work(self, name: str) -> list[tuple]:
        return self._part(name).work(name)

    def rows_of(self, name: str):
        """The row source that priced the variant (what explain's breakdowns read)."""
        return self._part(name)._source

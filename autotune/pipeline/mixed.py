"""Ranking a mixed allocation (specs.mixed): every variant priced on each kind of node over a grid
of blocks (one batch of scenarios per kind, one round of analyses for all), its split solved
(model.split), then priced again at the blocks the split gives, beside the even split's
(docs/method.md "Mixed allocations")."""
from __future__ import annotations

import numpy as np

from autotune.errors import InputError
from autotune.model import split as splitmod
from autotune.model.preselect import Rule, preselect, rank
from autotune.pipeline.applicable import applicable_pool
from autotune.pipeline.predict import rank_many
from autotune.progress import SILENT, Progress
from autotune.results.mixed import MixedExplainResult, MixedRankResult, MixedRow
from autotune.specs.exclusion import Exclusions
from autotune.specs.mixed import MixedScenario
from autotune.specs.variants import Filter, Variant
from autotune.storage.store import Store

NAN = float("nan")


def mixed_pool(msc: MixedScenario, wanted: list[str] | None = None,
               select: Filter | None = None) -> tuple[list[Variant], Exclusions]:
    """The variants that can run on some kind at the even split (each kind's pool, in the first's
    order), and what every kind leaves out, with the first kind's reasons."""
    block = msc.even()[0]
    pools = [applicable_pool(msc.rank_scenario(k, block), wanted, select) for k in msc.kinds]
    seen: dict[str, Variant] = {}
    for variants, _ in pools:
        for v in variants:
            seen.setdefault(v.name, v)
    everywhere = set.intersection(*({e.item for e in ex.schemes() + ex.values()} for _, ex in pools))
    first = pools[0][1]
    return list(seen.values()), Exclusions([e for e in first.schemes() + first.values() if e.item in everywhere])


def _times(msc: MixedScenario, variants: list[Variant], blocks: list[list[int]], rule: Rule, store: Store,
           progress: Progress, jobs: int | None) -> tuple[list[np.ndarray], list[np.ndarray], int, dict]:
    """Per kind, every variant's predicted step at each block (rows: variants, columns: blocks;
    NaN where it failed), the same of its node's time alone (theta: the kernels and barriers),
    the analyses run, and the failures."""
    items = [(msc.rank_scenario(k, b), variants, None) for k, bs in zip(msc.kinds, blocks) for b in bs]
    ranked = rank_many(items, rule, store, progress, jobs, detail=False)
    index = {v.name: i for i, v in enumerate(variants)}
    out, node, at, failures = [], [], 0, {}
    for bs in blocks:
        t, theta = np.full((len(variants), len(bs)), NAN), np.full((len(variants), len(bs)), NAN)
        for j in range(len(bs)):
            res = ranked[at + j]
            failures.update(res.failures)
            for row in res.brief():
                if row[2] is not None:
                    t[index[row[1].name], j], theta[index[row[1].name], j] = row[2], row[3]
        out.append(t)
        node.append(theta)
        at += len(bs)
    return out, node, (ranked[0].analyses_run if ranked else 0), failures


def rank_mixed(msc: MixedScenario, rule: Rule, store: Store, progress: Progress = SILENT,
               jobs: int | None = None, wanted: list[str] | None = None, select: Filter | None = None,
               ) -> MixedRankResult:
    """Every variant of the pool with the split the model chooses for it (or the scenario's given
    split, one block per rank), its step time and each kind's share and time, and the even split's
    step beside it; ranked by the step."""
    variants, excluded = mixed_pool(msc, wanted, select)
    given = msc.given
    ranks = [k.nodes for k in msc.kinds]
    even = msc.even()
    q, grid = splitmod.grid(msc.n, ranks, msc.granule)
    for split in [even] + ([given] if given is not None else []):
        grid = [sorted(set(g) | {b}) for g, b in zip(grid, msc.kind_blocks(split))]
    progress.say(f"mixed allocation {msc.label}: {len(variants)} variants at "
                 f"{sum(map(len, grid))} blocks on {len(ranks)} kinds")
    times, node, ran, failures = _times(msc, variants, grid, rule, store, progress, jobs)
    at = [{b: j for j, b in enumerate(g)} for g in grid]
    chosen = [given] * len(variants) if given is not None else _splits(msc, grid, times, ranks)
    # the blocks the splits give, where the grid has not priced them yet: priced now
    missing = [sorted({msc.kind_blocks(s)[k] for s in chosen if s} - set(grid[k])) for k in range(len(ranks))]
    if any(missing):
        extra, extra_node, more, fails = _times(msc, variants, missing, rule, store, progress, jobs)
        ran += more
        failures.update(fails)
        for k in range(len(ranks)):
            at[k].update({b: times[k].shape[1] + j for j, b in enumerate(missing[k])})
            times[k] = np.hstack([times[k], extra[k]])
            node[k] = np.hstack([node[k], extra_node[k]])
    def of(table, v: int, split):
        """Variant v's figure of each kind at the block `split` gives it (None: no split)."""
        return [float(table[k][v, at[k][b]]) for k, b in enumerate(msc.kind_blocks(split))] if split else None

    rows = [MixedRow(variant, s, of(times, v, s), of(times, v, even), of(node, v, s), of(node, v, even))
            for v, (variant, s) in enumerate(zip(variants, chosen))]
    ordered = rank([(r.variant.name, r.step_s) for r in rows])
    by_name = {r.variant.name: r for r in rows}
    return MixedRankResult(msc, rule, [by_name[name] for name, _ in ordered], preselect(ordered, rule), excluded,
                           ran, failures, q)


def _splits(msc: MixedScenario, grid: list[list[int]], times: list[np.ndarray], ranks: list[int]) -> list:
    """Per variant, the split model.split solves on the grid (None: it cannot be predicted)."""
    out = []
    for v, blocks in enumerate(splitmod.solve(grid, times, ranks, msc.n)):
        if blocks is None:
            out.append(None)
            continue
        at = [g.index(b) for g, b in zip(grid, blocks)]
        slow = sorted(range(len(ranks)), key=lambda k: -times[k][v, at[k]])
        out.append(splitmod.counts(blocks, ranks, msc.n, slow, msc.granule))
    return out


def explain_mixed(msc: MixedScenario, variant: Variant, rule: Rule, store: Store, progress: Progress = SILENT,
                  jobs: int | None = None) -> MixedExplainResult:
    """One variant's split (the model's, or the scenario's given one) and each kind's breakdown
    at its block."""
    from autotune.pipeline.predict import rank_scenario
    ranking = rank_mixed(msc, rule, store, progress, jobs)
    if variant.name not in {r.variant.name for r in ranking.ordered}:
        raise InputError(f"{variant.name}: cannot run in {msc.label} at n = {msc.n}", field="variant")
    row = ranking.row(variant.name)
    kinds = []
    if row.split is not None:
        for k, block in zip(msc.kinds, msc.kind_blocks(row.split)):
            sc = msc.rank_scenario(k, block)
            kinds.append(rank_scenario(sc, [variant], rule, store, None, progress, jobs).explain(variant.name))
    return MixedExplainResult(ranking, variant.name, kinds)

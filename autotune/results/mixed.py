"""A mixed allocation ranked (pipeline.mixed): each variant with its split, each kind's share,
block and time, and the even split beside it."""
from __future__ import annotations

from dataclasses import dataclass

from autotune.model.preselect import Rule
from autotune.results.frames import frame
from autotune.results.registry import result_type
from autotune.specs.exclusion import Exclusions
from autotune.specs.mixed import MixedScenario
from autotune.specs.variants import Variant


@dataclass
class MixedRow:
    """One variant: its split (a block per rank; None: it cannot be predicted), each kind's
    predicted step at its block there, and each kind's at the even split; the same of each
    kind's node time alone (theta: its kernels and barriers, without the exchange)."""
    variant: Variant
    split: tuple[int, ...] | None
    kind_s: list[float] | None
    even_kind_s: list[float]
    kind_node_s: list[float] | None = None
    even_kind_node_s: list[float] | None = None

    @property
    def step_s(self) -> float | None:
        """The split's step: every rank waits for the slowest at the exchange."""
        return max(self.kind_s) if self.kind_s and all(t == t for t in self.kind_s) else None

    @property
    def even_s(self) -> float | None:
        return max(self.even_kind_s) if all(t == t for t in self.even_kind_s) else None

    @property
    def gain(self) -> float | None:
        """The split's step over the even split's (below 1: the split is faster)."""
        return self.step_s / self.even_s if self.step_s and self.even_s else None


@result_type
class MixedRankResult:
    """Every variant of a mixed allocation, best first by its split's step (failed last), the
    pre-selected ones and what kept the others out; grid_step: the components between two
    blocks the split was solved over (model.split)."""

    def __init__(self, scenario: MixedScenario, rule: Rule, rows: list[MixedRow], preselected: set[str],
                 excluded: Exclusions, analyses_run: int, failures: dict, grid_step: int):
        self.scenario, self.rule, self.ordered, self.preselected = scenario, rule, rows, preselected
        self.excluded, self.analyses_run, self.failures, self.grid_step = excluded, analyses_run, failures, grid_step

    @property
    def best(self) -> MixedRow | None:
        return self.ordered[0] if self.ordered and self.ordered[0].step_s is not None else None

    def row(self, name: str) -> MixedRow:
        for r in self.ordered:
            if r.variant.name == name:
                return r
        raise KeyError(name)

    def kinds_of(self, split: tuple[int, ...] | None, times: list[float] | None,
                 node: list[float] | None = None) -> list[dict]:
        """Per kind: name, machine, nodes, threads, its share of n, its ranks' largest block, its
        step and its node's time alone."""
        sc = self.scenario
        none = [None] * len(sc.kinds)
        shares = sc.shares(split) if split else none
        blocks = sc.kind_blocks(split) if split else none
        return [{"kind": k.name, "machine": k.machine.name, "nodes": k.nodes, "threads": k.threads,
                 "share": share, "block": block, "predicted_s": t, "node_s": theta}
                for k, share, block, t, theta in zip(sc.kinds, shares, blocks, times or none, node or none)]

    def to_dict(self) -> dict:
        sc = self.scenario
        return {
            "ivp": sc.ivp.name, "method": sc.method.name, "n": sc.n, "nodes": sc.label, "ranks": sc.ranks,
            **({"control": sc.control.to_dict()} if sc.control else {}),
            "kinds": [{"kind": k.name, "machine": k.machine.name, "nodes": k.nodes, "threads": k.threads}
                      for k in sc.kinds],
            "interconnect": {"from": sc.network_from, "model": dict(sc.network)},
            "selection": {"rule": self.rule.kind, "value": self.rule.value, "description": self.rule.describe()},
            "split_grid_components": self.grid_step, "granule_components": sc.granule,
            "ecm": {"analyses_run": self.analyses_run, "failures": self.failures},
            "excluded_values": {e.item: e.why for e in self.excluded.schemes() + self.excluded.values()},
            "variants": [self._variant(i, r) for i, r in enumerate(self.ordered, 1)],
        }

    def _variant(self, i: int, r: MixedRow) -> dict:
        even = self.scenario.even()
        return {"rank": i, "name": r.variant.name, "preselected": r.variant.name in self.preselected,
                "predicted_s": r.step_s, "split": list(r.split) if r.split else None,
                "kinds": self.kinds_of(r.split, r.kind_s, r.kind_node_s),
                "even": {"predicted_s": r.even_s, "split": list(even),
                         "kinds": self.kinds_of(even, r.even_kind_s, r.even_kind_node_s)},
                "vs_even": r.gain}

    def rows(self) -> list[dict]:
        """One flat row per variant: its step, the even split's, and per kind its share, block
        and time (columns named after the kind)."""
        out = []
        for i, r in enumerate(self.ordered, 1):
            row = {"rank": i, "variant": r.variant.name, "preselected": r.variant.name in self.preselected,
                   "predicted_s": r.step_s, "even_s": r.even_s, "vs_even": r.gain,
                   "split": ";".join(map(str, r.split)) if r.split else None}
            for k in self.kinds_of(r.split, r.kind_s):
                row.update({f"{k['kind']}_share": k["share"], f"{k['kind']}_block": k["block"],
                            f"{k['kind']}_s": k["predicted_s"]})
            out.append(row)
        return out

    def columns(self) -> list[str]:
        kinds = [f"{k.name}_{c}" for k in self.scenario.kinds for c in ("share", "block", "s")]
        return ["rank", "variant", "preselected", "predicted_s", "even_s", "vs_even", "split", *kinds]

    def to_frame(self):
        """One row per variant, best first."""
        return frame(self.rows(), self.columns())


@result_type
class MixedExplainResult:
    """One variant of a mixed allocation: its row in the ranking (its split and the even split),
    and each kind's breakdown at its block (ExplainResult of that kind's rank)."""

    def __init__(self, ranking: MixedRankResult, name: str, kinds: list):
        self.ranking, self.name, self.kinds = ranking, name, kinds

    @property
    def row(self) -> MixedRow:
        return self.ranking.row(self.name)

    def to_dict(self) -> dict:
        whole = self.ranking.to_dict()
        mine = next(v for v in whole["variants"] if v["name"] == self.name)
        head = {k: whole[k] for k in ("ivp", "method", "n", "nodes", "ranks", "interconnect")}
        return {**head, **mine, "of": len(self.ranking.ordered),
                "breakdown": {k.name: ex.to_dict() for k, ex in zip(self.ranking.scenario.kinds, self.kinds)}}

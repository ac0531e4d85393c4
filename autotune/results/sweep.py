"""Result of a sweep: many scenarios ranked at once, in long format (one row per scenario and
variant)."""
from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass
from typing import Iterator

from autotune.model.comm import comm_basis
from autotune.model.preselect import Rule
from autotune.results.frames import DIMENSION_KEYS, frame
from autotune.results.rank import RankResult
from autotune.results.registry import result_type
from autotune.specs.scenario import comm_context
from autotune.specs.schemes import PhaseContext


# One (scenario, variant) of a sweep; a tuple, so that tens of thousands stay cheap: the scenario
# (ivp .. threads), the variant's rank and name, one field per dimension, its times and notes.
FIELDS = ("ivp", "method", "machine", "n", "n_requested", "nodes", "threads", "rank", "name", *DIMENSION_KEYS,
          "predicted_s", "node_s", "comm_s", "barrier_s", "preselected", "comm_basis", "beyond_machine",
          "failed_kernels", "bound_s", "bound_ratio")
SweepRow = namedtuple("SweepRow", FIELDS)




@result_type
@dataclass
class SweepResult:
    results: list[RankResult]
    requested_n: list[int]        # per result: the size asked for (results carry the snapped one)
    skipped: list[dict]           # scenarios that cannot run, with the reason
    analyses_run: int
    rule: Rule
    selected_only: bool = False   # rows() keeps the pre-selected variants of each scenario only

    def rows(self) -> list[SweepRow]:
        """The long format, best first within a scenario."""
        make = SweepRow._make
        return [make((*head, *tail[:2], *tail[2], *tail[3:])) for head, tails in self.blocks() for tail in tails]

    def blocks(self) -> Iterator[tuple[tuple, list[tuple]]]:
        """The long format by scenario: per scenario, its head (a row's first fields: ivp to
        threads) and its rows' other fields (rank, name, the tuple of the variant's dimension values,
        then predicted_s to bound_ratio), best first.  What rows() and the renderers are made from:
        a sweep of millions of rows need not build a tuple of 30 fields for each."""
        bases: dict[tuple, str] = {}    # comm_basis by network, scheme and context: scenarios share them
        distances: dict[tuple, int] = {}
        dims: dict[int, tuple] = {}     # a variant's dimension values, by the variant (shared by scenarios)
        for res, n_req in zip(self.results, self.requested_n):
            sc = res.scenario
            ctx = None
            basis: dict[str, str] = {}
            bound, beyond = res.bound_s, sc.beyond_machine
            tails = []
            for i, v, total, node, comm, barrier, pre, failed in res.brief(self.selected_only):
                if v.comm not in basis:
                    ctx = ctx or _context(sc, distances)
                    key = (sc.machine, v.comm, ctx)
                    if key not in bases:
                        bases[key] = comm_basis(sc.machine.network, v.comm, ctx)
                    basis[v.comm] = bases[key]
                d = dims.get(id(v))
                if d is None:
                    d = dims[id(v)] = tuple(v.fields().values())
                tails.append((i, v.name, d, total, node, comm, barrier, pre, basis[v.comm], beyond,
                              ";".join(failed), bound, total / bound if total is not None and bound else None))
            yield (sc.ivp.name, sc.method.name, sc.machine.name, sc.n, n_req, sc.nodes, sc.threads), tails

    def meta(self) -> dict:
        first = self.results[0]
        return {"machine": first.scenario.machine.name, "method": first.scenario.method.name,
                "selection": self.rule.describe(), "scenarios": len(self.results),
                "analyses_run": self.analyses_run, "skipped": self.skipped, "notes": first.notes()[:1]}

    def to_dict(self) -> dict:
        return dict(self.meta(), rows=[r._asdict() for r in self.rows()])

    def to_frame(self):
        """The long table: one row per (scenario, variant)."""
        return frame(self.rows(), FIELDS)


def _context(sc, distances: dict) -> PhaseContext:
    """comm_context, the access distance computed once per IVP and size."""
    key = (sc.ivp, sc.n)
    if key not in distances:
        distances[key] = comm_context(sc).distance
    return PhaseContext(sc.n, sc.nodes, distances[key], sc.ivp.sparse_halo)

"""Result of a sweep: many scenarios ranked at once, in long format (one row per scenario and
variant)."""
from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass
from typing import Callable, Iterator, NamedTuple

from autotune.model.comm import comm_basis
from autotune.model.preselect import Rule
from autotune.results.frames import DIMENSION_KEYS, frame
from autotune.results.rank import Columns, RankResult
from autotune.results.registry import result_type
from autotune.specs.scenario import comm_context
from autotune.specs.schemes import PhaseContext


# One (scenario, variant) of a sweep; a tuple, so that tens of thousands stay cheap: the scenario
# (ivp .. threads), the variant's rank and name, one field per dimension, its times and notes.
FIELDS = ("ivp", "method", "machine", "n", "n_requested", "nodes", "threads", "rank", "name", *DIMENSION_KEYS,
          "predicted_s", "node_s", "comm_s", "barrier_s", "preselected", "comm_basis", "beyond_machine",
          "failed_kernels", "bound_s", "bound_ratio")
SweepRow = namedtuple("SweepRow", FIELDS)


class Block(NamedTuple):
    """One scenario of a sweep: its head (a row's first fields, ivp to threads), its rows as
    Columns (None where a row has no prediction), the communication basis of a scheme (by its
    name), the step's floor and whether the nodes exceed the machine's, and its rows as
    blocks() gives them, made when asked (tails())."""
    head: tuple
    columns: Columns | None
    basis: Callable[[str], str]
    bound_s: float | None
    beyond: bool
    tails: Callable[[], list[tuple]]




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
        shared = _Shared()
        for res, n_req in zip(self.results, self.requested_n):
            yield self._head(res, n_req), self._tails(res, shared)

    def column_blocks(self) -> Iterator["Block"]:
        """The long format by scenario, as columns where it can be (Block)."""
        shared = _Shared()
        for res, n_req in zip(self.results, self.requested_n):
            sc = res.scenario
            yield Block(self._head(res, n_req), res.columns(self.selected_only), shared.basis_of(sc),
                        res.bound_s, sc.beyond_machine, lambda res=res: self._tails(res, shared))

    @staticmethod
    def _head(res: RankResult, n_req: int) -> tuple:
        sc = res.scenario
        return sc.ivp.name, sc.method.name, sc.machine.name, sc.n, n_req, sc.nodes, sc.threads

    def _tails(self, res: RankResult, shared: "_Shared") -> list[tuple]:
        sc = res.scenario
        basis = shared.basis_of(sc)
        bound, beyond = res.bound_s, sc.beyond_machine
        tails = []
        for i, v, total, node, comm, barrier, pre, failed in res.brief(self.selected_only):
            tails.append((i, v.name, shared.dims(v), total, node, comm, barrier, pre, basis(v.comm), beyond,
                          ";".join(failed), bound, total / bound if total is not None and bound else None))
        return tails

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


class _Shared:
    """What the scenarios of a sweep share, worked out once: the communication basis by network,
    scheme and context, the access distance by IVP and size, a variant's dimension values (by
    the variant)."""

    def __init__(self) -> None:
        self.bases: dict[tuple, str] = {}
        self.distances: dict[tuple, int] = {}
        self.values: dict[int, tuple] = {}

    def dims(self, v) -> tuple:
        d = self.values.get(id(v))
        if d is None:
            d = self.values[id(v)] = tuple(v.fields().values())
        return d

    def basis_of(self, sc) -> Callable[[str], str]:
        """The comm_basis of a scheme in scenario sc (model.comm), each worked out once."""
        ctx, mine = None, {}

        def basis(scheme: str) -> str:
            nonlocal ctx
            got = mine.get(scheme)
            if got is None:
                ctx = ctx or self._context(sc)
                key = (sc.machine, scheme, ctx)
                if key not in self.bases:
                    self.bases[key] = comm_basis(sc.machine.network, scheme, ctx)
                got = mine[scheme] = self.bases[key]
            return got
        return basis

    def _context(self, sc) -> PhaseContext:
        """comm_context, the access distance computed once per IVP and size."""
        key = (sc.ivp, sc.n)
        if key not in self.distances:
            self.distances[key] = comm_context(sc).distance
        return PhaseContext(sc.n, sc.nodes, self.distances[key], sc.ivp.sparse_halo)

"""A mixed allocation: one run over nodes of several kinds (docs/method.md "Mixed allocations").
Pure.

Each kind brings its own machine (node model, cores, caches) and runs one rank per node with its
threads; the ranks exchange over one interconnect.  The components are split in blocks, one per
rank in rank order (the kinds in the order given): a split is the tuple of those blocks
(AUTOTUNE_COUNTS of the generated solver, docs/usage.md).  A rank of kind k is priced as a
scenario of its own (Scenario.block) whose machine exchanges over the interconnect.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from functools import cached_property

from autotune.errors import InputError
from autotune.specs.control import Control
from autotune.specs.ivp import IVP
from autotune.specs.machine import Machine
from autotune.specs.method import Method
from autotune.specs.parts import DOUBLE
from autotune.specs.scenario import Scenario, check_scenario, check_threads


@dataclass(frozen=True)
class Kind:
    """One kind of node in the allocation: its name as asked (a partition or a machine), its
    machine, how many of its nodes and the threads of each."""
    name: str
    machine: Machine
    nodes: int
    threads: int


@dataclass(frozen=True)
class MixedScenario:
    ivp: IVP
    method: Method
    n: int
    kinds: tuple[Kind, ...]
    network: dict = field(hash=False)     # the interconnect's communication model (a machine's network)
    network_from: str = ""                # whose figures those are (a machine's name, and why)
    control: Control | None = None
    given: tuple[int, ...] | None = None   # the split asked for (None: the model chooses one per variant)

    @property
    def ranks(self) -> int:
        return sum(k.nodes for k in self.kinds)

    @property
    def label(self) -> str:
        """The allocation as asked: big:4,small:2."""
        return ",".join(f"{k.name}:{k.nodes}" for k in self.kinds)

    @cached_property
    def granule(self) -> int:
        """Blocks are whole cache lines of every kind (components per line, their lcm)."""
        g = 1
        for k in self.kinds:
            g = math.lcm(g, max(1, k.machine.cacheline // DOUBLE))
        return g

    def rank_scenario(self, kind: Kind, block: int) -> Scenario:
        """One rank of `kind` holding `block` components, exchanging over the interconnect."""
        return Scenario(self.ivp, self.method, replace(kind.machine, network=self.network), self.n, self.ranks,
                        kind.threads, self.control, block)

    def even(self) -> tuple[int, ...]:
        """The even split: ceil(n / ranks) a rank, the last ranks one less where n does not divide."""
        return spread(self.n, [1] * self.ranks)

    def kind_blocks(self, split: tuple[int, ...]) -> list[int]:
        """Per kind, the largest block a rank of it holds in `split` (the one its time is priced at)."""
        out, at = [], 0
        for k in self.kinds:
            out.append(max(split[at:at + k.nodes]))
            at += k.nodes
        return out

    def shares(self, split: tuple[int, ...]) -> list[float]:
        """Per kind, the fraction of the components its ranks hold."""
        out, at = [], 0
        for k in self.kinds:
            out.append(sum(split[at:at + k.nodes]) / self.n)
            at += k.nodes
        return out


def spread(n: int, weights: list[int]) -> tuple[int, ...]:
    """n components in blocks as even as weights allow (each block its weight's share, the
    remainder one each to the first)."""
    total = sum(weights)
    base = [n * w // total for w in weights]
    rest = n - sum(base)
    return tuple(b + (1 if i < rest else 0) for i, b in enumerate(base))


def check_mixed(ivp: IVP, n: int, kinds: tuple[Kind, ...]) -> None:
    """Validate a mixed allocation's numbers (InputError naming the field)."""
    ranks = sum(k.nodes for k in kinds)
    for k in kinds:
        if k.nodes < 1:
            raise InputError(f"{k.name}:{k.nodes}: expected at least 1 node of each kind", field="nodes")
        try:
            check_threads(k.threads, k.machine)
        except InputError as e:
            raise InputError(f"{e.message} (kind {k.name})", field="threads") from None
    check_scenario(ivp, n, ranks, 1, kinds[0].machine)


def check_split(split: tuple[int, ...], n: int, ranks: int, field: str = "split") -> None:
    """A split given by hand: one block of at least one component per rank, n in all."""
    if len(split) != ranks:
        raise InputError(f"{','.join(map(str, split))}: expected {ranks} blocks, one per rank", field=field)
    if min(split) < 1:
        raise InputError(f"{','.join(map(str, split))}: a rank without components", field=field)
    if sum(split) != n:
        raise InputError(f"{','.join(map(str, split))}: the blocks hold {sum(split)} components, not n = {n}",
                         field=field)


def split_of(value, n: int, kinds: tuple[Kind, ...]) -> tuple[int, ...] | None:
    """A split as asked ("C0,C1,..." or a list; None: the model's), checked against the kinds."""
    if value is None:
        return None
    items = str(value).split(",") if isinstance(value, str) else list(value)
    try:
        split = tuple(int(str(x).strip()) for x in items)
    except ValueError:
        raise InputError(f"{value}: expected whole numbers of components, one per rank", field="split") from None
    check_split(split, n, sum(k.nodes for k in kinds))
    return split

"""A scenario: IVP, method, machine, system size, nodes and threads per node, checked, and the
variants that can run in it.  Pure."""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from functools import cached_property

from autotune.errors import InputError
from autotune.specs.control import Control
from autotune.specs.exclusion import COMM, Exclusion, Exclusions
from autotune.specs.ivp import IVP
from autotune.specs.machine import Machine
from autotune.specs.method import Method
from autotune.specs.schemes import SCHEMES, PhaseContext
from autotune.specs.variants import Filter, Variant, selected_variants, spaces, stored


@dataclass(frozen=True)
class Scenario:
    ivp: IVP
    method: Method
    machine: Machine
    n: int
    nodes: int
    threads: int
    control: Control | None = None     # step-size control's tolerances (None: a fixed step)
    # one rank of a mixed allocation (specs.mixed): its own block of components, on a node of
    # its own (None: every rank holds ceil(n / nodes))
    block: int | None = None

    @cached_property
    def ranks_per_node(self) -> int:
        """Ranks sharing one node: on a single-node machine every rank runs on the same host
        (a mixed allocation's rank has its node to itself)."""
        if self.block is not None:
            return 1
        return self.nodes if self.machine.nodes == 1 else 1

    @property
    def n_local(self) -> int:
        """Components on the rank priced: its block, else the largest of an even split."""
        return self.block if self.block is not None else math.ceil(self.n / self.nodes)

    def part_local(self, components: int) -> int:
        """Of an RHS part of `components` components, those on the rank priced (its share of
        the block, rounded up as an even split's)."""
        if self.block is None:
            return math.ceil(components / self.nodes)
        return math.ceil(components * self.block / self.n)

    @property
    def beyond_machine(self) -> bool:
        """More nodes than the machine has: hypothetical nodes of the same kind."""
        return self.machine.nodes > 1 and self.nodes > self.machine.nodes

    @cached_property
    def node_threads(self) -> int:
        """Cores busy on one node (all its ranks' threads)."""
        return min(self.machine.cores, self.threads * self.ranks_per_node)


def check_threads(threads: int, machine: Machine) -> None:
    if threads < 1:
        raise InputError(f"{threads}: expected at least 1", field="threads")
    if threads > machine.cores:
        raise InputError(f"{threads}: machine {machine.name} has {machine.cores} cores per node", field="threads")


def check_scenario(ivp: IVP, n: int, nodes: int, threads: int, machine: Machine) -> None:
    """Validate the numbers of a scenario (InputError naming the field)."""
    if nodes < 1:
        raise InputError(f"{nodes}: expected at least 1", field="nodes")
    check_threads(threads, machine)
    ivp.size_value(n)
    if n < nodes:
        raise InputError(f"{n}: fewer components than nodes ({nodes})", field="n")


def comm_context(sc: Scenario, ivp: IVP | None = None) -> PhaseContext:
    """What a scheme's check reads: the scenario's numbers and its IVP (or the IVP as a variant
    stores it: specs.variants.ivp_for)."""
    ivp = ivp or sc.ivp
    return PhaseContext(sc.n, sc.nodes, ivp.access_distance(sc.n), ivp.sparse_halo)


def applicable_schemes(sc: Scenario, schemes: list[str], ivp: IVP | None = None) -> tuple[list[str], Exclusions]:
    """The schemes that can exchange in this scenario (its IVP stored as `ivp`), and the others,
    each with why."""
    ctx = comm_context(sc, ivp)
    ok, excluded = [], []
    for s in schemes:
        why = SCHEMES[s].check(ctx)
        if why:
            excluded.append(Exclusion(COMM, s, why))
        else:
            ok.append(s)
    return ok, Exclusions(excluded)


Offer = tuple[tuple[tuple[str, str], ...], IVP, list[str]]


def scenario_spaces(sc: Scenario) -> tuple:
    """The spaces of the scenario's IVP (specs.variants.spaces), controlled where its step is."""
    return spaces(sc.ivp, sc.control is not None)


def offers(ivp: IVP, pool: list[Variant]) -> list[Offer]:
    """Per way of storing the IVP that the pool has variants of (specs.variants.spaces): its
    values, the IVP stored so, and the pool's schemes there (sorted)."""
    out = []
    for sp in spaces(ivp):
        mine = sorted({v.comm for v in pool if v.stored_as == sp.fixed})
        if mine:
            out.append((sp.fixed, stored(ivp, sp.fixed), mine))
    return out


def scheme_checks(sc: Scenario, offered: list[Offer]) -> tuple[tuple, Exclusions]:
    """The schemes that can exchange in this scenario, per way of storing its IVP ((values,
    schemes) each), and the others, each with why: per way that excludes it (Exclusion.where),
    once without where where every way offering it excludes it alike (Exclusions.collapsed)."""
    ok, found = [], []
    for fixed, ivp, schemes in offered:
        runs, out = applicable_schemes(sc, schemes, ivp)
        ok.append((fixed, tuple(runs)))
        found += [Exclusion(COMM, e.value, e.why, fixed) for e in out]
    offering = Counter((COMM, c) for _, _, schemes in offered for c in schemes)
    return tuple(ok), Exclusions(sorted(found, key=lambda e: e.value)).collapsed(offering)


def applicable_variants(sc: Scenario, wanted: list[str] | None = None,
                        select: Filter | None = None) -> tuple[list[Variant], Exclusions]:
    """The variants (of those `select` keeps) whose communication scheme can run at this n and
    node count (the IVP stored as each variant stores it), and why the others cannot;
    InputError if none can."""
    variants = selected_variants(scenario_spaces(sc), wanted, select, sc.ivp.name)
    ok, excluded = scheme_checks(sc, offers(sc.ivp, variants))
    runs = {(fixed, c) for fixed, schemes in ok for c in schemes}
    if not runs:
        raise InputError(f"{sc.n} with {sc.nodes} nodes: no communication scheme applies "
                         f"({'; '.join(e.why for e in excluded)})", field="n")
    return [v for v in variants if (v.stored_as, v.comm) in runs], excluded

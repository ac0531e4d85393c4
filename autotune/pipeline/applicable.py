"""The variants that can run in a scenario, and why the others cannot: its communication
schemes (specs.scenario), and the values that pay only in some scenarios (a dimension's `pays`
hook, specs.dimension: e.g. non-temporal stores, where the vectors they stream would have left
the last-level cache before the step reads them again)."""
from __future__ import annotations

from functools import cached_property, lru_cache

from autotune.errors import InputError
from autotune.model import reuse
from autotune.model.comm import network_model
from autotune.model.control import REDUCE_BYTES, scenario_cost
from autotune.pipeline.layout import control_shape, tile_of, tiling, walk_for, walking
from autotune.specs import window
from autotune.specs.method import Method
from autotune.specs.exclusion import Exclusion, Exclusions
from autotune.specs.parts import DOUBLE
from autotune.specs.scenario import Scenario, applicable_variants
from autotune.specs.stepvalues import form_of, step_form, step_keys
from autotune.specs.variants import DIMENSIONS, Filter, Variant, ivp_for, spaces


@lru_cache(maxsize=256)
def _next_reads(method: Method, values: tuple[str, ...]) -> tuple[float, ...]:
    return tuple(reuse.next_read_distances(form_of(method, values).sweeps()))


def _pipelined(method: Method, variant: Variant) -> bool:
    """Whether the variant's step has a pipelined window (its levels lag within one sweep)."""
    return any(sw.window for sw in step_form(method, variant).sweeps())


class _ScenarioFacts:
    """What the pays hooks read about a scenario whatever the variant, each worked out once."""

    def __init__(self, sc: Scenario) -> None:
        self.sc = sc
        self._distances: dict = {}

    @cached_property
    def vector_bytes(self) -> float:
        return float(DOUBLE * self.sc.n_local * self.sc.ranks_per_node)

    @cached_property
    def llc_bytes(self) -> float:
        return reuse.level_reach(self.sc.machine, self.sc.node_threads)[-1]

    def distance(self, ivp) -> int:
        """The access distance of the IVP as a variant stores it (specs.variants.ivp_for)."""
        got = self._distances.get(ivp.name)
        if got is None:
            got = self._distances[ivp.name] = window.reach(ivp, self.sc.n)
        return got

    @cached_property
    def stored_ways(self) -> bool:
        """Whether the IVP can be stored more than one way (an exclusion then says which it holds for)."""
        return len(spaces(self.sc.ivp)) > 1


class _Facts:
    """What a pays hook reads about one variant in one scenario (specs.dimension.PayFacts)."""

    def __init__(self, shared: _ScenarioFacts, variant: Variant) -> None:
        self._shared, self._sc, self._variant = shared, shared.sc, variant
        self.n, self.nodes = self._sc.n, self._sc.nodes

    @property
    def vector_bytes(self) -> float:
        return self._shared.vector_bytes

    @property
    def llc_bytes(self) -> float:
        return self._shared.llc_bytes

    @property
    def stages(self) -> int:
        return self._sc.method.stages

    @property
    def iterations(self) -> int:
        return self._sc.method.iterations

    @property
    def distance(self) -> int:
        return self._shared.distance(self.ivp)

    @property
    def threads(self) -> int:
        return self._sc.node_threads

    @property
    def region(self) -> float:
        return self._sc.n_local / self._sc.threads if self._sc.block else self._sc.n / (self._sc.nodes * self._sc.threads)

    @cached_property
    def tile(self) -> int:
        return tile_of(tiling(self._variant), self._sc.machine, self._sc.method.stages)

    @cached_property
    def walk(self):
        m = self._sc.method
        levels = m.iterations if _pipelined(m, self._variant) else 0
        return walk_for(walking(self._variant), self.ivp, self._sc.n, m, self._sc.machine, levels)

    @cached_property
    def ivp(self):
        """The scenario's IVP as the variant stores it."""
        return ivp_for(self._sc.ivp, self._variant)

    @property
    def machine(self):
        return self._sc.machine

    @cached_property
    def values(self) -> dict[str, str]:
        return self._variant.fields()

    def next_reads(self) -> tuple[float, ...]:
        return _next_reads(self._sc.method, tuple(getattr(self._variant, k) for k in step_keys()))


_REFUSABLE: dict[str, tuple] = {}


def _refusable(variant: Variant) -> tuple:
    """(key, dimension) of the variant's values that a scenario may refuse: other than the
    default, of a dimension with a pays hook (once per variant, kept by its name: a sweep asks
    for each variant in every scenario, millions of times)."""
    got = _REFUSABLE.get(variant.name)
    if got is None:
        got = _REFUSABLE[variant.name] = tuple((k, d) for k, d in DIMENSIONS.items()
                                               if d.pays and getattr(variant, k) != d.default)
    return got


NONE = Exclusions()      # nothing excluded (shared: Exclusions are never changed in place)


def why_excluded(sc: Scenario, excluded: Exclusions, variant: Variant) -> str | None:
    """Why `variant` cannot run in `sc`, where these are excluded (None: it can): its scheme's
    reason, else the first of its values that does not pay, asked of this variant (a value may
    pay in one variant and not in another: pipe=wavefront over strips, not in row order)."""
    scheme = excluded.why(variant)
    if scheme or excluded.why(variant, [k for k, _ in _refusable(variant)]) is None:
        return scheme
    return next((e.why for e in unpaid(sc, variant)), None)


def unpaid(sc: Scenario | _ScenarioFacts, variant: Variant) -> Exclusions:
    """The values of `variant` that do not pay in `sc`, each with why (none: all may)."""
    refusable = _refusable(variant)
    if not refusable:
        return NONE
    shared = sc if isinstance(sc, _ScenarioFacts) else _ScenarioFacts(sc)
    facts = _Facts(shared, variant)
    where = variant.stored_as if shared.stored_ways else ()
    out = []
    for k, d in refusable:
        value = getattr(variant, k)
        if why := d.pays(value, facts):
            out.append(Exclusion(k, value, why, where))
    return Exclusions(out) if out else NONE


def drop_unpaid(sc: Scenario, variants: list[Variant], refusable: list[tuple[int, Variant]] | None = None
                ) -> tuple[list[Variant], Exclusions]:
    """The variants less those with a value that does not pay here, and why per value (none
    dropped: no exclusions).  Where nothing else is left (a selection of such variants only),
    all are kept that can run at all: never one whose order has no geometry here (a walk hook's
    None: strips of an IVP without a grid), which could be neither priced nor generated.  Only
    the variants with a value that may be refused are asked (a few of a pool): refusable, where
    the caller keeps them for many scenarios of one list (refusable_positions)."""
    why, shared, dropped, unrunnable = NONE, _ScenarioFacts(sc), set(), set()
    asked = refusable_positions(variants) if refusable is None else refusable
    for i, v in asked:
        reasons = unpaid(shared, v)
        if reasons is not NONE:           # (unpaid returns NONE itself for nothing refused)
            why = reasons.merged(why)
            dropped.add(i)
            if walking(v) and _Facts(shared, v).walk is None:
                unrunnable.add(i)
    if not dropped:
        return list(variants), NONE
    if shared.stored_ways:      # an item every way among those asked refuses alike: once
        why = why.collapsed(len({v.stored_as for _, v in asked}))
    if len(dropped) < len(variants):
        return [v for i, v in enumerate(variants) if i not in dropped], why
    runnable = [v for i, v in enumerate(variants) if i not in unrunnable]
    return runnable, why if len(runnable) < len(variants) else NONE


def refusable_positions(variants: list[Variant]) -> list[tuple[int, Variant]]:
    """(index, variant) of the variants with a value a scenario may refuse (_refusable)."""
    return [(i, v) for i, v in enumerate(variants) if _refusable(v)]


def applicable_pool(sc: Scenario, wanted: list[str] | None = None, select: Filter | None = None
                    ) -> tuple[list[Variant], Exclusions]:
    """specs.scenario.applicable_variants, less the variants with a value that does not pay here
    (drop_unpaid), and why each scheme or value is left out."""
    variants, excluded = applicable_variants(sc, wanted, select)
    kept, why = drop_unpaid(sc, variants)
    if variants and not kept:
        raise InputError(f": none of the {len(variants)} variants selected can run here: "
                         + "; ".join(f"{e.item}: {e.why}" for e in why), field="variant_filter")
    return kept, excluded.merged(why)


def window_of(sc: Scenario, variant: Variant) -> dict | None:
    """A pipelined variant's window in `sc` (docs/method.md "The pipelined step"), None where
    its step has none: the order it visits the components in, the levels' access distance, a
    ring row, the bytes a thread and the node keep live and the cache level that holds them,
    the ring traffic a step moves there on a node (every level but the last writes s rows of a
    component, every level but the first reads them: 2 m s doubles), and where the order is
    not the rows' its geometry and the edge work of the predictor's level."""
    if not _pipelined(sc.method, variant):
        return None
    facts = _Facts(_ScenarioFacts(sc), variant)
    s, m = sc.method.stages, sc.method.iterations
    walk = facts.walk
    if walk is None:
        out = {"order": "rows", "distance": facts.distance,
               "ring_components": window.ring_components(facts.tile, facts.distance, s),
               "bytes_per_thread": window.window_bytes(facts.tile, facts.distance, s, m)}
    else:
        out = {"order": ",".join(f"{k}={v}" for k, v in walking(variant)), "geometry": walk.describe(),
               "distance": walk.distance, "ring_components": walk.ring, "bytes_per_thread": walk.window_bytes(),
               "edge_share": walk.edge_share(m)}
    node = out["bytes_per_thread"] * sc.node_threads
    reach = reuse.level_reach(sc.machine, sc.node_threads)
    names = [c.name for c in sc.machine.caches]
    out.update(bytes_node=node, level=next((names[i] for i, r in enumerate(reach) if node <= r), "MEM"),
               ring_bytes_per_step=2 * m * s * DOUBLE * sc.n_local)
    return out


def control_terms(sc: Scenario, variant: Variant) -> dict | None:
    """Step-size control's terms for a variant in `sc` (model.control; None: a fixed step): the
    tolerances, where the norm is summed, each term's seconds per attempt and the rejected
    attempts per accepted step the price assumes."""
    windowed = _pipelined(sc.method, variant)
    shape = dict(control_shape(variant))
    cost = scenario_cost(sc, windowed, network_model(sc.machine.network), **shape)
    if cost is None:
        return None
    where = ("in the pipelined step's last level" if windowed else
             "in the sweep that writes the new y" if shape.get("fused") else "a sweep of its own")
    how = "nonblocking, while the new y is saved" if cost.overlapped else "blocking"
    return {**sc.control.tolerances(), "norm": where, **cost.to_dict(),
            "reduce_op": f"allreduce of {REDUCE_BYTES} bytes over {sc.nodes} nodes ({how})"}

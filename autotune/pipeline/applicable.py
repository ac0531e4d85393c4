"""The variants that can run in a scenario, and why the others cannot: its communication
schemes (specs.scenario), and the values that pay only in some scenarios (a dimension's `pays`
hook, specs.dimension: e.g. non-temporal stores, where the vectors they stream would have left
the last-level cache before the step reads them again)."""
from __future__ import annotations

import math
from functools import cached_property, lru_cache

from autotune.model import reuse
from autotune.pipeline.layout import tile_of, tiling
from autotune.specs import window
from autotune.specs.method import Method
from autotune.specs.exclusion import Exclusion, Exclusions
from autotune.specs.parts import DOUBLE
from autotune.specs.scenario import Scenario, applicable_variants
from autotune.specs.stepvalues import form_of, step_keys
from autotune.specs.variants import DIMENSIONS, Filter, Variant


@lru_cache(maxsize=256)
def _next_reads(method: Method, values: tuple[str, ...]) -> tuple[float, ...]:
    return tuple(reuse.next_read_distances(form_of(method, values).sweeps()))


class _Facts:
    """What a pays hook reads about one variant in one scenario (specs.dimension.PayFacts)."""

    def __init__(self, sc: Scenario, variant: Variant) -> None:
        self._sc, self._variant = sc, variant
        self.n, self.nodes = sc.n, sc.nodes

    @cached_property
    def vector_bytes(self) -> float:
        return float(DOUBLE * math.ceil(self._sc.n / self._sc.nodes) * self._sc.ranks_per_node)

    @cached_property
    def llc_bytes(self) -> float:
        return reuse.level_reach(self._sc.machine, self._sc.node_threads)[-1]

    @property
    def stages(self) -> int:
        return self._sc.method.stages

    @property
    def iterations(self) -> int:
        return self._sc.method.iterations

    @cached_property
    def distance(self) -> int:
        return window.reach(self._sc.ivp, self._sc.n)

    @property
    def threads(self) -> int:
        return self._sc.node_threads

    @property
    def region(self) -> float:
        return self._sc.n / (self._sc.nodes * self._sc.threads)

    @cached_property
    def tile(self) -> int:
        return tile_of(tiling(self._variant), self._sc.machine, self._sc.method.stages)

    def next_reads(self) -> tuple[float, ...]:
        return _next_reads(self._sc.method, tuple(getattr(self._variant, k) for k in step_keys()))


def _refusable(variant: Variant):
    """(key, dimension) of the variant's values that a scenario may refuse: other than the
    default, of a dimension with a pays hook."""
    return [(k, d) for k, d in DIMENSIONS.items() if d.pays and getattr(variant, k) != d.default]


def why_excluded(excluded: Exclusions, variant: Variant) -> str | None:
    """Why `variant` cannot run where these are excluded (None: it can): its scheme's reason,
    else its first refused value's."""
    return excluded.why(variant, [k for k, _ in _refusable(variant)])


def unpaid(sc: Scenario, variant: Variant) -> Exclusions:
    """The values of `variant` that do not pay in `sc`, each with why (none: all may)."""
    facts, out = _Facts(sc, variant), []
    for k, d in _refusable(variant):
        value = getattr(variant, k)
        if why := d.pays(value, facts):
            out.append(Exclusion(k, value, why))
    return Exclusions(out)


def drop_unpaid(sc: Scenario, variants: list[Variant]) -> tuple[list[Variant], Exclusions]:
    """The variants less those with a value that does not pay here, and why per value (none
    dropped: no exclusions).  Where nothing else is left (a selection of such variants only),
    all are kept."""
    kept, why = [], Exclusions()
    for v in variants:
        reasons = unpaid(sc, v)
        if reasons:
            why = reasons.merged(why)
        else:
            kept.append(v)
    return (kept, why) if why and kept else (variants, Exclusions())


def applicable_pool(sc: Scenario, wanted: list[str] | None = None, select: Filter | None = None
                    ) -> tuple[list[Variant], Exclusions]:
    """specs.scenario.applicable_variants, less the variants with a value that does not pay here
    (drop_unpaid), and why each scheme or value is left out."""
    variants, excluded = applicable_variants(sc, wanted, select)
    kept, why = drop_unpaid(sc, variants)
    return kept, excluded.merged(why)

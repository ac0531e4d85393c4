"""The variants that can run in a scenario, and why the others cannot: its communication
schemes (specs.scenario), and the values that pay only at some sizes (store=nt: where the
vectors it streams would have left the last-level cache before the step reads them again)."""
from __future__ import annotations

import math
from functools import lru_cache

from autotune.model import reuse
from autotune.model.streaming import streaming_pays
from autotune.specs.method import Method
from autotune.specs.parts import DOUBLE
from autotune.specs.scenario import Scenario, applicable_variants
from autotune.specs.stepvalues import form_of
from autotune.specs.step import step_keys
from autotune.specs.variants import Filter, Variant

STREAMING = "store=nt"


@lru_cache(maxsize=256)
def _next_reads(method: Method, values: tuple[str, ...]) -> tuple[float, ...]:
    return tuple(reuse.next_read_distances(form_of(method, values).sweeps()))


def streaming_fails(sc: Scenario, variant: Variant) -> str | None:
    """Why store=nt does not pay for this variant here (None: it may)."""
    keys = step_keys()
    reads = _next_reads(sc.method, tuple(getattr(variant, k) for k in keys))
    vector = float(DOUBLE * math.ceil(sc.n / sc.nodes) * sc.ranks_per_node)
    llc = reuse.level_reach(sc.machine, sc.node_threads)[-1]
    if streaming_pays(list(reads), vector, llc):
        return None
    return (f"the vectors it streams would still be in the last-level cache ({llc / 2**20:.3g} MiB) when "
            f"the step reads them again (n = {sc.n} on {sc.nodes} node{'s' if sc.nodes > 1 else ''})")


def drop_streaming(sc: Scenario, variants: list[Variant]) -> tuple[list[Variant], str | None]:
    """The variants less the store=nt ones that do not pay here, and why (None: none dropped).
    Where nothing else is left (a selection of store=nt variants only), all are kept."""
    kept, why = [], None
    for v in variants:
        reason = streaming_fails(sc, v) if v.store == "nt" else None
        if reason:
            why = why or reason
        else:
            kept.append(v)
    return (kept, why) if why and kept else (variants, None)


def applicable_pool(sc: Scenario, wanted: list[str] | None = None, select: Filter | None = None
                    ) -> tuple[list[Variant], dict[str, str]]:
    """specs.scenario.applicable_variants, less the store=nt variants that do not pay here
    (drop_streaming); excluded maps a scheme, or "store=nt", to why."""
    variants, excluded = applicable_variants(sc, wanted, select)
    kept, why = drop_streaming(sc, variants)
    return kept, (dict(excluded, **{STREAMING: why}) if why else excluded)

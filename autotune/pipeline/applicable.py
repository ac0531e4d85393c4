"""The variants that can run in a scenario, and why the others cannot: its communication
schemes (specs.scenario), and the values that pay only at some sizes (store=nt: where the
vectors it streams would have left the last-level cache before the step reads them again)."""
from __future__ import annotations

import math
from functools import lru_cache
from typing import Callable

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


# values that pay only in some scenarios: "key=value" -> why it does not pay in one (None: it may)
VALUE_CHECKS: dict[str, Callable[[Scenario, Variant], str | None]] = {STREAMING: streaming_fails}


def value_keys(variant: Variant) -> list[str]:
    """The "key=value" items of a variant that a scenario may exclude (VALUE_CHECKS)."""
    return [k for k in (f"{d}={v}" for d, v in variant.fields().items()) if k in VALUE_CHECKS]


def drop_unpaid(sc: Scenario, variants: list[Variant]) -> tuple[list[Variant], dict[str, str]]:
    """The variants less those with a value that does not pay here (VALUE_CHECKS), and why per
    value ({}: none dropped).  Where nothing else is left (a selection of such variants only),
    all are kept."""
    kept, why = [], {}
    for v in variants:
        reasons = {k: r for k in value_keys(v) if (r := VALUE_CHECKS[k](sc, v))}
        if reasons:
            why = {**reasons, **why}
        else:
            kept.append(v)
    return (kept, why) if why and kept else (variants, {})


def applicable_pool(sc: Scenario, wanted: list[str] | None = None, select: Filter | None = None
                    ) -> tuple[list[Variant], dict[str, str]]:
    """specs.scenario.applicable_variants, less the variants with a value that does not pay here
    (drop_unpaid); excluded maps a scheme, or a "key=value" item, to why."""
    variants, excluded = applicable_variants(sc, wanted, select)
    kept, why = drop_unpaid(sc, variants)
    return kept, {**excluded, **why}

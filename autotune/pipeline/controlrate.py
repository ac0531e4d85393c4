"""Step-size control's rejected attempts per accepted step, as runs reported them: a tune of a
controlled scenario adds its runs' counts to the store, and the ranking prices the control at
that rate (model.control).  Every variant takes the same steps (docs/method.md, "Step-size
control"), so the rate belongs to the problem and its tolerances: the IVP, the method, the size
and rtol and atol, whatever the machine, the variant and the node count."""
from __future__ import annotations

import json
from dataclasses import replace

from autotune.specs.scenario import Scenario
from autotune.storage.store import Store

KIND = "control_rejections"


def rate_key(sc: Scenario) -> str:
    return json.dumps([sc.ivp.name, sc.method.name, sc.n, sc.control.rtol, sc.control.atol])


def counts(sc: Scenario, store: Store) -> tuple[int, int]:
    """(accepted, rejected) steps the store's runs of the scenario's problem took (0, 0: none)."""
    raw = store.get_derived(KIND, rate_key(sc))
    if raw is None:
        return 0, 0
    got = json.loads(raw)
    return int(got["accepted"]), int(got["rejected"])


def with_measured_rate(sc: Scenario, store: Store, seen: dict | None = None) -> Scenario:
    """The scenario with the rate its problem's runs reported (as it was: a fixed step, a rate
    given, or no run yet).  seen: the counts already read, by problem (a sweep's scenarios share
    few problems: one store read each)."""
    if sc.control is None or sc.control.rejected:
        return sc
    seen = {} if seen is None else seen
    key = rate_key(sc)
    if key not in seen:
        seen[key] = counts(sc, store)
    accepted, rejected = seen[key]
    if not accepted:
        return sc
    return replace(sc, control=replace(sc.control, rejected=rejected / accepted))


def add_counts(sc: Scenario, store: Store, accepted: int, rejected: int) -> None:
    """A run's accepted and rejected steps added to what the store holds for its problem."""
    if sc.control is None or accepted <= 0:
        return
    a, r = counts(sc, store)
    store.put_derived(KIND, rate_key(sc), json.dumps({"accepted": a + accepted, "rejected": r + rejected}).encode())

"""scale over mixed node counts (docs/method.md "Mixed allocations"): every allocation a sweep of
kinds asks for (big:1:4,small:2), each ranked with its splits (pipeline.mixed), its best variant's
step beside the even split's."""
from __future__ import annotations

from dataclasses import replace

from autotune.model.preselect import Rule
from autotune.pipeline.mixed import rank_mixed
from autotune.progress import SILENT, Progress
from autotune.request.mixed import parse_mix_sweep
from autotune.request.scenario import ScenarioRequest
from autotune.results.mixedscale import MixedScaleResult
from autotune.storage.store import Store


def scale_mixed(req: ScenarioRequest, rule: Rule, store: Store, progress: Progress = SILENT,
                jobs: int | None = None) -> MixedScaleResult:
    """Each allocation checked (every kind's machine file) before any ranking, then ranked."""
    allocations = parse_mix_sweep(req.nodes)
    scenarios = [replace(req, nodes=",".join(f"{k}:{c}" for k, c in a)).mixed() for a in allocations]
    results = []
    for i, msc in enumerate(scenarios, 1):
        progress.say(f"[{i}/{len(scenarios)}] {msc.label}")
        results.append(rank_mixed(msc, rule, store, progress, jobs))
    return MixedScaleResult(results)

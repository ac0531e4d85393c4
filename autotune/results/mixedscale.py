"""scale over mixed node counts (pipeline.mixedscale): per allocation, its best variant with its
split, the even split's step and each kind's share."""
from __future__ import annotations

from autotune.results.frames import frame
from autotune.results.mixed import MixedRankResult
from autotune.results.registry import result_type


@result_type
class MixedScaleResult:
    def __init__(self, rankings: list[MixedRankResult]):
        self.rankings = rankings

    def rows(self) -> list[dict]:
        """One row per allocation: its best variant's step at its split and at the even split,
        the speed-up over the first allocation, and per kind its nodes and share."""
        first = self.rankings[0].best.step_s if self.rankings and self.rankings[0].best else None
        out = []
        for res in self.rankings:
            sc, best = res.scenario, res.best
            row = {"nodes": sc.label, "ranks": sc.ranks, "variant": best.variant.name if best else None,
                   "predicted_s": best.step_s if best else None, "even_s": best.even_s if best else None,
                   "vs_even": best.gain if best else None,
                   "speedup": first / best.step_s if first and best and best.step_s else None,
                   "split": ";".join(map(str, best.split)) if best and best.split else None}
            shares = sc.shares(best.split) if best and best.split else [None] * len(sc.kinds)
            for k, share in zip(sc.kinds, shares):
                row[f"{k.name}_nodes"], row[f"{k.name}_share"] = k.nodes, share
            out.append(row)
        return out

    def columns(self) -> list[str]:
        kinds = [k.name for k in self.rankings[0].scenario.kinds] if self.rankings else []
        return ["nodes", "ranks", "variant", "predicted_s", "even_s", "vs_even", "speedup", "split",
                *(f"{k}_{c}" for k in kinds for c in ("nodes", "share"))]

    def to_dict(self) -> dict:
        sc = self.rankings[0].scenario
        return {"ivp": sc.ivp.name, "method": sc.method.name, "n": sc.n,
                "kinds": [{"kind": k.name, "machine": k.machine.name, "threads": k.threads} for k in sc.kinds],
                "interconnect": {"from": sc.network_from}, "allocations": self.rows()}

    def to_frame(self):
        return frame(self.rows(), self.columns())

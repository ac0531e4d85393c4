"""Scalability from predictions: speedup, efficiency, an efficiency bound, the winner at each
node count, where it changes, and a recommended node count.  Pure.

Input: for each node count p, each variant's predicted seconds per step split into the
node time theta(p) and the communication time t_comm(p).  With p0 the smallest node
count given (normally 1) and T*(p0) the best variant's time there:

    speedup    S_v(p) = T*(p0) / T_v(p)                  (against the best variant at p0)
    efficiency E_v(p) = S_v(p) * p0 / p
    bound      E_v(p) <= T*(p0) p0 / (p0 theta_v(p0) + p t_comm,v(p))

The bound assumes the node work divides perfectly over the nodes (theta_v(p) =
theta_v(p0) p0 / p) and that only communication costs extra: the efficiency
roofline of a bound-and-bottleneck analysis, with communication as the ceiling.  A
prediction above it is superlinear (a smaller block moved into a faster cache
level).  The bottleneck at p is whichever of theta and t_comm is larger.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

RULES = ("efficiency", "fastest", "node-seconds")


@dataclass(frozen=True)
class Point:
    variant: str
    p: int
    total_s: float
    node_s: float
    comm_s: float


@dataclass(frozen=True)
class Rule:
    kind: str                # efficiency | fastest | node-seconds
    threshold: float = 0.5   # for efficiency

    def describe(self) -> str:
        if self.kind == "efficiency":
            return f"the largest node count whose best variant keeps efficiency >= {self.threshold:g}"
        if self.kind == "fastest":
            return "the node count with the shortest time per step"
        return "the node count with the fewest node-seconds per step"


def parse_rule(text: str) -> Rule:
    """'efficiency:0.6', 'efficiency' (0.5), 'fastest' or 'node-seconds'; ValueError otherwise."""
    kind, _, value = text.partition(":")
    if kind not in RULES:
        raise ValueError(f"expected one of {', '.join(RULES)} (efficiency:<threshold>)")
    if kind != "efficiency":
        if value:
            raise ValueError(f"'{kind}' takes no value")
        return Rule(kind)
    try:
        threshold = float(value) if value else 0.5
    except ValueError:
        raise ValueError(f"efficiency threshold {value!r} is not a number") from None
    if not 0 < threshold <= 1:
        raise ValueError(f"efficiency threshold {threshold:g} is not in (0, 1]")
    return Rule(kind, threshold)


@dataclass
class ScaleRow:
    """One variant at one node count."""
    variant: str
    nodes: int
    predicted_s: float
    speedup: float
    efficiency: float
    efficiency_bound: float | None
    node_share: float
    comm_share: float
    bottleneck: str             # node | communication
    superlinear: bool
    node_seconds: float
    comm_basis: str | None = None       # filled in by the caller, where known
    beyond_machine: bool | None = None


@dataclass(frozen=True)
class Winner:
    nodes: int
    variant: str
    predicted_s: float
    efficiency: float


@dataclass(frozen=True)
class Crossover:
    from_nodes: int
    to_nodes: int
    from_variant: str
    to_variant: str

    def to_dict(self) -> dict:
        return {"from_nodes": self.from_nodes, "to_nodes": self.to_nodes, "from": self.from_variant,
                "to": self.to_variant}


@dataclass(frozen=True)
class Fastest:
    nodes: int
    variant: str
    predicted_s: float


@dataclass(frozen=True)
class Recommended:
    nodes: int
    variant: str
    predicted_s: float
    efficiency: float
    rule: str
    met: bool


@dataclass
class ScaleAnalysis:
    base_nodes: int
    base_variant: str
    base_s: float
    rows: list[ScaleRow]
    winners: list[Winner]
    crossovers: list[Crossover]
    fastest: Fastest
    recommended: Recommended

    def row(self, variant: str, nodes: int) -> ScaleRow:
        return next(r for r in self.rows if r.variant == variant and r.nodes == nodes)

    def to_dict(self) -> dict:
        # the rows' fields are flat values: a copy of each row's own dict, not asdict's deep copy
        # (a sweep of a few node counts has thousands of rows)
        return {"base_nodes": self.base_nodes, "base_variant": self.base_variant, "base_s": self.base_s,
                "rows": [dict(vars(r)) for r in self.rows], "winners": [asdict(w) for w in self.winners],
                "crossovers": [c.to_dict() for c in self.crossovers], "fastest": asdict(self.fastest),
                "recommended": asdict(self.recommended)}


def analyse(points: list[Point], rule: Rule) -> ScaleAnalysis:
    """Per (variant, p) rows, the winner per p, crossovers and the recommendation."""
    ps = sorted({pt.p for pt in points})
    if not ps:
        raise ValueError("no predictions to analyse")
    p0 = ps[0]
    at = {(pt.variant, pt.p): pt for pt in points}
    base = min((pt for pt in points if pt.p == p0), key=lambda pt: (pt.total_s, pt.variant))
    t_best0 = base.total_s
    rows = []
    for pt in sorted(points, key=lambda q: (q.p, q.total_s, q.variant)):
        own0 = at.get((pt.variant, p0))
        speedup = t_best0 / pt.total_s
        eff = speedup * p0 / pt.p
        bound = (t_best0 * p0 / (p0 * own0.node_s + pt.p * pt.comm_s)) if own0 else None
        exposed = pt.total_s - pt.node_s     # the communication not hidden behind computation (overlap)
        rows.append(ScaleRow(pt.variant, pt.p, pt.total_s, speedup, eff, bound, pt.node_s / pt.total_s,
                             exposed / pt.total_s, "communication" if exposed > pt.node_s else "node",
                             bound is not None and eff > bound * (1 + 1e-9), pt.p * pt.total_s))
    # the best variant at each p.  Among tied ones (allgather and neighbour on one node) the
    # previous winner keeps its place, else the one best at the next node count: a tie is no
    # crossover
    by_p: dict[int, dict[str, ScaleRow]] = {}
    for r in rows:
        by_p.setdefault(r.nodes, {})[r.variant] = r
    winners, prev = [], None
    for k, p in enumerate(ps):
        cands = by_p[p]
        best_s = min(r.predicted_s for r in cands.values())
        tied = [r for r in cands.values() if r.predicted_s <= best_s * (1 + 1e-9)]
        nxt = by_p.get(ps[k + 1], {}) if k + 1 < len(ps) else {}
        pick = min(tied, key=lambda r: (r.variant != prev,
                                        nxt[r.variant].predicted_s if r.variant in nxt else 0.0,
                                        r.variant))
        winners.append(pick)
        prev = pick.variant
    crossovers = [Crossover(a.nodes, b.nodes, a.variant, b.variant)
                  for a, b in zip(winners, winners[1:]) if a.variant != b.variant]
    fastest = min(winners, key=lambda r: (r.predicted_s, r.nodes))
    if rule.kind == "fastest":
        pick = fastest
    elif rule.kind == "node-seconds":
        pick = min(winners, key=lambda r: (r.node_seconds, r.nodes))
    else:
        ok = [r for r in winners if r.efficiency >= rule.threshold]
        pick = max(ok, key=lambda r: r.nodes) if ok else winners[0]
    return ScaleAnalysis(
        p0, winners[0].variant, t_best0, rows,
        [Winner(r.nodes, r.variant, r.predicted_s, r.efficiency) for r in winners], crossovers,
        Fastest(fastest.nodes, fastest.variant, fastest.predicted_s),
        Recommended(pick.nodes, pick.variant, pick.predicted_s, pick.efficiency, rule.describe(),
                    rule.kind != "efficiency" or pick.efficiency >= rule.threshold))

"""What explain shows of one variant's kernel parts beyond their seconds, from the ranking's
priced rows (pipeline.scenariorows: `work(name)` gives each part's regime code, priced ECM result
and lines of work): the loops of its fused sweeps, their pricing against the measured sweeps,
and the bytes each part moves.  Each function takes that row source (None: a result read back
from JSON, which has none) and the variant's name.  Pure."""
from __future__ import annotations


def loops(src, name: str) -> dict[str, list[dict]]:
    """The variant's fused sweep parts -> the loops each runs over a tile (model.loops), per
    regime its data takes: the regime, each loop's name, weight and analysed cycles per line of
    work of the sweep, their sum, and the cycles the sweep is priced with (after its
    measurement's factor); empty where it has no such part."""
    if src is None:
        return {}
    from autotune.model.regime import code_regime
    lv = src.priced.batch.placed.lv
    out: dict[str, list[dict]] = {}
    for part, code, result, _ in src.work(name):
        if not result.get("loops"):
            continue
        mine = out.setdefault(part.name, [])
        label = code_regime(code, lv).label
        if all(i["regime"] != label for i in mine):
            mine.append({"regime": label, "loops": result["loops"],
                         "sum_cy_per_cl": sum(lp["cy_per_cl"] for lp in result["loops"]),
                         "priced_cy_per_cl": result["cy_per_cl"]})
    return out


def sweeps(src, name: str) -> dict[str, list[dict]]:
    """The variant's fused sweep parts -> how each is priced against its sweep measured as the
    solver runs it (model.sweeps: source, why, measured and analysed seconds, factor, size,
    level): one pricing per measurement its data takes (a part whose data comes from L3 and
    memory: L2's and memory's), the shallowest first; empty where none is measured."""
    if src is None:
        return {}
    out: dict[str, list[dict]] = {}
    for part, _, result, _ in src.work(name):
        info = result.get("sweep")
        mine = out.setdefault(part.name, []) if info else None
        if info and all((i["level"], i["n"]) != (info["level"], info["n"]) for i in mine):
            mine.append(info)
    return {part: sorted(infos, key=lambda i: i["level"]) for part, infos in out.items() if infos}


def traffic(src, name: str, cacheline: int) -> dict[str, dict[str, float]]:
    """The variant's kernel parts -> the bytes a step moves across each interface below L1
    ("L1-L2", ..., "L3-MEM") on one node, as the model prices the part's data: the lines
    kerncraft's cache predictor counted per line of work (with the streamed stores, a fused
    sweep's loops and the tile's F as the model prices them), times the lines of work of each
    level the data comes from.  A part whose analyses keep no line counts (stored before they
    were kept) is left out."""
    if src is None:
        return {}
    out: dict[str, dict[str, float]] = {}
    missing = set()
    for part, _, result, work in src.work(name):
        if not result.get("ok"):
            continue                # a failed analysis: the variant has no prediction to explain
        if not result.get("lines"):
            missing.add(part.name)
            continue
        mine = out.setdefault(part.name, {})
        for iface, n in result["lines"].items():
            mine[iface] = mine.get(iface, 0.0) + n * cacheline * work
    return {part: v for part, v in out.items() if part not in missing}

"""Benchmark of a port's reproducibility: how far two machine files of the same host (two fresh
`calibrate --node` runs) move the predictions of a pool, and which part of the file moves them.

    python -m benchmarks.calibrations A.yaml B.yaml [--ivp heat2d] [--n 4000000] [--nodes 1]
                                      [--threads T] [--store FILE] [--whole] [--json out.json]
                                      [--runs A.json B.json]

Ranks the IVP's whole pool with A and with B (the ECM model alone, no learned factors) and
prints, over the variants both price, the ratios B / A: their median, the median and the largest
|B / A - 1|, and the share within 10 %, against the targets (median within 5 %, every variant
within 10 %: docs/node-model.md, "Two calibrations of one host").  Then, for each section of
the file in which the two differ (each top-level one: the clock, the memory hierarchy, the
measured bandwidths, the in-core section, the cluster's barrier and network; and the bandwidths
level by level; the provenance is text and the cluster's name is A's), A with that one section
of B is ranked too: its ratios to A say how much of the difference that section carries (a swap
that writes the same file as another is ranked once; --whole: the whole files only).  Each
ranking that changes a node's figures runs the kerncraft analyses (and the sweeps measured on
this host) it lacks, once per file, into the store (default: a new one in a temporary folder).

--runs: the two calibrations' JSON (`calibrate --node --format json`, which keeps every run of
every bandwidth point).  Per level and thread count, the median over the kernels of B / A is
printed for three statistics of the runs: the median, the upper quartile (what the file holds)
and the best run.  Where the best runs moved as far as the median, the host itself was slower
or faster, not a busy minute's share of the runs: no statistic of the runs can hold that still.
"""
from __future__ import annotations

import argparse
import copy
import json
import statistics
import sys
import tempfile
from pathlib import Path

from autotune.specs.runstats import attainable
from autotune.storage.atomic import write_json, write_text
from autotune.storage.yamlfile import dump_text, round_trip_yaml

TARGET_MEDIAN, TARGET_EVERY = 0.05, 0.10      # |B / A - 1|
TEXT_ONLY = ("provenance",)                   # sections that price nothing
RUN_STATISTICS = {"median": statistics.median, "upper quartile": attainable, "best run": max}


def differing_sections(a: dict, b: dict) -> list[tuple[str, ...]]:
    """The sections whose values differ between two machine files' data, as key paths in A's
    order (B's own keys after), those that price nothing left out: each top-level key, "cluster"
    where any of its keys but the name differ, and the measured bandwidths level by level
    (("benchmarks", "measurements", "MEM"), ...) as well as whole."""
    out = []
    for k in _keys(a, b):
        if k in TEXT_ONLY:
            continue
        if k == "cluster":
            if _named(a.get(k)) != _named(b.get(k)):
                out.append((k,))
        elif a.get(k) != b.get(k):
            out.append((k,))
            if k == "benchmarks":
                mine, theirs = _at(a, (k, "measurements")), _at(b, (k, "measurements"))
                out += [(k, "measurements", lv) for lv in _keys(mine, theirs) if mine.get(lv) != theirs.get(lv)]
    return out


def _keys(a: dict, b: dict) -> list:
    return list(a) + [k for k in b if k not in a]


def _named(cluster) -> dict:
    """A cluster section without its name."""
    return {k: v for k, v in dict(cluster or {}).items() if k != "name"}


def _at(data: dict, path: tuple) -> dict:
    for k in path:
        data = (data or {}).get(k) or {}
    return data if isinstance(data, dict) else {}


def with_section(a: dict, b: dict, path: tuple[str, ...]) -> dict:
    """A's data with B's section at key path `path` (the cluster's: every key but A's name; a
    section B lacks is removed)."""
    out = copy.deepcopy(a)
    if path == ("cluster",):
        out["cluster"] = dict(_named(copy.deepcopy(b.get("cluster"))), name=(a.get("cluster") or {}).get("name"))
        return out
    parent, theirs = out, b
    for k in path[:-1]:
        parent = parent.setdefault(k, {})
        theirs = (theirs or {}).get(k) or {}
    if path[-1] in theirs:
        parent[path[-1]] = copy.deepcopy(theirs[path[-1]])
    else:
        parent.pop(path[-1], None)
    return out


def compare(base: dict[str, float | None], other: dict[str, float | None]) -> dict:
    """Ratios other / base over the variants both price: count, median ratio, the median and the
    largest |ratio - 1|, the share within TARGET_EVERY, and the two extreme variants."""
    ratios = {k: other[k] / base[k] for k in base if base[k] and other.get(k)}
    if not ratios:
        return {"variants": 0}
    off = sorted(abs(r - 1.0) for r in ratios.values())
    low, high = min(ratios, key=ratios.get), max(ratios, key=ratios.get)
    return {"variants": len(ratios), "median_ratio": statistics.median(ratios.values()),
            "median_abs": statistics.median(off), "max_abs": off[-1],
            "within_every": sum(x <= TARGET_EVERY for x in off) / len(off),
            "lowest": [low, ratios[low]], "highest": [high, ratios[high]]}


def run_shifts(a: dict, b: dict) -> list[dict]:
    """Per level and thread count of two calibrations' runs (their JSON's bandwidth_samples:
    level -> kernel -> the runs at 1, 2, ... threads), the median over the kernels both measured
    of B / A for each of RUN_STATISTICS (a point without runs on either side is left out)."""
    out = []
    for level, kernels in a.items():
        theirs = b.get(level) or {}
        for t in sorted({i + 1 for mine in kernels.values() for i in range(len(mine))}):
            here = [(m[t - 1], theirs[k][t - 1]) for k, m in kernels.items() if k in theirs
                    and t <= min(len(m), len(theirs[k])) and m[t - 1] and theirs[k][t - 1]]
            if here:
                out.append({"level": level, "threads": t, "kernels": len(here),
                            **{name: statistics.median(f(th) / f(m) for m, th in here)
                               for name, f in RUN_STATISTICS.items()}})
    return out


def line(label: str, c: dict) -> str:
    if not c.get("variants"):
        return f"{label:<38} no variant priced by both"
    return (f"{label:<38} {c['variants']:5d}  {c['median_ratio']:7.4f}  {100 * c['median_abs']:6.2f} %"
            f"  {100 * c['max_abs']:6.2f} %  {100 * c['within_every']:5.1f} %")


def predictions(machine: Path, a, store: Path) -> dict[str, float | None]:
    import autotune
    request = autotune.ScenarioRequest(a.ivp, n=a.n, nodes=a.nodes, threads=a.threads, machine=str(machine),
                                       model="ecm")
    return {v.name: v.predicted_s for v in autotune.rank(request, store=str(store)).ordered}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.calibrations")
    ap.add_argument("first", type=Path, help="a machine file calibrate --node made (A)")
    ap.add_argument("second", type=Path, help="another of the same host (B)")
    ap.add_argument("--ivp", default="heat2d")
    ap.add_argument("--n", type=int, default=4_000_000)
    ap.add_argument("--nodes", type=int, default=1)
    ap.add_argument("--threads", type=int)
    ap.add_argument("--store", type=Path, help="the store of the rankings (default: a new one)")
    ap.add_argument("--whole", action="store_true", help="compare the whole files only, no section of B in A")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--runs", type=Path, nargs=2, metavar=("A.json", "B.json"),
                    help="the two calibrations' JSON: how far each statistic of their runs moved")
    a = ap.parse_args(argv)
    samples = []
    for path in a.runs or ():
        try:
            got = json.loads(path.read_text()).get("bandwidth_samples")
        except (OSError, ValueError, AttributeError):
            got = None
        if not isinstance(got, dict) or not got:
            print(f"{path}: expected the JSON of calibrate --node with its runs (bandwidth_samples)", file=sys.stderr)
            return 2
        samples.append(got)
    # read and written as the calibration edits machine files (ruamel's round trip): kerncraft's
    # own constructs, such as its ordered maps (!!omap), stay what kerncraft reads
    yaml, data = round_trip_yaml(), []
    for path in (a.first, a.second):
        try:
            got = yaml.load(path.read_text())
        except Exception:        # any reason it cannot be read as YAML: said below in one line
            got = None
        if not isinstance(got, dict):
            print(f"{path}: expected a machine file (a YAML mapping)", file=sys.stderr)
            return 2
        data.append(got)
    with tempfile.TemporaryDirectory(prefix="calibrations-") as tmp:
        store = a.store or Path(tmp) / "store.sqlite"
        base = predictions(a.first, a, store)
        rows = {"B (the whole file)": compare(base, predictions(a.second, a, store))}
        ranked: dict[str, dict] = {}      # by the file's text: a level's swap can write the whole section's file
        for i, section in enumerate([] if a.whole else differing_sections(*data)):
            text = dump_text(yaml, with_section(*data, section))
            if text not in ranked:
                path = Path(tmp) / f"with-{i}.yaml"
                write_text(path, text, "machine")
                ranked[text] = compare(base, predictions(path, a, store))
            rows[f"B's {' / '.join(map(str, section))}"] = ranked[text]
    print(f"{a.ivp}, n = {a.n:,}, {a.nodes} node(s): predictions over A's ({a.first.name}); B is {a.second.name}")
    print(f"{'A with':<38} {'vars':>5}  {'median':>7}  {'|dev| med':>8}  {'|dev| max':>8}  {'in 10 %':>6}")
    for label, c in rows.items():
        print(line(label, c))
    whole = rows["B (the whole file)"]
    if whole.get("variants"):
        held = whole["median_abs"] <= TARGET_MEDIAN and whole["max_abs"] <= TARGET_EVERY
        print(f"targets: median |B / A - 1| <= {100 * TARGET_MEDIAN:.0f} %, every variant within "
              f"{100 * TARGET_EVERY:.0f} %: {'met' if held else 'missed'}")
    shifts = run_shifts(*samples) if samples else []
    if shifts:
        print("the runs (--runs): median over the kernels of B / A")
        print(f"{'level':<6} {'threads':>7}  " + "  ".join(f"{name:>14}" for name in RUN_STATISTICS))
        for r in shifts:
            print(f"{r['level']:<6} {r['threads']:>7}  " + "  ".join(f"{r[name]:14.3f}" for name in RUN_STATISTICS))
    if a.json:
        write_json(a.json, {"ivp": a.ivp, "n": a.n, "nodes": a.nodes, "threads": a.threads,
                            "first": str(a.first), "second": str(a.second), "rows": rows,
                            **({"run_shifts": shifts} if samples else {})}, "json")
    return 0


if __name__ == "__main__":
    sys.exit(main())

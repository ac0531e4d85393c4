"""Machines: a kerncraft machine file plus our `cluster` section (nodes, network, barrier)."""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from autotune.errors import InputError
from autotune.specs.shipped import shipped_dir, user_machine_dir
from autotune.specs.loading import parse_yaml, resolve, shipped_names, validate

DEFAULT_MACHINE = "haswell-ep-e5-2630v3"

_COST_MODEL = {
    "type": "object",
    "required": ["model", "provenance"],
    "properties": {
        "model": {"type": "string", "enum": ["datasheet", "fitted"]},
        "provenance": {"type": "string"},
        "latency_s": {"type": "number", "minimum": 0},
        "bandwidth_Bps": {"type": "number", "exclusiveMinimum": 0},
        "per_doubling_s": {"type": "number", "minimum": 0},
        "calibrated": {"type": "string"},
        "fits": {"type": "object"},
        "heldout_error_pct": {"type": "object"},
        "error_pct": {"type": ["object", "null"]},
    },
}
SCHEMA = {
    "type": "object",
    "required": ["model name", "clock", "cores per socket", "cacheline size", "memory hierarchy",
                 "compiler", "in-core model", "benchmarks", "cluster"],
    "properties": {
        "model name": {"type": "string"},
        "cores per socket": {"type": "integer", "minimum": 1},
        "memory hierarchy": {"type": "array", "minItems": 2, "items": {
            "type": "object", "required": ["level"]}},
        "cluster": {
            "type": "object",
            "required": ["name", "nodes", "cores_per_node", "network", "barrier"],
            "additionalProperties": False,
            "properties": {
                "name": {"type": "string"},
                "nodes": {"type": "integer", "minimum": 1},
                "cores_per_node": {"type": "integer", "minimum": 1},
                "threads_per_core": {"type": "integer", "minimum": 1},
                "network": _COST_MODEL,
                "barrier": dict(_COST_MODEL, required=["model", "provenance", "per_doubling_s"]),
            },
        },
    },
}

_UNITS = {"": 1, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9}


def _quantity(text) -> float:
    m = re.match(r"^\s*([0-9.eE+-]+)\s*([kKMG]?)", str(text))
    if not m:
        raise ValueError(text)
    return float(m.group(1)) * _UNITS[m.group(2)]


@dataclass(frozen=True)
class CacheLevel:
    name: str
    bytes_per_group: int
    cores_per_group: int
    victim: bool = False    # holds what the level above evicts (victims_to): the two exclude each other


@dataclass(frozen=True)
class Machine:
    name: str
    path: str
    model_name: str
    clock_hz: float
    cores: int
    cacheline: int
    caches: tuple[CacheLevel, ...]       # L1, L2, ... (without MEM)
    compiler: str
    compiler_flags: str
    incore_model: str
    nodes: int
    network: dict
    barrier: dict
    kerncraft_digest: str                 # hash of the kerncraft part (everything but `cluster`)
    bandwidths: tuple[tuple[str, tuple[float, ...]], ...] = ()   # level -> B/s at 1, 2, ... cores
                                                                 # (fastest measured kernel)

    def bandwidth(self, level: str, cores: int) -> float | None:
        """Bytes per second of the fastest measured streaming kernel in `level` on `cores` cores
        (the largest measured count below it, where that count was not measured)."""
        for name, row in self.bandwidths:
            if name == level and row:
                return row[min(cores, len(row)) - 1]
        return None

    def network_note(self) -> str:
        return f"{self.network['model']}: {self.network['provenance']}"


def _first_compiler(data) -> tuple[str, str]:
    comp = data["compiler"]
    items = list(comp.items()) if isinstance(comp, dict) else [tuple(p) for p in comp]
    for name, flags in items:
        if name == "gcc":
            return name, str(flags)
    return items[0][0], str(items[0][1])


def _check_network(net: dict, path) -> None:
    from autotune.model.commmodel import STRUCTURE, OpFit
    fits = net.get("fits") or {}
    for op, fit in fits.items():
        if op not in STRUCTURE:
            raise InputError(f"{path}: field 'cluster.network.fits.{op}': unknown operation "
                             f"(known: {', '.join(STRUCTURE)})")
        try:
            OpFit.from_dict(op, fit)
        except (KeyError, TypeError, ValueError) as e:
            raise InputError(f"{path}: field 'cluster.network.fits.{op}': malformed fit ({e})") from None
    if set(fits) != set(STRUCTURE):
        for field in ("latency_s", "bandwidth_Bps"):
            if field not in net:
                raise InputError(f"{path}: field 'cluster.network.{field}': required for operations "
                                 f"without a fit")


_CACHE_COUNTS = ("sets", "ways", "cl_size")


def _check_positive(data: dict, clock: float, cacheline: int, path) -> None:
    """Numbers kerncraft and the model divide by or scale with must be positive: a negative clock
    would run every analysis into a TypeError, a zero cache size into a division by zero."""
    if clock <= 0:
        raise InputError(f"{path}: field 'clock': expected a positive frequency, got {data['clock']!r}")
    if cacheline <= 0:
        raise InputError(f"{path}: field 'cacheline size': expected a positive size, got {data['cacheline size']!r}")
    for i, level in enumerate(data["memory hierarchy"]):
        where = f"memory hierarchy[{i}] ({level.get('level')})"
        for key in ("cores per group", "threads per group", "groups"):
            if key in level and level[key] is not None and not (isinstance(level[key], int) and level[key] >= 1):
                raise InputError(f"{path}: field '{where}.{key}': expected an integer >= 1, got {level[key]!r}")
        cpg = level.get("cache per group") or {}
        for key in _CACHE_COUNTS:
            if key in cpg and not (isinstance(cpg[key], int) and cpg[key] >= 1):
                raise InputError(f"{path}: field '{where}.cache per group.{key}': expected an integer >= 1, "
                                 f"got {cpg[key]!r}")
        for key in ("cycles per cacheline transfer", "upstream throughput"):
            value = level.get(key)
            if isinstance(value, (int, float)) and not isinstance(value, bool) and value <= 0:
                raise InputError(f"{path}: field '{where}.{key}': expected a positive number, got {value!r}")


def _bandwidths(data: dict, path) -> tuple[tuple[str, tuple[float, ...]], ...]:
    """Per level, the fastest benchmark kernel's bandwidth at 1..n cores (B/s)."""
    out = []
    meas = (data.get("benchmarks") or {}).get("measurements") or {}
    for level, by_tpc in meas.items():
        try:
            row = next(iter(by_tpc.values()))
            cores = [int(c) for c in row["cores"]]
            per_kernel = [[_quantity(v) for v in values] for values in row["results"].values()]
        except (AttributeError, KeyError, TypeError, ValueError, StopIteration) as e:
            raise InputError(f"{path}: field 'benchmarks.measurements.{level}': cannot read ({e})") from None
        best = [max(k[i] for k in per_kernel) for i in range(len(cores))]
        if cores != list(range(1, len(cores) + 1)) or min((v for k in per_kernel for v in k), default=1) <= 0:
            raise InputError(f"{path}: field 'benchmarks.measurements.{level}': expected positive bandwidths "
                             f"for 1, 2, ... cores")
        out.append((str(level), tuple(best)))
    return tuple(out)


def parse_machine(data: dict, path: Path | str, name: str) -> Machine:
    validate(data, SCHEMA, path)
    try:
        clock = _quantity(data["clock"])
        cacheline = int(_quantity(data["cacheline size"]))
        caches, victims_to = [], None
        for level in data["memory hierarchy"]:
            cpg = level.get("cache per group")
            if not cpg:
                continue
            size = int(cpg["sets"]) * int(cpg["ways"]) * int(cpg["cl_size"])
            caches.append(CacheLevel(level["level"], size, int(level.get("cores per group", 1)),
                                     victims_to == level["level"]))
            victims_to = cpg.get("victims_to")
    except (KeyError, ValueError, TypeError) as e:
        raise InputError(f"{path}: field 'memory hierarchy'/'clock': cannot read {e}") from None
    _check_positive(data, clock, cacheline, path)
    incore = data["in-core model"]
    incore_items = list(incore.items()) if isinstance(incore, dict) else [tuple(p) for p in incore]
    osaca = [v for k, v in incore_items if k == "OSACA"]
    if not osaca:
        raise InputError(f"{path}: field 'in-core model': expected an OSACA entry (IACA is not supported)")
    _check_network(data["cluster"]["network"], path)
    compiler, flags = _first_compiler(data)
    kc = {k: v for k, v in data.items() if k != "cluster"}
    digest = hashlib.sha256(json.dumps(kc, sort_keys=True, default=str).encode()).hexdigest()
    cl = data["cluster"]
    return Machine(name, str(path), str(data["model name"]), clock, int(data["cores per socket"]),
                   cacheline, tuple(caches), compiler, flags, str(osaca[0]), int(cl["nodes"]),
                   dict(cl["network"]), dict(cl["barrier"]), digest, _bandwidths(data, path))


def load_machine(name_or_path: str | None) -> Machine:
    path = resolve(name_or_path or DEFAULT_MACHINE, shipped_dir("machines"), "machine", user_machine_dir())
    try:
        text = path.read_text()
    except OSError as e:
        raise InputError(f"{path}: cannot read ({e.strerror})") from None
    return parse_machine(parse_yaml(text, path), path, path.stem)


def machine_names() -> list[str]:
    """Shipped machines and those made on this host (calibrate --node)."""
    return sorted(set(shipped_names(shipped_dir("machines"))) | set(shipped_names(user_machine_dir())))

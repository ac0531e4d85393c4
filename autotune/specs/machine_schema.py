"""The schema of a machine file: kerncraft's machine file plus our `cluster` section.

Every number that kerncraft or the model divides by, scales with or counts with is bounded
here, so that a bad one is refused when the file is loaded, naming its field
(memory hierarchy[1].size per group), instead of surfacing as a TypeError, a division by
zero or a silently negative prediction in the middle of an analysis.  Quantities with units
are kerncraft's text ('2.4 GHz', '32 kB', '12 GB/s', '64 B/cy'; specs/units.py).
"""
from __future__ import annotations

# what a level's upstream throughput may name instead of B/cy: L1's in-core model, memory's benchmarks
THROUGHPUT_NAMES = ("architecture code analyzer", "full socket memory bandwidth")

COUNT = {"type": "integer", "minimum": 1}                       # cores, sockets, groups, ways, ...
COUNT_OR_NULL = {"type": ["integer", "null"], "minimum": 1}
AMOUNT = {"type": "integer", "minimum": 0}                      # stream counts: 0 is meaningful
NON_NEGATIVE = {"type": "number", "minimum": 0}                 # seconds, FLOPs, penalty cycles
POSITIVE = {"type": "number", "exclusiveMinimum": 0}
PARTITION = {"type": "string", "pattern": r"^[^\s,]+$"}         # one Slurm partition's name
PERCENT = {"type": "string", "pattern": r"^\d+(\.\d+)? %$"}    # a spread as calibrate writes it: '3.1 %'


def _quantity(kind: str, minimum: str = "exclusiveMinimum", null: bool = False, **more) -> dict:
    return dict({"type": ["string", "number"] + (["null"] if null else []), "quantity": kind, minimum: 0}, **more)


FREQUENCY = _quantity("frequency")
SIZE = _quantity("size")
BANDWIDTH = _quantity("bandwidth")

_STREAMS = {"type": "object", "properties": {"streams": AMOUNT, "bytes": _quantity("size", "minimum")}}
_KERNEL = {"type": "object", "properties": {
    "FLOPs per iteration": NON_NEGATIVE,
    "read streams": _STREAMS, "read+write streams": _STREAMS, "write streams": _STREAMS}}
_MEASUREMENT = {   # benchmarks.measurements.<level>.<threads per core>
    "type": "object",
    "required": ["cores", "results"],
    "properties": {
        "cores": {"type": "array", "minItems": 1, "items": COUNT},
        "threads": {"type": "array", "items": COUNT},
        "threads per core": COUNT,
        "results": {"type": "object", "additionalProperties": {"type": "array", "items": BANDWIDTH}},
        "stats": {"type": "object", "additionalProperties": {"type": "array", "items": {
            "type": "array", "items": BANDWIDTH}}},
        # autotune's (kerncraft reads `results` and `stats` only): each kernel's spread of its runs,
        # (max - min) / median, at the same core counts, where calibrate --node kept them
        "spread": {"type": "object", "additionalProperties": {"type": "array", "items": PERCENT}},
        **{key: {"type": "array", "items": SIZE} for key in ("size per core", "size per thread", "total size")},
    },
}
_STREAMING_STORES = {   # streaming stores.<level>: GB/s of each <kernel>_nt at 1, 2, ... threads
    "type": "object",
    "required": ["threads"],
    "properties": {"threads": {"type": "array", "minItems": 1, "items": COUNT},
                   "size per thread": {"type": "array", "items": SIZE}},
    "additionalProperties": {"type": "array", "items": BANDWIDTH},
}
_LEVEL = {   # memory hierarchy[i]
    "type": "object",
    "required": ["level"],
    "properties": {
        "level": {"type": "string"},
        "cache per group": {"type": "object", "required": ["sets", "ways", "cl_size"],
                            "properties": {"sets": COUNT, "ways": COUNT, "cl_size": COUNT}},
        "cores per group": COUNT_OR_NULL,
        "threads per group": COUNT_OR_NULL,
        "groups": COUNT_OR_NULL,
        "size per group": _quantity("size", null=True),        # null: main memory
        # [throughput, duplexness]; L1 names the in-core model, main memory the benchmarks
        "upstream throughput": {"type": "array", "minItems": 2, "prefixItems": [_quantity(
            "throughput", names=list(THROUGHPUT_NAMES))]},
        "cycles per cacheline transfer": {"type": ["number", "null"], "exclusiveMinimum": 0},
        "penalty cycles per cacheline load": NON_NEGATIVE,
        "penalty cycles per cacheline store": NON_NEGATIVE,
    },
}
_SEGMENTS = {"type": "array", "minItems": 1, "items": {
    "type": "object",
    "required": ["max_bytes", "latency_s", "per_byte_s"],
    "properties": {"max_bytes": {"type": ["number", "null"], "exclusiveMinimum": 0},
                   "latency_s": NON_NEGATIVE, "per_byte_s": NON_NEGATIVE}}}
_COST_MODEL = {
    "type": "object",
    "required": ["model", "provenance"],
    "properties": {
        "model": {"type": "string", "enum": ["datasheet", "fitted"]},
        "provenance": {"type": "string"},
        "latency_s": NON_NEGATIVE,
        "bandwidth_Bps": POSITIVE,
        "per_doubling_s": NON_NEGATIVE,
        "calibrated": {"type": "string"},
        "fits": {"type": "object", "additionalProperties": {
            "type": "object", "required": ["segments"],
            "properties": {"segments": _SEGMENTS, "points": AMOUNT,
                           "per_p": {"type": "object", "additionalProperties": _SEGMENTS}}}},
        "heldout_error_pct": {"type": "object"},
        "measured_on": {"type": "object"},
        "error_pct": {"type": ["object", "null"]},
    },
}
# cluster.learned: factors on the ECM terms fitted to measured runs (calibrate --from-runs)
_LEARNED = {
    "type": "object",
    "required": ["factors", "runs", "scenarios", "kerncraft", "node_digest"],
    "properties": {
        "factors": {"type": "object", "additionalProperties": POSITIVE},
        "runs": COUNT,
        "scenarios": COUNT,
        "kerncraft": {"type": "string"},
        "node_digest": {"type": "string"},
        "date": {"type": "string"},
        "provenance": {"type": "string"},
        "residual_pct": {"type": "object"},
        "benchmarked": {"type": "object"},
    },
}

# kerncraft reads a machine file from this version of its format on (its machinemodel's
# MIN_SUPPORTED_VERSION; a test compares them) up to the installed version
KERNCRAFT_FILE_MIN = "0.8.3.dev0"
ANY = {}     # a kerncraft key that kerncraft itself reads and checks

SCHEMA = {
    "type": "object",
    "required": ["kerncraft version", "model name", "clock", "cores per socket", "cacheline size",
                 "memory hierarchy", "compiler", "in-core model", "benchmarks", "cluster"],
    "properties": {
        # the kerncraft version the file was written for (checked against the installed one:
        # specs.machine)
        "kerncraft version": {"type": "string", "pattern": r"^\d+\.\d+"},
        "model type": ANY, "micro-architecture": ANY, "overlapping model": ANY, "non-overlapping model": ANY,
        "write-allocate": ANY, "transparent hugepage": ANY, "compiler": ANY, "in-core model": ANY,
        "date": ANY, "hostname": ANY, "machine state": ANY,
        "provenance": {"type": "object"},    # calibrate --node: where each figure comes from
        "port model file": {"type": "object", "required": ["path", "sha256"]},   # --port-model: the OSACA file
        "model name": {"type": ["string", "null"]},
        "isa": {"type": "string"},
        "clock": FREQUENCY,
        "sockets": COUNT,
        "cores per socket": COUNT,
        "threads per core": COUNT,
        "NUMA domains per socket": COUNT,
        "cores per NUMA domain": COUNT,
        "cacheline size": SIZE,
        "FLOPs per cycle": {"type": "object", "additionalProperties": {   # SP, DP -> total, FMA, ADD, MUL
            "type": "object", "properties": {"total": POSITIVE}, "additionalProperties": NON_NEGATIVE}},
        "memory hierarchy": {"type": "array", "minItems": 2, "items": _LEVEL},
        "benchmarks": {"type": "object", "properties": {
            "kernels": {"type": "object", "additionalProperties": _KERNEL},
            "measurements": {"type": "object", "additionalProperties": {
                "type": "object", "additionalProperties": _MEASUREMENT}}}},
        # autotune's: the benchmark kernels with non-temporal stores, apart from `benchmarks`, where
        # kerncraft would match them to ordinary parts (model.streaming)
        "streaming stores": {"type": "object", "properties": {"note": {"type": "string"}},
                             "additionalProperties": _STREAMING_STORES},
        # autotune's: the reference stencils' rows and GB/s per level (specs.stencils), apart from
        # `benchmarks` for the same reason
        "reference stencils": {"type": "object", "properties": {
            "note": {"type": "string"}, "rows": {"type": "object", "additionalProperties": COUNT}},
            "additionalProperties": _STREAMING_STORES},
        # autotune's: each kernel part's in-core time measured on this CPU (model.incore)
        "in-core measured": {
            "type": "object",
            "required": ["cpu", "when", "tolerance"],
            "additionalProperties": False,
            "properties": {
                "cpu": {"type": "string", "pattern": r"\S"},      # the CPU the parts are measured on
                "when": {"enum": ["always", "disagree"]},
                "tolerance": {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
                "clock": FREQUENCY,                                 # one busy core's, measured
                "note": {"type": "string"},
            },
        },
        "cluster": {
            "type": "object",
            "required": ["name", "nodes", "cores_per_node", "network", "barrier"],
            "additionalProperties": False,
            "properties": {
                "name": {"type": "string"},
                "nodes": COUNT,
                "cores_per_node": COUNT,
                "threads_per_core": COUNT,
                # the share of each core's time the node's jobs get (a CPU quota, e.g. a cgroup's
                # cfs_quota_us / cfs_period_us per core); the node model's seconds are divided by it
                "cpu_quota": {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
                "network": _COST_MODEL,
                # the network between partitions' nodes, measured across them (calibrate --kinds
                # a,b): "a+b" (the partitions' names sorted, joined by +) -> its cost model
                "networks": {"type": "object", "additionalProperties": _COST_MODEL},
                "barrier": dict(_COST_MODEL, required=["model", "provenance", "per_doubling_s"]),
                "learned": _LEARNED,
                # Slurm partition -> the machine of its nodes (a name, or a file beside this one), for plans
                "partitions": {"type": "object", "additionalProperties": {"type": "string", "pattern": r"\S"}},
            },
        },
    },
}

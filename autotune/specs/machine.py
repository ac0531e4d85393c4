"""Machines: a kerncraft machine file plus our `cluster` section (nodes, network, barrier)."""
from __future__ import annotations

import hashlib
import json
import re
import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path

from autotune.errors import InputError, InputWarning
from autotune.specs.learned import Learned, valid_parameter
from autotune.specs.runstate import RunState
from autotune.specs.schemes import OPERATIONS
from autotune.specs.shipped import shipped_dir, user_machine_dir
from autotune.specs.isa import host_isa
from autotune.specs.isa import isa_part
from autotune.specs.loading import beside, parse_yaml, resolve, shipped_names, validate
from autotune.specs.machine_schema import KERNCRAFT_FILE_MIN, PARTITION, SCHEMA, THROUGHPUT_NAMES
from autotune.specs.schema import first_error
from autotune.specs.units import quantity

DEFAULT_MACHINE = "haswell-ep-e5-2630v3"
# the name of a benchmark kernel's form with non-temporal stores ("copy_nt"), in the file's
# `streaming stores` and in the learned factors of the memory transfers priced by it
NT_SUFFIX = "_nt"

@dataclass(frozen=True)
class CacheLevel:
    name: str
    bytes_per_group: int
    cores_per_group: int
    victim: bool = False    # holds what the level above evicts (victims_to): the two exclude each other
    upstream_bytes_per_cycle: float | None = None   # to the level above (None: the file gives none)
    full_duplex: bool = False                       # loads and stores across that interface overlap


@dataclass(frozen=True)
class StreamingStores:
    """A benchmark kernel's form with non-temporal stores in one level (the file's `streaming
    stores`), beside its write-allocated form (`benchmarks`), both as bytes per second moved at
    1, 2, ... threads: the non-temporal form's bytes named are the bytes it moves; the
    write-allocated form's are corrected by its write-allocate read, as kerncraft corrects them."""
    level: str
    kernel: str                          # the write-allocated kernel ("copy"); the NT form is kernel + NT_SUFFIX
    nt_bps: tuple[float, ...]
    allocated_bps: tuple[float, ...]     # () where `benchmarks` has no measurement of the kernel there


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
    network: dict = field(hash=False)     # (a dict: equal machines compare it, the hash leaves it out)
    barrier: dict = field(hash=False)
    kerncraft_digest: str                 # hash of the kerncraft part (everything but `cluster`)
    bandwidths: tuple[tuple[str, tuple[float, ...]], ...] = ()   # level -> B/s at 1, 2, ... cores
                                                                 # (fastest measured kernel)
    isa: str = "x86"                      # x86 | aarch64 (the file's `isa`)
    compilers: tuple[str, ...] = ()       # every compiler the file names (kerncraft takes the first found)
    numa_cores: int = 0                   # cores per NUMA domain (kerncraft's saturation rule)
    learned: Learned | None = None        # factors fitted to measured runs (None: the ECM model alone)
    partitions: dict = field(default_factory=dict, hash=False)   # Slurm partition -> machine (name or path)
    incore_measured: dict | None = field(default=None, hash=False)   # the file's `in-core measured` (model.incore)
    streaming_stores: tuple[StreamingStores, ...] = ()   # the file's `streaming stores` (model.streaming)
    state: RunState | None = None         # priced at a tune run's measured state (model.state), not the file's
    # level -> per core count (1, 2, ...) the largest spread of the kernels' runs, (max - min) /
    # median, a fraction; only levels whose file keeps the spreads (calibrate --node)
    bandwidth_spreads: tuple[tuple[str, tuple[float, ...]], ...] = ()
    dp_flops_per_cycle: float = 0.0       # the core's peak (FLOPs per cycle.DP.total; 0: not given)
    cpu_quota: float = 1.0                # the share of each core's time the node's jobs get (cluster.cpu_quota)
    # the networks measured across partitions (cluster.networks): "a+b" -> a network as `network`
    networks: dict = field(default_factory=dict, hash=False)
    # the file's `port model file` ({path, sha256} of an OSACA file given by --port-model; None:
    # the installed OSACA's model), checked against the file where it is used (tools.cpuprobe)
    port_model_file: dict | None = field(default=None, hash=False)
    kerncraft_file: str = field(default="", compare=False)   # the kerncraft version the file was written for (its `kerncraft version`)
    sha256: str = field(default="", compare=False)           # of the file's text (a JSON document names the file it rests on)

    @property
    def model_label(self) -> str:
        """What a prediction on this machine rests on."""
        return self.learned.label() if self.learned else "ecm"

    @property
    def isa_flags(self) -> tuple[str, ...]:
        """The flags of compiler_flags that select the instruction set (-march, -m<ext>, ...):
        the analysed kernels are compiled for it, and tune builds the solvers for it too."""
        return isa_part(self.compiler_flags)

    def core_share(self, level: str) -> int | None:
        """Bytes of cache level `level` ("l1", "L2", ...) one core has to itself (its group's
        bytes over the group's cores); None where the file has no such level."""
        c = next((c for c in self.caches if c.name.lower() == level.lower()), None)
        return None if c is None else c.bytes_per_group // c.cores_per_group

    def bandwidth(self, level: str, cores: int) -> float | None:
        """Bytes per second of the fastest streaming kernel in `level` on `cores` cores (the largest
        measured count below it, where that count was not measured): the largest of the kernels'
        figures (calibrate --node writes the upper quartile of each kernel's runs); a single fast
        spell cannot set it.  A file kerncraft's own benchmark wrote has the best of its runs instead."""
        for name, row in self.bandwidths:
            if name == level and row:
                return row[min(cores, len(row)) - 1]
        return None

    def bandwidth_spread(self, level: str, cores: int) -> float | None:
        """The largest spread of the kernels' runs in `level` on `cores` cores, (max - min) /
        median (None: the file keeps none)."""
        for name, row in self.bandwidth_spreads:
            if name == level and row:
                return row[min(cores, len(row)) - 1]
        return None

    def network_note(self) -> str:
        return f"{self.network['model']}: {self.network['provenance']}"


def _compilers(data) -> list[tuple[str, str]]:
    comp = data["compiler"]
    return list(comp.items()) if isinstance(comp, dict) else [tuple(p) for p in comp]


def _first_compiler(data) -> tuple[str, str]:
    items = _compilers(data)
    for name, flags in items:
        if name == "gcc":
            return name, str(flags)
    return items[0][0], str(items[0][1])


def _check_network(net: dict, path, where: str = "network") -> None:
    """Fits of known operations (their shape is the schema's), or the data sheet for the others."""
    fits = net.get("fits") or {}
    for op, fit in fits.items():
        if op not in OPERATIONS:
            raise InputError(f"{path}: field 'cluster.{where}.fits.{op}': unknown operation "
                             f"(known: {', '.join(OPERATIONS)})")
        bad = [q for q in (fit.get("per_p") or {}) if not str(q).isdigit()]
        if bad:
            raise InputError(f"{path}: field 'cluster.{where}.fits.{op}.per_p.{bad[0]}': expected a process count")
    if set(fits) != set(OPERATIONS):
        for field in ("latency_s", "bandwidth_Bps"):
            if field not in net:
                raise InputError(f"{path}: field 'cluster.{where}.{field}': required for operations "
                                 f"without a fit")


def _bandwidths(data: dict, path) -> tuple[tuple[str, tuple[float, ...]], ...]:
    """Per level, the fastest benchmark kernel's bandwidth at 1..n cores (B/s): the largest of the
    kernels' `results`, which calibrate --node writes as the upper quartile of each kernel's runs
    (a single fast spell cannot set it)."""
    out = []
    meas = (data.get("benchmarks") or {}).get("measurements") or {}
    for level, by_tpc in meas.items():
        try:
            row = next(iter(by_tpc.values()))
            cores = [int(c) for c in row["cores"]]
            per_kernel = [[quantity(v, "bandwidth") for v in values] for values in row["results"].values()]
        except (AttributeError, KeyError, TypeError, ValueError, StopIteration) as e:
            raise InputError(f"{path}: field 'benchmarks.measurements.{level}': cannot read ({e})") from None
        if cores != list(range(1, len(cores) + 1)) or any(len(k) != len(cores) for k in per_kernel):
            raise InputError(f"{path}: field 'benchmarks.measurements.{level}': expected bandwidths "
                             f"for 1, 2, ... cores")
        best = [max(k[i] for k in per_kernel) for i in range(len(cores))]
        out.append((str(level), tuple(best)))
    return tuple(out)


def _bandwidth_spreads(data: dict, path) -> tuple[tuple[str, tuple[float, ...]], ...]:
    """Per level whose measurements keep a `spread` beside their `results`, the largest spread of
    the results' kernels at 1..n cores (a fraction; '3.1 %' in the file)."""
    out = []
    meas = (data.get("benchmarks") or {}).get("measurements") or {}
    for level, by_tpc in meas.items():
        tpc, row = next(iter(by_tpc.items()))
        spread = row.get("spread") or {}
        kernels = [k for k in row["results"] if k in spread]
        if not kernels:
            continue
        for k in kernels:
            if len(spread[k]) != len(row["cores"]):
                raise InputError(f"{path}: field 'benchmarks.measurements.{level}.{tpc}.spread.{k}': expected "
                                 f"a spread for each of the {len(row['cores'])} core counts")
        per_kernel = [[float(str(v).rstrip(" %")) / 100 for v in spread[k]] for k in kernels]
        out.append((str(level), tuple(max(k[i] for k in per_kernel) for i in range(len(row["cores"])))))
    return tuple(out)


def _write_allocate_factor(info: dict | None) -> float:
    """kerncraft's correction of a write-allocated kernel's bandwidth (machinemodel.get_bandwidth):
    bytes moved, with a write-allocate read per written stream, over the bytes it names."""
    if not info:
        return 1.0
    r, w, rw = (quantity(info[k]["bytes"], "size") for k in ("read streams", "write streams", "read+write streams"))
    return (r + 2 * w - rw) / (r + w) if r + w else 1.0


def _streaming_stores(data: dict, path) -> tuple[StreamingStores, ...]:
    """The `streaming stores` section, each kernel beside its write-allocated form in `benchmarks`."""
    section = data.get("streaming stores") or {}
    bench = data.get("benchmarks") or {}
    measured, infos = bench.get("measurements") or {}, bench.get("kernels") or {}
    levels = [str(lv["level"]) for lv in data["memory hierarchy"]]
    first = levels[0]
    out = []
    for level, row in section.items():
        if level == "note":
            continue
        where = f"streaming stores.{level}"
        if str(level) not in levels:
            raise InputError(f"{path}: field '{where}': not a level of the memory hierarchy "
                             f"(expected one of {', '.join(levels)})")
        threads = [int(t) for t in row["threads"]]
        if threads != list(range(1, len(threads) + 1)):
            raise InputError(f"{path}: field '{where}.threads': expected 1, 2, ... threads")
        try:
            allocated = next(iter((measured.get(level) or {}).values()))["results"]
        except (StopIteration, KeyError, TypeError):
            allocated = {}
        for name, values in row.items():
            if name in ("threads", "size per thread"):
                continue
            if not str(name).endswith(NT_SUFFIX):
                raise InputError(f"{path}: field '{where}.{name}': expected a kernel with non-temporal "
                                 f"stores, named <kernel>{NT_SUFFIX}")
            if len(values) != len(threads):
                raise InputError(f"{path}: field '{where}.{name}': expected a bandwidth for each of the "
                                 f"{len(threads)} thread counts")
            kernel = str(name)[:-len(NT_SUFFIX)]
            try:
                factor = 1.0 if level == first else _write_allocate_factor(infos.get(kernel))
            except (KeyError, TypeError, ValueError) as e:
                raise InputError(f"{path}: field 'benchmarks.kernels.{kernel}': cannot read ({e})") from None
            out.append(StreamingStores(str(level), kernel, tuple(quantity(v, "bandwidth") for v in values),
                                       tuple(quantity(v, "bandwidth") * factor for v in allocated.get(kernel, ()))))
    return tuple(out)


KERNCRAFT_FILE_HINT = ("a kerncraft machine file? make it a cluster machine with: autotune calibrate "
                       "--from-kerncraft {path} --name NAME --nodes N")


def parse_machine(data: dict, path: Path | str, name: str, model: str | None = None) -> Machine:
    """The machine of a file's data; model "ecm": without its learned factors."""
    if isinstance(data, dict) and "cluster" not in data and "memory hierarchy" in data:
        raise InputError(f"{path}: field 'cluster': required field is missing ("
                         + KERNCRAFT_FILE_HINT.format(path=path) + ")")
    validate(data, SCHEMA, path)     # every bound on a number, with its field (machine_schema.py)
    _check_top_level(data, path)
    try:
        clock = quantity(data["clock"], "frequency")
        cacheline = int(quantity(data["cacheline size"], "size"))
        caches, victims_to = [], None
        for level in data["memory hierarchy"]:
            cpg = level.get("cache per group")
            if not cpg:
                continue
            size = int(cpg["sets"]) * int(cpg["ways"]) * int(cpg["cl_size"])
            throughput, duplex = (level.get("upstream throughput") or [None, None])[:2]
            upstream = None if throughput is None or throughput in THROUGHPUT_NAMES \
                else quantity(throughput, "throughput")
            caches.append(CacheLevel(level["level"], size, int(level.get("cores per group", 1)),
                                     victims_to == level["level"], upstream, duplex == "full-duplex"))
            victims_to = cpg.get("victims_to")
    except (KeyError, ValueError, TypeError) as e:
        raise InputError(f"{path}: field 'memory hierarchy': cannot read {e}") from None
    incore = data["in-core model"]
    incore_items = list(incore.items()) if isinstance(incore, dict) else [tuple(p) for p in incore]
    osaca = [v for k, v in incore_items if k == "OSACA"]
    if not osaca:
        raise InputError(f"{path}: field 'in-core model': expected an OSACA entry (IACA is not supported)")
    _check_network(data["cluster"]["network"], path)
    for key, net in (data["cluster"].get("networks") or {}).items():
        _check_network(net, path, f"networks.{key}")
    compiler, flags = _first_compiler(data)
    kc = {k: v for k, v in data.items() if k != "cluster"}
    digest = hashlib.sha256(json.dumps(kc, sort_keys=True, default=str).encode()).hexdigest()
    cl = data["cluster"]
    cores = int(data["cores per socket"])
    return Machine(name, str(path), str(data["model name"] or name), clock, cores,
                   cacheline, tuple(caches), compiler, flags, str(osaca[0]), int(cl["nodes"]),
                   dict(cl["network"]), dict(cl["barrier"]), digest, _bandwidths(data, path),
                   host_isa(str(data.get("isa") or "x86")), tuple(str(c) for c, _ in _compilers(data)),
                   int(data.get("cores per NUMA domain") or cores),
                   _learned(cl.get("learned"), digest, path, name) if model != "ecm" else None,
                   _partitions(cl.get("partitions") or {}, path),
                   dict(data["in-core measured"]) if data.get("in-core measured") else None,
                   streaming_stores=_streaming_stores(data, path),
                   bandwidth_spreads=_bandwidth_spreads(data, path), dp_flops_per_cycle=_dp_flops(data),
                   cpu_quota=float(cl.get("cpu_quota", 1.0)),
                   networks={str(k): dict(v) for k, v in (cl.get("networks") or {}).items()},
                   port_model_file=data.get("port model file"), kerncraft_file=str(data["kerncraft version"]))


def _release(version: str) -> tuple:
    """A version as kerncraft orders machine files' versions (distutils' LooseVersion: numbers
    and words in turn, a longer version after its prefix, so 0.8.18.dev0 after 0.8.18), each
    part a (number, word) pair so that a number and a word compare too."""
    return tuple((int(x), "") if x.isdigit() else (-1, x) for x in re.findall(r"\d+|[A-Za-z]+", version))


def _check_top_level(data: dict, path) -> None:
    """The file's top-level keys: a field of `cluster` written beside it is refused (nothing
    reads it there: a `learned:` at the top level would predict without the factors); any other
    key the schema does not know is a warning naming it (kerncraft files carry keys of their
    own).  The file's `kerncraft version` must be one kerncraft still reads (from
    KERNCRAFT_FILE_MIN on; kerncraft_file_error: up to the installed one)."""
    known, cluster = SCHEMA["properties"], SCHEMA["properties"]["cluster"]["properties"]
    for key in data:
        if key in known:
            continue
        if key in cluster:
            raise InputError(f"{path}: field '{key}': belongs under 'cluster' (cluster.{key}); nothing reads it "
                             f"at the top level")
        warnings.warn(InputWarning(f"{path}: field '{key}': unknown, nothing reads it"), stacklevel=2)
    wrote = str(data["kerncraft version"])
    if _release(wrote) < _release(KERNCRAFT_FILE_MIN):
        raise InputError(f"{path}: field 'kerncraft version': written for kerncraft {wrote}; kerncraft reads "
                         f"files from version {KERNCRAFT_FILE_MIN} on")


def kerncraft_file_error(machine: Machine, installed: str) -> str | None:
    """Why the installed kerncraft cannot read the machine's file (one newer than itself), or
    None: the analyses' edge asks before any starts."""
    wrote = machine.kerncraft_file
    if wrote and installed and installed != "missing" and _release(wrote) > _release(installed):
        return (f"{machine.path}: field 'kerncraft version': written for kerncraft {wrote}, newer than the "
                f"installed kerncraft {installed}, which reads files of versions {KERNCRAFT_FILE_MIN} to {installed}")
    return None


def _dp_flops(data) -> float:
    """The core's double-precision FLOPs per cycle at its peak (the file's `FLOPs per cycle.DP.total`;
    0 where the file gives none)."""
    try:
        return float(data["FLOPs per cycle"]["DP"]["total"])
    except (KeyError, TypeError, ValueError):
        return 0.0


def _partitions(section: dict, path) -> dict[str, str]:
    """cluster.partitions: partition -> machine; a relative path is taken beside this file."""
    out = {}
    for name, machine in section.items():
        err = first_error(str(name), PARTITION)
        if err:
            raise InputError(f"{path}: field 'cluster.partitions.{name}': {err[1]}")
        out[str(name)] = beside(machine, Path(path).parent)
    return out



def _learned(section: dict | None, digest: str, path, name: str) -> Learned | None:
    """cluster.learned, refused where the node part it was fitted for has changed since."""
    if not section:
        return None
    bad = [p for p in section["factors"] if not valid_parameter(p)]
    if bad:
        raise InputError(f"{path}: field 'cluster.learned.factors.{bad[0]}': unknown parameter (expected "
                         f"<class>/<term> such as RHS/core, LC/L2-L3 or LC/L3-MEM:copy)")
    if section["node_digest"] != digest:
        raise InputError(f"{path}: field 'cluster.learned': fitted for another node part (the file's kerncraft "
                         f"part changed since): fit again with `autotune calibrate --machine {name} --from-runs`, "
                         f"or predict without it (--model ecm)")
    return Learned({k: float(v) for k, v in section["factors"].items()}, int(section["runs"]),
                   int(section["scenarios"]), str(section["kerncraft"]), str(section["node_digest"]),
                   str(section.get("date") or ""))


def load_machine(name_or_path: str | None, model: str | None = None) -> Machine:
    path = resolve(name_or_path or DEFAULT_MACHINE, shipped_dir("machines"), "machine", user_machine_dir())
    try:
        text = path.read_text()
    except OSError as e:
        raise InputError(f"{path}: cannot read ({e.strerror})") from None
    machine = parse_machine(parse_yaml(text, path), path, path.stem, model)
    return replace(machine, sha256=hashlib.sha256(text.encode()).hexdigest())


def machine_names() -> list[str]:
    """Shipped machines and those made on this host (calibrate --node)."""
    return sorted(set(shipped_names(shipped_dir("machines"))) | set(shipped_names(user_machine_dir())))

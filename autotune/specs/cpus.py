"""Which microarchitecture a CPU is: the CPU table (autotune/data/cpus/table.yaml) and the
identification of a CPU from what /proc/cpuinfo says of it.

Pure: parse_cpuinfo() takes the text, identify() the parsed CPU, the table and the OSACA
models the caller found installed.  A CPU whose microarchitecture the installed OSACA does not
model, or that is not in the table, borrows the port model of the closest record OSACA does
model (`closest`: the rule) and says so (Identified.borrowed_from); the compiler flags and FLOPs
stay its own record's where it has one.  Only a CPU of a vendor no record the installed OSACA
models belongs to is an InputError naming what was read and how to choose explicitly (--uarch).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import lru_cache

from autotune.errors import InputError


@dataclass(frozen=True)
class Hierarchy:
    """The transfer structure of a memory hierarchy above L1 (rates from kerncraft's examples)."""
    key: str
    source: str
    transfers_overlap: bool
    levels: dict            # "L2" -> (bytes per cycle, "half-duplex" | "full-duplex")
    victim: tuple[str, ...]  # levels that take what the level above evicts
    memory: str             # duplexness of the memory interface


@dataclass(frozen=True)
class Microarch:
    key: str                # OSACA's name in lower case where OSACA has one ("zen3")
    name: str
    isa: str                # x86 | aarch64
    osaca: str | None       # OSACA's architecture name ("ZEN3"); None: OSACA has no model of it
    llvm_mca: str
    march: dict             # compiler -> (-march/-mcpu values, best first)
    simd_bits: int
    dp_flops: dict          # total, FMA, ADD, MUL per cycle
    non_overlapping: tuple[str, ...]
    hierarchy: Hierarchy
    source: str
    released: str = ""      # "2022-09": year and month of the first products (orders generations)

    def label(self) -> str:
        return f"{self.name} ({self.key})"

    def needs(self) -> frozenset[str]:
        """The CPU flags (/proc/cpuinfo) a core needs to run the vectors this record's port model
        describes: AVX-512 for 512-bit x86 records, AVX2 and FMA (or AVX) for 256-bit ones, SVE for
        ARM records wider than NEON's 128 bits."""
        if self.isa == "aarch64":
            return frozenset({"sve"} if self.simd_bits > 128 else {"asimd"})
        if self.simd_bits >= 512:
            return frozenset({"avx512f"})
        if self.simd_bits >= 256:
            return frozenset({"avx2", "fma"} if self.dp_flops.get("FMA") else {"avx"})
        return frozenset({"sse2"})


@dataclass(frozen=True)
class PortModel:
    """An OSACA architecture file given by path (--port-model): used for the in-core analyses
    instead of the installed OSACA's model of the same name."""
    path: str
    sha256: str
    arch: str               # its arch_code ("ZEN5"): the name kerncraft hands to OSACA
    isa: str
    ports: tuple[str, ...]


@dataclass(frozen=True)
class CpuId:
    """What the OS says of a CPU (the first processor of /proc/cpuinfo)."""
    isa: str
    vendor: str             # vendor_id on x86 ("AuthenticAMD"); "0x41" (implementer) on ARM
    family: int | None
    model: int | None       # the part number on ARM
    stepping: int | None
    model_name: str
    flags: frozenset[str] = field(default_factory=frozenset)

    def describe(self) -> str:
        name = f" ({self.model_name})" if self.model_name else ""
        if self.model is None:
            return f"an unidentified {self.isa} CPU{name}"
        if self.isa == "aarch64":
            return f"ARM implementer {self.vendor} part {_hex(self.model)}{name}"
        return (f"{self.vendor} family {self.family} model {self.model} "
                f"stepping {self.stepping}{name}")


@dataclass(frozen=True)
class Identified:
    """The record a machine file is made from.  Where the port model is borrowed, `record` is the
    CPU's own record (its -march values, FLOPs and cache design) with the OSACA model and
    non-overlapping ports of the record it borrows from; a CPU the table does not know has the
    borrowed record as it is."""
    cpu: CpuId
    record: Microarch
    assumed: bool = False   # chosen with --uarch, not read from the CPU
    borrowed_from: str | None = None   # one line: whose port model stands in for the CPU's, and why

    @property
    def uarch(self) -> str:
        """The record's name ("zen3"; OSACA's name in lower case where OSACA models it)."""
        return self.record.key

    @property
    def key(self) -> str:
        return self.record.key

    @property
    def name(self) -> str:
        return self.record.name

    def __str__(self) -> str:
        how = ", assumed (--uarch)" if self.assumed else ""
        ports = f" (borrowed: {self.borrowed_from})" if self.borrowed_from else ""
        return (f"{self.record.key}: {self.record.name}{how}; {self.cpu.describe()}; OSACA {self.record.osaca}"
                f"{ports}, LLVM-MCA -mcpu={self.record.llvm_mca}, {self.record.simd_bits}-bit SIMD, "
                f"{self.record.dp_flops['total']} DP FLOP/cy")

    def to_dict(self) -> dict:
        u = self.record
        return {"uarch": u.key, "name": u.name, "osaca": u.osaca, "llvm_mca": u.llvm_mca, "isa": u.isa,
                "simd_bits": u.simd_bits, "dp_flops_per_cycle": dict(u.dp_flops),
                "non_overlapping_ports": list(u.non_overlapping), "hierarchy": u.hierarchy.key,
                "source": u.source, "assumed": self.assumed, "borrowed_from": self.borrowed_from,
                "cpu": self.cpu.describe(),
                "vendor": self.cpu.vendor, "family": self.cpu.family, "model": self.cpu.model,
                "stepping": self.cpu.stepping, "model_name": self.cpu.model_name}


@dataclass(frozen=True)
class CpuRow:
    vendor: str
    family: int | None
    models: tuple[tuple[int, int], ...]
    steppings: tuple[tuple[int, int], ...] | None
    uarch: str

    def matches(self, cpu: CpuId) -> bool:
        if cpu.vendor.lower() != self.vendor.lower() or cpu.family != self.family or cpu.model is None:
            return False
        if not any(a <= cpu.model <= b for a, b in self.models):
            return False
        return self.steppings is None or (cpu.stepping is not None
                                          and any(a <= cpu.stepping <= b for a, b in self.steppings))


@dataclass(frozen=True)
class CpuTable:
    uarchs: dict            # key -> Microarch
    rows: tuple[CpuRow, ...]

    def vendors(self, key: str) -> frozenset[str]:
        """The vendors (ARM: implementers) of the CPUs the rows name with this record, lower case."""
        return frozenset(r.vendor.lower() for r in self.rows if r.uarch == key)

    def count_models(self) -> int:
        """(vendor, family, model) triples (ARM: (implementer, part)) the rows cover."""
        return len({(r.vendor, r.family, m) for r in self.rows for a, b in r.models for m in range(a, b + 1)})


def _hex(v) -> str:
    return f"{v:#05x}" if isinstance(v, int) else str(v)


def _int(text) -> int:
    return text if isinstance(text, int) else int(str(text).strip(), 0)


def _ranges(items) -> tuple[tuple[int, int], ...]:
    out = []
    for item in items:
        a, _, b = str(item).partition("-")
        out.append((_int(a), _int(b or a)))
    return tuple(out)


def parse_table(data: dict) -> CpuTable:
    hier = {k: Hierarchy(k, v["source"], bool(v["transfers_overlap"]),
                         {lvl: (float(t[0]), str(t[1])) for lvl, t in v["levels"].items()},
                         tuple(v.get("victim") or ()), str(v["memory"]))
            for k, v in data["hierarchies"].items()}
    uarchs = {}
    for k, v in data["uarchs"].items():
        uarchs[k] = Microarch(k, v["name"], v["isa"], v.get("osaca"), v["llvm_mca"],
                              {c: tuple(m) for c, m in v["march"].items()}, int(v["simd_bits"]),
                              dict(v["dp_flops"]), tuple(str(p) for p in v["non_overlapping"]),
                              hier[v["hierarchy"]], v["source"], str(v.get("released") or ""))
    rows = []
    for r in data["cpus"]:
        if r["uarch"] not in uarchs:
            raise ValueError(f"CPU table: row {r} names unknown uarch {r['uarch']!r}")
        if "implementer" in r:
            rows.append(CpuRow(_hex(_int(r["implementer"])), None, _ranges(r["parts"]), None, r["uarch"]))
        else:
            rows.append(CpuRow(r["vendor"], _int(r["family"]), _ranges(r["models"]),
                               _ranges(r["steppings"]) if r.get("steppings") else None, r["uarch"]))
    return CpuTable(uarchs, tuple(rows))


@lru_cache(maxsize=None)
def load_table() -> CpuTable:
    import yaml

    from autotune.specs.shipped import shipped_dir
    return parse_table(yaml.safe_load((shipped_dir("cpus") / "table.yaml").read_text()))


def _fields(cpuinfo: str) -> dict[str, str]:
    """The first processor's fields (a later processor's repeat of a key is ignored)."""
    out: dict[str, str] = {}
    for line in cpuinfo.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            out.setdefault(key.strip().lower(), value.strip())
    return out


def parse_cpuinfo(cpuinfo: str) -> CpuId:
    f = _fields(cpuinfo)
    if "cpu implementer" in f:
        try:
            implementer, part = _hex(_int(f["cpu implementer"])), _int(f.get("cpu part", "-1"))
        except ValueError:
            raise InputError(f"cpuinfo: cannot read 'CPU implementer'/'CPU part' "
                             f"({f.get('cpu implementer')!r}, {f.get('cpu part')!r})") from None
        flags = f.get("features", "").split()
        return CpuId("aarch64", implementer, None, part, None, f.get("model name", ""), frozenset(flags))
    if "vendor_id" not in f:
        raise InputError("cpuinfo: neither 'vendor_id' (x86) nor 'CPU implementer' (ARM) found: "
                         "cannot tell the CPU; choose it with --uarch NAME")
    try:
        fam, model, step = (int(f[k]) if f.get(k, "").isdigit() else None
                            for k in ("cpu family", "model", "stepping"))
    except ValueError:
        fam = model = step = None
    return CpuId("x86", f["vendor_id"], fam, model, step, f.get("model name", ""),
                 frozenset(f.get("flags", "").split()))


def identify(cpu: CpuId, table: CpuTable, osaca_models: frozenset[str] | None = None,
             osaca_version: str = "", uarch: str | None = None,
             port_model: PortModel | None = None) -> Identified:
    """The CPU's microarchitecture record, its port model borrowed where the installed OSACA does
    not model it (`closest`).  osaca_models: lower-case names of the models the installed OSACA
    ships (None: not checked).  uarch: an explicit choice (recorded as assumed).  port_model: an
    OSACA architecture file given by path; the record of its arch_code is the one used (borrowed
    from where it is not the CPU's own)."""
    given = port_model.arch.lower() if port_model else None

    def modelled(u: Microarch) -> bool:
        return u.osaca is not None and (osaca_models is None or u.osaca.lower() in osaca_models
                                        or u.osaca.lower() == given)

    known = ", ".join(k for k, u in table.uarchs.items() if modelled(u))
    ports = _port_model_record(port_model, table) if port_model else None
    if uarch is not None:
        rec = table.uarchs.get(uarch.lower())
        if rec is None:
            raise InputError(f"{uarch!r}: unknown microarchitecture (known: {known})", field="uarch")
        if ports is not None and ports.key != rec.key:
            raise InputError(f"{port_model.path}: models {port_model.arch}, and --uarch {rec.key} is OSACA's "
                             f"{rec.osaca or '(none)'}", field="port_model")
        _check_osaca(rec, modelled, osaca_version, known)
        return Identified(cpu, rec, assumed=True)
    row = next((r for r in table.rows if r.matches(cpu)), None)
    own = table.uarchs[row.uarch] if row else None
    if ports is not None:
        if port_model.isa != cpu.isa:
            raise InputError(f"{port_model.path}: a port model for {port_model.isa}, and this CPU is {cpu.isa}",
                             field="port_model")
        if own is not None and own.key == ports.key:
            return Identified(cpu, own)
        return _borrowed(cpu, own, ports, "", f"ports from the given port model file ({ports.label()})")
    if own is not None and modelled(own):
        return Identified(cpu, own)
    version = f" {osaca_version}" if osaca_version else ""
    lack = ("OSACA has no model of it" if own is None or own.osaca is None
            else f"the installed OSACA{version} has no {own.osaca} model")
    found = closest(cpu, own, table, modelled)
    if found is None:
        hint = (f"give its OSACA model with --port-model FILE, or choose one explicitly with --uarch NAME "
                f"(recorded as assumed; one of {known})")
        if own is None:
            raise InputError(f"{cpu.describe()}: not in autotune's CPU table, and the installed OSACA{version} "
                             f"models no record of its vendor ({cpu.vendor}) and ISA whose vectors its flags "
                             f"run; {hint}")
        raise InputError(f"{cpu.describe()} is {own.label()}: {lack}, and it models no record of the same "
                         f"vendor whose vectors the CPU's flags run; {hint}")
    if own is None:
        why = (f"ports from {found.label()}, the newest {cpu.vendor} record the installed OSACA{version} "
               f"models whose vectors the CPU's flags run ({' '.join(sorted(found.needs()))})")
    else:
        why = f"ports from {found.label()}, the closest it models"
    return _borrowed(cpu, own, found, lack, why)


def _borrowed(cpu: CpuId, own: Microarch | None, ports: Microarch, lack: str, why: str) -> Identified:
    """The CPU's own record (or, unknown to the table, the borrowed one) with the OSACA model and
    non-overlapping ports of `ports`."""
    if own is None:
        return Identified(cpu, ports, borrowed_from=f"{cpu.describe()}: not in autotune's CPU table; {why}")
    record = replace(own, osaca=ports.osaca, non_overlapping=ports.non_overlapping,
                     source=f"{own.source}; ports: {ports.source}")
    return Identified(cpu, record, borrowed_from=f"{own.label()}: " + "; ".join(x for x in (lack, why) if x))


def _month(released: str) -> int:
    year, _, month = released.partition("-")
    return int(year) * 12 + int(month) if year.isdigit() and month.isdigit() else 0


def closest(cpu: CpuId, own: Microarch | None, table: CpuTable, modelled) -> Microarch | None:
    """The record whose port model stands in for a CPU that the installed OSACA (modelled(record))
    does not model.  The rule, in order:

    1. only records of the CPU's ISA and vendor (ARM: implementer) that OSACA models, and never
       one whose vectors need a flag the CPU lacks (Microarch.needs: avx512f for 512-bit x86);
    2. for a CPU with a record of its own: the same cache design and SIMD width first; then the
       newest generation released no later than it (where none is, the oldest newer one);
    3. for a CPU the table does not know: the newest.

    None where no record passes 1."""
    vendor = cpu.vendor.lower()
    fits = [u for u in table.uarchs.values()
            if u.isa == cpu.isa and modelled(u) and (own is None or u.key != own.key)
            and vendor in table.vendors(u.key) and u.needs() <= cpu.flags]
    if not fits:
        return None
    if own is None:
        return max(fits, key=lambda u: _month(u.released))

    def nearness(u: Microarch) -> tuple:
        older = _month(u.released) <= _month(own.released)
        return (u.hierarchy.key == own.hierarchy.key and u.simd_bits == own.simd_bits, older,
                _month(u.released) if older else -_month(u.released))
    return max(fits, key=nearness)


def _port_model_record(port_model: PortModel, table: CpuTable) -> Microarch:
    """The record of the OSACA model a port model file gives (its arch_code), checked against it."""
    rec = next((u for u in table.uarchs.values() if u.osaca and u.osaca.lower() == port_model.arch.lower()), None)
    if rec is None:
        names = ", ".join(u.osaca for u in table.uarchs.values() if u.osaca)
        raise InputError(f"{port_model.path}: models {port_model.arch}, which no record of autotune's CPU table "
                         f"names, so its non-overlapping ports are unknown (known: {names})", field="port_model")
    if rec.isa != port_model.isa:
        raise InputError(f"{port_model.path}: isa {port_model.isa}, and {rec.label()} is {rec.isa}",
                         field="port_model")
    missing = [p for p in rec.non_overlapping if p not in port_model.ports]
    if missing:
        raise InputError(f"{port_model.path}: has no port {', '.join(missing)}, which autotune's CPU table names "
                         f"as {rec.label()}'s non-overlapping ports", field="port_model")
    return rec


def check_port_model(data, path: str, sha256: str) -> PortModel:
    """The port model of an OSACA architecture file's parsed data, or an InputError (field
    port_model) saying why it is not one."""
    if not isinstance(data, dict):
        raise InputError(f"{path}: not an OSACA architecture file (not a mapping)", field="port_model")
    missing = [k for k in ("arch_code", "isa", "ports", "instruction_forms") if k not in data]
    if missing:
        raise InputError(f"{path}: not an OSACA architecture file (no {', '.join(missing)})", field="port_model")
    ports, forms = data["ports"], data["instruction_forms"]
    if not isinstance(ports, list) or not ports or not isinstance(forms, list) or not forms:
        raise InputError(f"{path}: not an OSACA architecture file (expected lists of ports and instruction "
                         f"forms)", field="port_model")
    isa = str(data["isa"]).lower()
    if isa not in ("x86", "aarch64"):
        raise InputError(f"{path}: isa {data['isa']!r}: expected x86 or aarch64", field="port_model")
    return PortModel(path, sha256, str(data["arch_code"]).upper(), isa, tuple(str(p) for p in ports))


def _check_osaca(rec: Microarch, modelled, osaca_version: str, known: str) -> None:
    """An explicit choice (--uarch) must be one the installed OSACA (or a given file) models."""
    what = f"{rec.key}: {rec.name}"
    if rec.osaca is None:
        raise InputError(f"{what}, which OSACA has no port model of: newer than OSACA knows; "
                         f"choose the closest one explicitly with --uarch NAME (recorded as assumed; "
                         f"one of {known})", field="uarch")
    if not modelled(rec):
        raise InputError(f"{what}, which the installed OSACA {osaca_version} does not model (newer than "
                         f"OSACA knows): upgrade OSACA, give its model with --port-model FILE, or choose "
                         f"another with --uarch NAME (recorded as assumed; one of {known})", field="uarch")

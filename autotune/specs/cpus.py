"""Which microarchitecture a CPU is: the CPU table (autotune/data/cpus/table.yaml) and the
identification of a CPU from what /proc/cpuinfo says of it.

Pure: parse_cpuinfo() takes the text, identify() the parsed CPU, the table and the OSACA
models the caller found installed.  A CPU that is not in the table, or whose microarchitecture
the installed OSACA does not model, is an InputError naming what was read and how to choose
explicitly (--uarch); nothing is ever borrowed from another microarchitecture silently.
"""
from __future__ import annotations

from dataclasses import dataclass, field
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
    cpu: CpuId
    record: Microarch
    assumed: bool = False   # chosen with --uarch, not read from the CPU

    @property
    def uarch(self) -> str:
        """OSACA's name of the microarchitecture in lower case ("zen3")."""
        return self.record.key

    @property
    def key(self) -> str:
        return self.record.key

    @property
    def name(self) -> str:
        return self.record.name

    def __str__(self) -> str:
        how = ", assumed (--uarch)" if self.assumed else ""
        return (f"{self.record.key}: {self.record.name}{how}; {self.cpu.describe()}; OSACA {self.record.osaca}, "
                f"LLVM-MCA -mcpu={self.record.llvm_mca}, {self.record.simd_bits}-bit SIMD, "
                f"{self.record.dp_flops['total']} DP FLOP/cy")

    def to_dict(self) -> dict:
        u = self.record
        return {"uarch": u.key, "name": u.name, "osaca": u.osaca, "llvm_mca": u.llvm_mca, "isa": u.isa,
                "simd_bits": u.simd_bits, "dp_flops_per_cycle": dict(u.dp_flops),
                "non_overlapping_ports": list(u.non_overlapping), "hierarchy": u.hierarchy.key,
                "source": u.source, "assumed": self.assumed, "cpu": self.cpu.describe(),
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
                              hier[v["hierarchy"]], v["source"])
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
             osaca_version: str = "", uarch: str | None = None) -> Identified:
    """The CPU's microarchitecture record.  osaca_models: lower-case names of the models the
    installed OSACA ships (None: not checked).  uarch: an explicit choice (recorded as assumed)."""
    known = ", ".join(k for k, u in table.uarchs.items() if u.osaca
                      and (osaca_models is None or k in osaca_models))
    if uarch is not None:
        rec = table.uarchs.get(uarch.lower())
        if rec is None:
            raise InputError(f"{uarch!r}: unknown microarchitecture (known: {known})", field="uarch")
        _check_osaca(rec, f"{rec.key}: {rec.name}", osaca_models, osaca_version, known, "uarch")
        return Identified(cpu, rec, assumed=True)
    row = next((r for r in table.rows if r.matches(cpu)), None)
    if row is None:
        raise InputError(f"{cpu.describe()}: not in autotune's CPU table, so its microarchitecture is unknown; "
                         f"choose one explicitly with --uarch NAME (recorded as assumed; one of {known})")
    rec = table.uarchs[row.uarch]
    _check_osaca(rec, f"{cpu.describe()} is {rec.name} ({rec.key})", osaca_models, osaca_version, known)
    return Identified(cpu, rec)


def _check_osaca(rec: Microarch, what: str, osaca_models, osaca_version: str, known: str,
                 field: str | None = None) -> None:
    """field: 'uarch' where the record is the user's explicit choice; None where it was read from
    the CPU (the message then names what was read, and the option to choose with)."""
    if rec.osaca is None:
        raise InputError(f"{what}, which OSACA has no port model of: newer than OSACA knows; "
                         f"choose the closest one explicitly with --uarch NAME (recorded as assumed; "
                         f"one of {known})", field=field)
    if osaca_models is not None and rec.osaca.lower() not in osaca_models:
        raise InputError(f"{what}, which the installed OSACA {osaca_version} does not model (newer than "
                         f"OSACA knows): upgrade OSACA, or choose explicitly with --uarch NAME "
                         f"(recorded as assumed; one of {known})", field=field)

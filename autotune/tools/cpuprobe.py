"""The edges of CPU identification: /proc/cpuinfo, the OSACA models installed or given by file
(--port-model), and what the C compiler accepts and enables.  The table and the rules are pure
(specs/cpus.py, specs/isa.py)."""
from __future__ import annotations

import hashlib
import os
import platform
import re
import subprocess
from functools import lru_cache
from importlib import util
from pathlib import Path

from autotune.errors import InputError
from autotune.specs import isa as isamod
from autotune.specs.cpus import CpuId, Identified, PortModel, check_port_model, identify, load_table, parse_cpuinfo
from autotune.specs.isa import host_isa
from autotune.tools.toolchain import package_version

CPUINFO = Path("/proc/cpuinfo")
_ENABLED = re.compile(r"^\s+-m(\S+)\s+\[enabled\]", re.M)


def read_cpuinfo(path: Path = CPUINFO) -> str:
    try:
        return path.read_text()
    except OSError as e:
        raise InputError(f"{path}: cannot read ({e.strerror}): choose the CPU with --uarch NAME") from None


@lru_cache(maxsize=None)
def osaca_models() -> tuple[frozenset[str], str]:
    """The lower-case names of the port models the installed OSACA ships, and its version."""
    spec = util.find_spec("osaca")
    if spec is None or not spec.submodule_search_locations:
        return frozenset(), "missing"
    data = Path(next(iter(spec.submodule_search_locations))) / "data"
    return frozenset(p.stem.lower() for p in data.glob("*.yml")), package_version("osaca")


def identify_cpu(cpuinfo: str | None = None, uarch: str | None = None,
                 port_model: PortModel | str | Path | None = None) -> Identified:
    """The microarchitecture of the CPU that cpuinfo (default: this host's /proc/cpuinfo)
    describes, its port model borrowed from the closest record the installed OSACA models where
    OSACA lacks its own (Identified.borrowed_from); uarch: an explicit choice, recorded as assumed;
    port_model: an OSACA architecture file (or its path) to use instead.  InputError where no
    record of the CPU's vendor and ISA is modelled."""
    if port_model is not None and not isinstance(port_model, PortModel):
        port_model = read_port_model(port_model)
    try:
        cpu = parse_cpuinfo(read_cpuinfo() if cpuinfo is None else cpuinfo)
    except InputError:
        if uarch is None:
            raise
        cpu = CpuId(this_isa(), "unknown", None, None, None, "")   # the explicit choice stands alone
    models, version = osaca_models()
    return identify(cpu, load_table(), models, version, uarch, port_model)


PORT_MODEL_FIELD = "port model file"   # the machine file's {path, sha256} of a file given by --port-model


@lru_cache(maxsize=64)
def _file_sha256(path: str, mtime_ns: int, size: int) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def file_sha256(path: str) -> str:
    """The file's sha256, read again only where it changed (OSError where it cannot be read)."""
    st = os.stat(path)
    return _file_sha256(path, st.st_mtime_ns, st.st_size)


def read_port_model(path: str | Path) -> PortModel:
    """An OSACA architecture file given by path (--port-model), checked: InputError (field
    port_model) where it is missing, not YAML or not an OSACA architecture file."""
    import yaml
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as e:
        raise InputError(f"{path}: cannot read ({e.strerror})", field="port_model") from None
    try:
        data = yaml.load(raw, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as e:
        raise InputError(f"{path}: not valid YAML ({str(e).splitlines()[0]})", field="port_model") from None
    return check_port_model(data, str(p.resolve()), hashlib.sha256(raw).hexdigest())


def port_model_entry(port_model: PortModel) -> dict:
    """The machine file's `port model file` field."""
    return {"path": port_model.path, "sha256": port_model.sha256}


def checked_port_model_file(entry, where: str) -> tuple[str, str]:
    """(path, sha256) of a machine file's `port model file` field, the file checked to be the one
    recorded: InputError where the field is malformed, the file gone or changed since."""
    what = f"{where}: field '{PORT_MODEL_FIELD}'"
    if not isinstance(entry, dict) or not isinstance(entry.get("path"), str) \
            or not isinstance(entry.get("sha256"), str):
        raise InputError(f"{what}: expected {{path: FILE, sha256: DIGEST}}")
    path, recorded = entry["path"], entry["sha256"]
    try:
        now = file_sha256(path)
    except OSError as e:
        raise InputError(f"{what}: {path}: cannot read ({e.strerror}); restore it, or make the machine file "
                         f"again (calibrate --node --port-model FILE)") from None
    if now != recorded:
        raise InputError(f"{what}: {path} changed since the machine file was made (sha256 {now[:12]}..., "
                         f"recorded {recorded[:12]}...): restore it, or make the machine file again "
                         f"(calibrate --node --port-model FILE)")
    return path, recorded


def machine_port_model(machine) -> tuple[str, str] | None:
    """(path, sha256) of the port model file a machine's in-core analyses use, checked against the
    file now; None where the machine file names none (the installed OSACA's model)."""
    entry = machine.port_model_file
    return None if entry is None else checked_port_model_file(entry, machine.path)


def incore_key(machine) -> str:
    """The in-core model an analysis of this machine rests on, for the analysis store key: the
    OSACA model's name, and the digest of the file that gives it where one does."""
    given = machine_port_model(machine)
    return f"OSACA:{machine.incore_model}" + (f"@sha256:{given[1]}" if given else "")


def host_cpu() -> CpuId:
    return parse_cpuinfo(read_cpuinfo())


def this_isa() -> str:
    return host_isa(platform.machine())


def _quiet_compile(cc: str, flags: list[str]) -> bool:
    try:
        proc = subprocess.run([cc, *flags, "-E", "-x", "c", "-", "-o", "/dev/null"], input="",
                              capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return False
    return proc.returncode == 0 and "deprecated" not in proc.stderr


@lru_cache(maxsize=None)
def accepted_march(cc: str, isa: str, candidates: tuple[str, ...]) -> str | None:
    """The first -march (x86) / -mcpu (ARM) value the compiler accepts."""
    return next((m for m in candidates if _quiet_compile(cc, [isamod.march_option(isa, m)])), None)


@lru_cache(maxsize=None)
def enabled_options(cc: str, flags: tuple[str, ...]) -> frozenset[str] | None:
    """The -m options (avx2, avx512f, ...) gcc enables under these flags; None where the compiler
    cannot say (not gcc, or flags for another ISA)."""
    try:
        proc = subprocess.run([cc, *flags, "-Q", "--help=target"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode != 0:
        return None
    return frozenset(_ENABLED.findall(proc.stdout))


def isa_flags(ident: Identified, cc: str = "gcc") -> tuple[list[str], str]:
    """The ISA flags for the identified CPU with this compiler, and a note of how they were made.
    Only for a CPU of this host's ISA (the compiler is asked what -march enables)."""
    u = ident.record
    march = accepted_march(cc, u.isa, tuple(u.march.get("gcc", ())))
    if march is None:
        raise InputError(f"{cc} accepts none of {', '.join(u.march.get('gcc', ()))} for {u.name}: "
                         f"install a newer compiler", field="uarch")
    enabled = enabled_options(cc, (isamod.march_option(u.isa, march),))
    flags = isamod.compose(u.isa, march, set(enabled) if enabled is not None else None, ident.cpu.flags)
    best = u.march["gcc"][0]
    note = (f"{flags[0]} ({cc} has no {best}: the newest it knows for {u.name})" if march != best
            else flags[0])
    extra = flags[1:]
    if extra:
        note += "; from the CPU's flags: " + " ".join(extra)
    return flags, note


def missing_on_host(flags: tuple[str, ...] | list[str], cc: str = "gcc") -> list[str] | None:
    """The vector extensions these flags would use that this host's CPU lacks (None: cannot tell)."""
    isa_only = isamod.isa_part(list(flags))
    if any(f.startswith(("-march=native", "-mcpu=native")) for f in isa_only):
        return []
    enabled = enabled_options(cc, tuple(isa_only))
    if enabled is None:
        return None
    return isamod.missing(set(enabled), host_cpu().flags)


_PORTS = re.compile(r"^ports:\s*(\[[^\]]*\])", re.M)


@lru_cache(maxsize=None)
def osaca_ports(osaca_name: str) -> list[str]:
    """The port names of one of the installed OSACA's models (its data file's `ports` list; a
    model given by file has them in PortModel.ports)."""
    import yaml

    spec = util.find_spec("osaca")
    path = Path(next(iter(spec.submodule_search_locations))) / "data" / f"{osaca_name.lower()}.yml"
    m = _PORTS.search(path.read_text())
    if m is None:
        raise InputError(f"{path}: no 'ports' list found", field="uarch")
    return [str(p) for p in yaml.safe_load(m.group(1))]


_CROSS_PREFIX = {"aarch64": ("aarch64-", "arm64-"), "x86": ("x86_64-", "i686-")}


def cross_analysis_error(machine) -> str | None:
    """Why kerncraft cannot analyse kernels for this machine on this host, or None: it compiles
    every kernel to the target's assembly, which takes a compiler for the target's ISA (a
    cross compiler, e.g. aarch64-linux-gnu-gcc, named in the machine file's compiler section)."""
    import shutil

    here = this_isa()
    if machine.isa == here:
        return None
    first = next((c for c in machine.compilers if shutil.which(c)), None)   # the one kerncraft takes
    if first is not None and first.startswith(_CROSS_PREFIX.get(machine.isa, ())):
        return None
    return (f"{machine.name}: a machine of {machine.isa} and this host is {here}; kerncraft compiles the "
            f"kernels for the target, and the first of the file's compilers found here ({first or 'none'}) "
            f"is not a cross compiler for it: run the analyses on the target (e.g. srun -N 1 -n 3 "
            f"--mpi=pmi2 python -m mpi4py.futures -m autotune rank ... --machine {machine.name} --jobs mpi) "
            f"into the same store, or put a cross compiler such as {machine.isa}-linux-gnu-gcc first in "
            f"the file's compiler section")

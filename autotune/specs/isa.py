"""The instruction set a machine file's code is compiled for, as compiler flags (pure).

The analysed kernels (kerncraft) and the built solvers (tune) must target the same ISA, and
that ISA must be the CPU's: the -march/-mcpu value comes from the CPU table, and the vector
extensions from the CPU's own flags (an extension the CPU lacks is switched off, one it has
and the -march value does not imply is switched on).
"""
from __future__ import annotations

# (the flag in /proc/cpuinfo, gcc's -m option): the extensions that change the code generated
# for these kernels (vector width, FMA, AVX-512 sub-sets)
VECTOR_EXTENSIONS = (("sse4_2", "sse4.2"), ("avx", "avx"), ("avx2", "avx2"), ("fma", "fma"),
                     ("avx512f", "avx512f"), ("avx512dq", "avx512dq"), ("avx512cd", "avx512cd"),
                     ("avx512bw", "avx512bw"), ("avx512vl", "avx512vl"))
HOST_ISA = {"x86_64": "x86", "amd64": "x86", "i686": "x86", "aarch64": "aarch64", "arm64": "aarch64"}
_ISA_PREFIXES = ("-march=", "-mcpu=", "-mtune=", "-msve-vector-bits=", "-x", "-target")
_EXT_OPTIONS = {opt for _, opt in VECTOR_EXTENSIONS}


def march_option(isa: str, value: str) -> str:
    """-march=X on x86; -mcpu=X on ARM, where the CPU table's values are cores."""
    return f"-march={value}" if isa == "x86" else f"-mcpu={value}"


def compose(isa: str, march: str, enabled: set[str] | None, cpu_flags: frozenset[str]) -> list[str]:
    """The ISA flags for a CPU: march (accepted by the compiler), then -m<ext> for each vector
    extension the CPU has and march does not enable, -mno-<ext> for each march enables and the
    CPU lacks.  enabled: the -m options march enables (None: not known, add nothing)."""
    out = [march_option(isa, march)]
    if isa != "x86" or enabled is None:
        return out
    for flag, opt in VECTOR_EXTENSIONS:
        has, on = flag in cpu_flags, opt in enabled
        if has and not on:
            out.append(f"-m{opt}")
        elif on and not has:
            out.append(f"-mno-{opt}")
    return out


def isa_part(flags: str | list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """The tokens of a flag list that select the instruction set (-march, -mcpu, -m<ext> ...)."""
    tokens = flags.split() if isinstance(flags, str) else list(flags)
    out = []
    for t in tokens:
        ext = t[len("-mno-"):] if t.startswith("-mno-") else t[2:] if t.startswith("-m") else None
        if t.startswith(_ISA_PREFIXES) or ext in _EXT_OPTIONS:
            out.append(t)
    return tuple(out)


def missing(enabled: set[str], cpu_flags: frozenset[str]) -> list[str]:
    """The vector extensions the flags enable (enabled: gcc's -m options) that the CPU lacks."""
    return [opt for flag, opt in VECTOR_EXTENSIONS if opt in enabled and flag not in cpu_flags]


def host_isa(machine: str) -> str:
    """'x86' or 'aarch64' for platform.machine()'s answer (the answer itself where unknown)."""
    return HOST_ISA.get(machine.lower(), machine.lower())

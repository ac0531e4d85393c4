"""Versions of the external tools an ECM result depends on (thin edge, cached per process)."""
from __future__ import annotations

import shutil
import subprocess
import sys
from functools import lru_cache
from importlib import metadata
from pathlib import Path


@lru_cache(maxsize=None)
def package_version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "missing"


def find_executable(name: str) -> str | None:
    """A tool on PATH, or beside this Python (the mpich wheel's mpiexec/mpicc in a virtual env)."""
    found = shutil.which(name)
    if found:
        return found
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.exists() else None


def resolve_argv(argv: list[str]) -> list[str]:
    """argv with its command looked up like find_executable (unchanged if not found)."""
    found = find_executable(argv[0]) if argv else None
    return [found] + argv[1:] if found else argv


@lru_cache(maxsize=None)
def compiler_version(compiler: str) -> str:
    exe = shutil.which(compiler)
    if exe is None:
        return "missing"
    try:
        out = subprocess.run([exe, "-dumpfullversion", "-dumpversion"], capture_output=True,
                             text=True, timeout=30)
        return f"{compiler} {out.stdout.strip()}"
    except (OSError, subprocess.SubprocessError):
        return "unknown"

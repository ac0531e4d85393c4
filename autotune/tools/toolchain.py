"""Versions of the external tools an ECM result depends on (thin edge, cached per process)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from functools import lru_cache
from pathlib import Path


@lru_cache(maxsize=None)
def package_version(name: str) -> str:
    """The installed version of a distribution: from its NAME-VERSION.dist-info folder on
    sys.path, the first one, as importlib.metadata finds it (whose import alone takes longer than a
    warm rank's arithmetic); importlib.metadata itself where no such folder names it."""
    wanted = re.sub(r"[-_.]+", "_", name).lower()
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for folder in names:
            if folder.endswith(".dist-info"):
                dist, _, version = folder[:-len(".dist-info")].partition("-")
                if re.sub(r"[-_.]+", "_", dist).lower() == wanted and version:
                    return version
    from importlib import metadata
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

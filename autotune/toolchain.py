"""Versions of the external tools an ECM result depends on (thin edge, cached per process)."""
from __future__ import annotations

import shutil
import subprocess
from functools import lru_cache
from importlib import metadata


@lru_cache(maxsize=None)
def package_version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "missing"


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

"""Where the shipped data files are: packages inside the installed distribution.

ivps/, machines/ and variants/ sit at the top of the source tree and are
installed as autotune.data.ivps, autotune.data.machines and
autotune.data.variants (pyproject.toml maps them); the methods live in
autotune/data/methods.  Read through importlib.resources, so a wheel install
finds them exactly as a checkout does.
"""
from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

KINDS = ("cpus", "ivps", "machines", "methods", "variants")


def shipped_dir(kind: str) -> Path:
    """The folder of one kind of shipped data file (a real directory: the package is installed
    unzipped, and kerncraft and Jinja read the files by path)."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind of shipped data {kind!r} (known: {', '.join(KINDS)})")
    return Path(str(resources.files(f"autotune.data.{kind}")))


def user_machine_dir() -> Path:
    """Machine files made on this host (calibrate --node): $AUTOTUNE_MACHINES, else
    $XDG_CONFIG_HOME/autotune/machines (~/.config/autotune/machines)."""
    env = os.environ.get("AUTOTUNE_MACHINES")
    if env:
        return Path(env)
    return Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config", "autotune", "machines")

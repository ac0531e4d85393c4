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


def xdg_path(override_env: str, xdg_env: str, fallback: str, *parts: str) -> Path:
    """$override_env if set, else $xdg_env (or ~/fallback) joined with parts: where every folder
    autotune keeps lies (docs/usage.md#files-autotune-keeps)."""
    env = os.environ.get(override_env)
    if env:
        return Path(env)
    base = os.environ.get(xdg_env) or str(Path.home() / fallback)
    return Path(base, *parts)


def user_machine_dir() -> Path:
    """Machine files made on this host (calibrate --node): $AUTOTUNE_MACHINES, else
    $XDG_CONFIG_HOME/autotune/machines (~/.config/autotune/machines)."""
    return xdg_path("AUTOTUNE_MACHINES", "XDG_CONFIG_HOME", ".config", "autotune", "machines")

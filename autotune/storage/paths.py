"""Where the store and the builds go (XDG directories)."""
import os
from pathlib import Path


def xdg_path(override_env: str, xdg_env: str, fallback: str, *parts: str) -> Path:
    """$override_env if set, else $xdg_env (or ~/fallback) joined with parts."""
    env = os.environ.get(override_env)
    if env:
        return Path(env)
    base = os.environ.get(xdg_env) or str(Path.home() / fallback)
    return Path(base, *parts)


def default_store_path() -> Path:
    """AUTOTUNE_STORE, else the XDG cache dir (~/.cache/autotune/store.sqlite)."""
    return xdg_path("AUTOTUNE_STORE", "XDG_CACHE_HOME", ".cache", "autotune", "store.sqlite")


def build_dir() -> Path:
    """Compiled solvers: $AUTOTUNE_BUILDS or ~/.cache/autotune/builds."""
    return xdg_path("AUTOTUNE_BUILDS", "XDG_CACHE_HOME", ".cache", "autotune", "builds")

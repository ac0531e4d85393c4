"""Where the shipped data lives and where the store goes by default."""
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IVP_DIR = ROOT / "ivps"
MACHINE_DIR = ROOT / "machines"
VARIANT_DIR = ROOT / "variants"
METHOD_DIR = Path(__file__).resolve().parent / "data" / "methods"


def _xdg(override_env: str, xdg_env: str, fallback: str, *parts: str) -> Path:
    """$override_env if set, else $xdg_env (or ~/fallback) joined with parts."""
    env = os.environ.get(override_env)
    if env:
        return Path(env)
    base = os.environ.get(xdg_env) or str(Path.home() / fallback)
    return Path(base, *parts)


def default_store_path() -> Path:
    """AUTOTUNE_STORE, else the XDG cache dir (~/.cache/autotune/store.sqlite)."""
    return _xdg("AUTOTUNE_STORE", "XDG_CACHE_HOME", ".cache", "autotune", "store.sqlite")


def user_machine_dir() -> Path:
    """Machine files made on this host (calibrate --node): $AUTOTUNE_MACHINES or ~/.config/autotune/machines."""
    return _xdg("AUTOTUNE_MACHINES", "XDG_CONFIG_HOME", ".config", "autotune", "machines")


def build_dir() -> Path:
    """Compiled solvers: $AUTOTUNE_BUILDS or ~/.cache/autotune/builds."""
    return _xdg("AUTOTUNE_BUILDS", "XDG_CACHE_HOME", ".cache", "autotune", "builds")

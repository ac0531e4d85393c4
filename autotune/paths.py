"""Where the shipped data lives and where the store goes by default."""
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IVP_DIR = ROOT / "ivps"
MACHINE_DIR = ROOT / "machines"
VARIANT_DIR = ROOT / "variants"
METHOD_DIR = Path(__file__).resolve().parent / "data" / "methods"


def default_store_path() -> Path:
    """AUTOTUNE_STORE, else the XDG cache dir (~/.cache/autotune/store.sqlite)."""
    env = os.environ.get("AUTOTUNE_STORE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "autotune" / "store.sqlite"


def user_machine_dir() -> Path:
    """Machine files made on this host (calibrate --node): $AUTOTUNE_MACHINES or ~/.config/autotune/machines."""
    env = os.environ.get("AUTOTUNE_MACHINES")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "autotune" / "machines"

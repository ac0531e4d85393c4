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


def check_output_path(path: Path, field: str, suffixes: tuple[str, ...]) -> None:
    """Refuse a file to be written before the work that produces it: an extension the writer does
    not know, a directory where the file should be, or a folder that cannot be created or written
    (its nearest existing ancestor decides)."""
    from autotune.errors import InputError
    if path.suffix.lower() not in suffixes:
        raise InputError(f"{path}: expected a {' or '.join(suffixes)} file name", field=field)
    if path.is_dir():
        raise InputError(f"{path}: is a directory", field=field)
    if path.exists() and not os.access(path, os.W_OK):
        raise InputError(f"{path}: cannot be written", field=field)
    folder = path.parent if str(path.parent) else Path(".")
    existing = next((p for p in (folder, *folder.parents) if p.exists()), Path("."))
    if not existing.is_dir() or not os.access(existing, os.W_OK | os.X_OK):
        raise InputError(f"{path}: folder {folder} does not exist and cannot be created, or cannot be written",
                         field=field)

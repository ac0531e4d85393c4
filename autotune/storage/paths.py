"""Where the store and the builds go (XDG directories), and the check of a file a command will write."""
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from autotune.specs.shipped import xdg_path


def default_store_path(say: Callable[[str], None] | None = None) -> Path:
    """$AUTOTUNE_STORE, else the XDG data folder (~/.local/share/autotune/store.sqlite): the
    store keeps measured runs, which cannot be made again, so not in a cache folder that users
    and cleaners empty.  A store left where earlier versions kept it (~/.cache/autotune) is
    moved here once (move_store), and `say` is told so."""
    if os.environ.get("AUTOTUNE_STORE"):
        return Path(os.environ["AUTOTUNE_STORE"])
    new = xdg_path("AUTOTUNE_STORE", "XDG_DATA_HOME", ".local/share", "autotune", "store.sqlite")
    old = xdg_path("AUTOTUNE_STORE", "XDG_CACHE_HOME", ".cache", "autotune", "store.sqlite")
    if old.is_file() and not new.exists():
        moved, note = move_store(old, new)
        if note and say is not None:
            say(note)
        return new if moved else old
    return new


SIDECARS = ("-wal", "-shm", "-journal")    # SQLite's files beside a database
MOVED = ".moved"                           # what the old store's files are renamed to, kept


def move_store(old: Path, new: Path) -> tuple[bool, str | None]:
    """Copy the store at `old` to `new` through SQLite's backup (what its write-ahead log holds
    included), under a temporary name linked into place (never over a store that is there),
    then rename the old files with MOVED appended (kept: a process still writing there loses
    nothing).  Under a lock beside `new`, so that two commands started together move it once.
    (whether `new` is the store now, one line saying what happened or None where another command
    moved it); a store that cannot be moved stays where it is, whole, and is used there."""
    import fcntl
    import sqlite3
    tmp = new.with_name(f".{new.name}.moving-{os.getpid()}")
    try:
        new.parent.mkdir(parents=True, exist_ok=True)
        with open(new.with_name(f".{new.name}.lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if new.exists():
                return True, None            # another command moved it meanwhile
            src = sqlite3.connect(f"{old.as_uri()}?mode=ro", uri=True, timeout=60)
            dst = sqlite3.connect(tmp)
            try:
                src.backup(dst)
            finally:
                dst.close()
                src.close()
            os.link(tmp, new)
            tmp.unlink()
    except (OSError, sqlite3.Error) as e:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass
        return new.exists(), f"the store stays at {old}: it could not be moved to {new} ({e})"
    for path in (old, *(old.with_name(old.name + s) for s in SIDECARS)):
        try:
            path.rename(path.with_name(path.name + MOVED))
        except OSError:
            pass
    return True, (f"moved the store from {old} to {new} (it keeps measured runs: not a cache); the old one is "
                  f"kept as {old.name}{MOVED}")


def build_dir() -> Path:
    """Compiled solvers: $AUTOTUNE_BUILDS or ~/.cache/autotune/builds."""
    return xdg_path("AUTOTUNE_BUILDS", "XDG_CACHE_HOME", ".cache", "autotune", "builds")


@dataclass(frozen=True)
class Output:
    """A kind of file a command writes: the suffixes its writer knows (none: the output is a
    folder) and whether the writer makes missing folders (mkdir with parents)."""
    suffixes: tuple[str, ...]
    makes_folders: bool


# every kind of output a command writes; a new writer adds its row
OUTPUTS = {
    "plot": Output((".png", ".svg", ".pdf"), False),      # report/plots.py (matplotlib's savefig)
    "plan": Output((".json",), True),                     # plan --out (pipeline/plan.write_plan)
    "machine": Output((".yaml", ".yml"), True),           # calibrate [--node] --out, the machine file
    "raw": Output((".jsonl", ".json"), False),            # calibrate --raw (JSON Lines)
    "folder": Output((), True),                           # generate --out: kernel parts and solvers
}


def suffix_choice(suffixes: tuple[str, ...]) -> str:
    """(".png", ".svg", ".pdf") -> ".png, .svg or .pdf"."""
    return " or ".join(filter(None, (", ".join(suffixes[:-1]), suffixes[-1])))


def check_output_path(path: Path, field: str, kind: str) -> None:
    """Refuse an output before the work that produces it, in one InputError naming the field:
    an extension the writer does not know, a folder where a file goes (or a file where a folder
    goes), a file or folder that cannot be written, a missing folder the writer does not make
    (one it makes: its nearest existing ancestor must be a writable folder)."""
    from autotune.errors import InputError
    out = OUTPUTS[kind]
    path = Path(path)
    if out.suffixes and path.suffix.lower() not in out.suffixes:
        raise InputError(f"{path}: expected a {suffix_choice(out.suffixes)} file name", field=field)
    if out.suffixes and path.is_dir():
        raise InputError(f"{path}: is a folder, expected a file name", field=field)
    if not out.suffixes and path.exists() and not path.is_dir():
        raise InputError(f"{path}: is a file, expected a folder", field=field)
    if path.exists() and not os.access(path, os.W_OK):
        raise InputError(f"{path}: cannot be written (no permission)", field=field)
    folder = path if not out.suffixes else path.parent
    existing = next((p for p in (folder, *folder.parents) if p.exists()), Path("."))
    why = "" if existing.is_dir() else f" ({existing} is a file)"
    if why or (existing != folder and not out.makes_folders):
        made = " and cannot be created" if out.makes_folders else ""
        raise InputError(f"{path}: folder {folder} does not exist{made}{why}", field=field)
    if not os.access(existing, os.W_OK | os.X_OK):
        raise InputError(f"{path}: folder {existing} is not writable", field=field)

"""Files written for the user (plots, plans, machine files, generated code, raw measurements),
whole or not at all.

Every writer writes to a temporary file beside its target, with the target's suffix (matplotlib
picks the image format from it), and renames it into place only once the file is complete and
closed: a write that fails midway leaves the target as it was and no temporary file behind.  An
OSError becomes the one-line InputError of bad input, naming the field (the option, for the
command line) and the path, e.g. `--plot /proc/x.png: cannot write (No such file or directory)`.
"""
from __future__ import annotations

import itertools
import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from autotune.errors import InputError

_serial = itertools.count()


def _failed(path: Path, field: str, e: OSError, what: str = "write") -> InputError:
    return InputError(f"{path}: cannot {what} ({e.strerror or e})", field=field)


def make_folder(path: Path, field: str) -> None:
    """The folder and its missing parents (an OSError as the field's one-line InputError)."""
    try:
        Path(path).mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise _failed(Path(path), field, e, "create") from None


def temporary_name(target: Path) -> Path:
    """A name beside target, hidden, unique to this process and call, with target's suffix (and
    no longer than a file name may be where target's is)."""
    return target.with_name(f".{target.stem[:120]}.{os.getpid()}-{next(_serial)}.tmp{target.suffix[:40]}")


@contextmanager
def replacing(path: Path, field: str, make_folders: bool = False) -> Iterator[Path]:
    """A temporary path for a writer that takes a file name: what the body writes there replaces
    path when the body ends; if the body fails, the temporary file is removed and path is left as
    it was.  A link is written through (the file it points to is replaced).  make_folders: create
    path's missing folders first."""
    path = Path(path)
    target = Path(os.path.realpath(path)) if path.is_symlink() else path
    tmp = temporary_name(target)
    try:
        if make_folders:
            target.parent.mkdir(parents=True, exist_ok=True)
        yield tmp
        if target.exists():
            shutil.copymode(target, tmp)     # an edited file keeps its permissions
        os.replace(tmp, target)
    except OSError as e:
        raise _failed(path, field, e) from None
    finally:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass


@contextmanager
def writing(path: Path, field: str, make_folders: bool = False) -> Iterator[IO[str]]:
    """A text file to write to, in place of path when the body ends (see replacing)."""
    with replacing(path, field, make_folders) as tmp, open(tmp, "w") as f:
        yield f


def write_text(path: Path, text: str, field: str, make_folders: bool = False) -> None:
    with writing(path, field, make_folders) as f:
        f.write(text)


def write_json(path: Path, data, field: str, make_folders: bool = False, indent: int = 2) -> None:
    """data as indented JSON with a final newline."""
    with writing(path, field, make_folders) as f:
        json.dump(data, f, indent=indent)
        f.write("\n")

"""Parsed data files kept between commands, keyed by their text (docs/usage.md#files-autotune-keeps).

Every command reads its machine file, IVP and method as YAML.  Importing PyYAML and parsing a
machine file takes a few tens of milliseconds, most of an everyday command's own time once the
results are stored.  A file's parse is kept in $AUTOTUNE_PARSED (else
$XDG_CACHE_HOME/autotune/parsed, ~/.cache/autotune/parsed) as marshal data, named by the file's
stem, a digest of its path and a digest of its text and of the loader's rules (FORMAT): a file
whose text changes is parsed again, so a kept parse is never stale, and the parse it replaces
is removed.  What cannot be kept (no folder can be found or written, a value marshal does not
hold) is parsed each time, as before; nothing here ever fails a command.
"""
from __future__ import annotations

import hashlib
import marshal
import os
import tempfile
from pathlib import Path

from autotune.specs.shipped import xdg_path

# the loader's rules (specs.loading._loader): tests/test_parsed_files.py holds a digest of its
# source, so a change of them must change this
FORMAT = b"autotune-yaml-1"


def folder() -> Path:
    return xdg_path("AUTOTUNE_PARSED", "XDG_CACHE_HOME", ".cache", "autotune", "parsed")


def _digest(data: bytes, size: int) -> str:
    return hashlib.blake2b(data, digest_size=size).hexdigest()


def _lead(path: Path | str) -> str:
    """What every kept parse of one file's name starts with: its stem and its path's digest."""
    return f"{Path(path).stem}-{_digest(os.path.abspath(path).encode(), 4)}-"


def _file(text: str, path: Path | str) -> Path:
    return folder() / f"{_lead(path)}{_digest(FORMAT + text.encode(), 16)}.marshal"


def kept(text: str, path: Path | str):
    """The parse kept for this text, or None."""
    try:
        with open(_file(text, path), "rb") as f:
            return marshal.load(f)
    except Exception:        # no folder (no home), no file, or not ours: parse the text
        return None


def keep(text: str, path: Path | str, data) -> None:
    """Keep the parse of this text of the file at `path`, in place of the parses kept of its
    earlier texts (a file edited again and again keeps one parse)."""
    partial = None
    try:
        target = _file(text, path)
        raw = marshal.dumps(data)
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, partial = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
        os.replace(partial, target)
        partial = None
        lead = _lead(path)
        for old in target.parent.iterdir():      # <lead><hex digest>.marshal, no other name
            name = old.name
            if name.startswith(lead) and name.endswith(".marshal") and name[len(lead):-8].isalnum() \
                    and old != target:
                old.unlink(missing_ok=True)
    except Exception:        # only the time is lost: the next command parses the file again
        if partial is not None:
            Path(partial).unlink(missing_ok=True)

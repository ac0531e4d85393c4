"""Parsed data files kept between commands, keyed by their text (docs/usage.md#files-autotune-keeps).

Every command reads its machine file, IVP and method as YAML.  Importing PyYAML and parsing a
machine file takes a few tens of milliseconds, most of an everyday command's own time once the
results are stored.  A file's parse is kept in $AUTOTUNE_PARSED (else
$XDG_CACHE_HOME/autotune/parsed, ~/.cache/autotune/parsed) as marshal data, named by a digest
of the text and of the loader's rules (FORMAT): a file whose text changes is parsed again, so a
kept parse is never stale.  What cannot be kept (a folder that cannot be written, a value
marshal does not hold) is parsed each time, as before; nothing here ever fails a command.
"""
from __future__ import annotations

import hashlib
import marshal
import os
from pathlib import Path

FORMAT = b"autotune-yaml-1"     # the loader's rules (specs.loading): a change of them changes this


def folder() -> Path:
    env = os.environ.get("AUTOTUNE_PARSED")
    if env:
        return Path(env)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache", "autotune", "parsed")


def _file(text: str, path: Path | str) -> Path:
    digest = hashlib.blake2b(FORMAT + text.encode(), digest_size=16).hexdigest()
    return folder() / f"{Path(path).stem}-{digest}.marshal"


def kept(text: str, path: Path | str):
    """The parse kept for this text, or None."""
    try:
        with open(_file(text, path), "rb") as f:
            return marshal.load(f)
    except (OSError, EOFError, ValueError, TypeError):
        return None


def keep(text: str, path: Path | str, data) -> None:
    """Keep the parse of this text, in place of the parses kept of earlier texts of a file of the
    same name (a file edited again and again keeps one parse)."""
    target = _file(text, path)
    try:
        raw = marshal.dumps(data)
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f".{target.name}.{os.getpid()}")
        partial.write_bytes(raw)
        os.replace(partial, target)
        lead = Path(path).stem + "-"
        for old in target.parent.iterdir():      # <stem>-<hex digest>.marshal, no other name
            name = old.name
            if name.startswith(lead) and name.endswith(".marshal") and name[len(lead):-8].isalnum() \
                    and old != target:
                old.unlink(missing_ok=True)
    except (OSError, ValueError):
        return

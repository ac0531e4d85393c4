"""Files written for the user: a write that fails is one line naming the option and the path,
exit status 2, no traceback; a write that fails midway leaves the target as it was and no
temporary file beside it (storage/atomic.py).  The analyses are replayed (conftest.replay_store)."""
from __future__ import annotations

from pathlib import Path

import pytest

from autotune.errors import InputError
from autotune.storage import atomic


def only_files(folder: Path) -> dict[str, str]:
    """Every file under folder (temporary ones included) and its text."""
    return {str(p.relative_to(folder)): p.read_text(errors="replace") for p in sorted(folder.rglob("*"))
            if p.is_file()}


def test_what_fails_in_the_serializer_leaves_nothing(tmp_path):
    """Not an OSError (a value JSON cannot encode, met midway): it goes on as it is, nothing is left."""
    target = tmp_path / "out.json"
    target.write_text("old\n")
    with pytest.raises(TypeError):
        atomic.write_json(target, {"a": list(range(1000)), "z": object()}, "out")
    assert only_files(tmp_path) == {"out.json": "old\n"}
    with pytest.raises(KeyError):
        with atomic.replacing(tmp_path / "new.png", "plot") as tmp:
            tmp.write_bytes(b"half")
            raise KeyError("interrupted")
    assert only_files(tmp_path) == {"out.json": "old\n"}


def test_an_os_error_is_the_fields_input_error(tmp_path):
    (tmp_path / "F").write_text("a file\n")
    for make_folders in (False, True):
        with pytest.raises(InputError) as e:
            atomic.write_json(tmp_path / "F" / "x.json", {}, "out", make_folders)
        assert e.value.field == "out" and e.value.message.startswith(f"{tmp_path / 'F' / 'x.json'}: cannot write (")
    assert only_files(tmp_path) == {"F": "a file\n"}


def test_a_link_is_written_through(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "m.yaml").write_text("old\n")
    (tmp_path / "m.yaml").symlink_to(tmp_path / "real" / "m.yaml")
    atomic.write_text(tmp_path / "m.yaml", "new\n", "out")
    assert (tmp_path / "m.yaml").is_symlink() and (tmp_path / "real" / "m.yaml").read_text() == "new\n"
    assert sorted(p.name for p in (tmp_path / "real").iterdir()) == ["m.yaml"]

"""Files written for the user: a write that fails is one line naming the option and the path,
exit status 2, no traceback; a write that fails midway leaves the target as it was and no
temporary file beside it (storage/atomic.py).  The analyses are replayed (conftest.replay_store)."""
from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

from autotune.errors import InputError
from autotune.storage import atomic

from .conftest import run_cli

ENOSPC = os.strerror(errno.ENOSPC)
SCALE = ["scale", "--ivp", "heat2d", "--n", "35808256", "--nodes", "1:8"]


class _FillingFile:
    """A text file on a disk with room for `room` more characters: what fits lands, then ENOSPC."""

    def __init__(self, f, room: list[int]):
        self._f, self._room = f, room

    def write(self, text: str) -> int:
        fits = text[:self._room[0]]
        self._f.write(fits)
        self._f.flush()
        self._room[0] -= len(fits)
        if len(fits) < len(text):
            raise OSError(errno.ENOSPC, ENOSPC)
        return len(text)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._f.close()


@pytest.fixture()
def disk_fills(monkeypatch):
    """disk_fills(room): from now on the writers of storage/atomic.py have `room` characters left."""
    def fill(room: int) -> None:
        left = [room]
        monkeypatch.setattr(atomic, "open", lambda path, mode="r": _FillingFile(open(path, mode), left),
                            raising=False)
    return fill


def assert_one_line(code, out, err, needle):
    assert code == 2 and out == "" and "Traceback" not in err, err
    assert len(err.splitlines()) == 1 and err.startswith("autotune: error: "), err
    assert needle in err, err


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


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs the proc file system")
def test_a_plot_that_cannot_be_written_is_one_line(replay_store, capsys, tmp_path):
    """Root passes the check of the folder's permissions before the work; the write itself fails."""
    code, out, err = run_cli(capsys, *SCALE, "--store", replay_store, "--plot", "/proc/x.png")
    assert_one_line(code, out, err, "--plot /proc/x.png: ")
    # the writer itself, whatever checked the path before: a file where its folder should be
    import autotune
    from autotune.report.render import plot
    (tmp_path / "F").write_text("a file\n")
    res = autotune.scale("heat2d", n=35808256, nodes="1:8", store=replay_store)
    with pytest.raises(InputError) as e:
        plot(res, tmp_path / "F" / "x.png")
    assert e.value.field == "plot" and e.value.message.startswith(f"{tmp_path / 'F' / 'x.png'}: cannot write (")
    assert only_files(tmp_path) == {"F": "a file\n"}


def test_a_plot_that_fails_midway_leaves_the_old_one(replay_store, capsys, tmp_path, monkeypatch):
    import matplotlib.figure
    target = tmp_path / "s.png"
    target.write_bytes(b"the old figure")
    real = matplotlib.figure.Figure.savefig

    def half_then_full(self, fname, **kw):
        Path(fname).write_bytes(b"\x89PNG\r\n half a figure")
        raise OSError(errno.ENOSPC, ENOSPC)

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", half_then_full)
    code, out, err = run_cli(capsys, *SCALE, "--store", replay_store, "--plot", target)
    assert_one_line(code, out, err, f"--plot {target}: cannot write ({ENOSPC})")
    assert only_files(tmp_path) == {"s.png": "the old figure"}

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", real)
    code, out, err = run_cli(capsys, *SCALE, "--store", replay_store, "--plot", target, "--format", "json")
    assert code == 0, err
    assert target.read_bytes().startswith(b"\x89PNG\r\n") and [p.name for p in tmp_path.iterdir()] == ["s.png"]


PLAN = "scenarios:\n  - {ivp: heat2d, n: 1440000, nodes: 2, threads: 1, top: 2}\n"


def test_a_plan_that_fails_midway_leaves_the_old_one(replay_store, capsys, tmp_path, disk_fills):
    (tmp_path / "s.yaml").write_text(PLAN)
    target = tmp_path / "plan.json"
    target.write_text('{"the": "old plan"}\n')
    disk_fills(40)
    code, out, err = run_cli(capsys, "plan", tmp_path / "s.yaml", "--out", target, "--store", replay_store)
    assert_one_line(code, out, err, f"--out {target}: cannot write ({ENOSPC})")
    assert only_files(tmp_path) == {"plan.json": '{"the": "old plan"}\n', "s.yaml": PLAN}

    disk_fills(10 ** 9)
    code, out, err = run_cli(capsys, "plan", tmp_path / "s.yaml", "--out", target, "--store", replay_store)
    assert code == 0, err
    assert len(json.loads(target.read_text())["scenarios"][0]["variants"]) == 2
    assert sorted(only_files(tmp_path)) == ["plan.json", "s.yaml"]


def test_a_machine_file_that_fails_midway_leaves_the_old_one(capsys, tmp_path, disk_fills):
    src = next((Path(__file__).parent / "data" / "kerncraft-machines").glob("*A64FX*.yml"))
    target = tmp_path / "fx.yaml"
    target.write_text("# the old machine file\n")
    target.chmod(0o640)
    argv = ["calibrate", "--from-kerncraft", src, "--name", "fx", "--out", target]
    disk_fills(100)
    assert_one_line(*run_cli(capsys, *argv), f"--out {target}: cannot write ({ENOSPC})")
    assert only_files(tmp_path) == {"fx.yaml": "# the old machine file\n"}

    disk_fills(10 ** 9)
    code, _, err = run_cli(capsys, *argv)
    assert code == 0, err
    assert "from the kerncraft machine file" in target.read_text() and sorted(only_files(tmp_path)) == ["fx.yaml"]
    assert target.stat().st_mode & 0o777 == 0o640       # an edited file keeps its permissions


def test_generated_files_are_each_whole(capsys, tmp_path, disk_fills):
    """A failure midway through the folder: the files written before it are whole, the one it
    failed on is not there, the manifest (written last) neither."""
    full, cut = tmp_path / "full", tmp_path / "cut"
    assert run_cli(capsys, "generate", "--ivp", "wave1d", "--out", full)[0] == 0
    whole = only_files(full)
    disk_fills(sum(map(len, list(whole.values())[:3])) + 10)
    code, out, err = run_cli(capsys, "generate", "--ivp", "wave1d", "--out", cut)
    assert_one_line(code, out, err, f"--out {cut}")
    assert f": cannot write ({ENOSPC})" in err
    written = only_files(cut)
    assert written and "variants.json" not in written and len(written) < len(whole)
    assert all(whole[name] == text for name, text in written.items())

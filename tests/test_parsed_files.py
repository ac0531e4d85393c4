"""specs.parsedfiles: a data file's parse is kept between commands, keyed by its text, so an
everyday command imports no YAML parser; an edited file is parsed again; a parse that cannot be
kept, or a folder that cannot be written, changes nothing but the time."""
import datetime
import subprocess
import sys

from autotune.specs import parsedfiles
from autotune.specs.loading import parse_yaml
from autotune.specs.machine import load_machine


def test_a_parse_is_kept_by_text_and_an_edited_file_is_parsed_again(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTOTUNE_PARSED", str(tmp_path / "parsed"))
    text = "a: 5e-07\nb: !!omap [x: 1, y: 2]\nc: [1, 2.5, true, null]\n"
    first = parse_yaml(text, "some/where/mine.yaml")
    assert first == {"a": 5e-07, "b": {"x": 1, "y": 2}, "c": [1, 2.5, True, None]}
    kept = list((tmp_path / "parsed").glob("mine-*.marshal"))
    assert len(kept) == 1 and parsedfiles.kept(text, "mine.yaml") == first
    again = parse_yaml(text, "elsewhere/mine.yaml")
    assert again == first and again is not first
    assert list(again["b"]) == ["x", "y"]                     # the order of a map is kept
    edited = text.replace("5e-07", "6e-07")
    assert parse_yaml(edited, "some/where/mine.yaml")["a"] == 6e-07
    assert [p for p in (tmp_path / "parsed").glob("mine-*.marshal")] != kept  # the earlier parse gave way
    assert len(list((tmp_path / "parsed").glob("mine-*.marshal"))) == 1
    parse_yaml("k: 1\n", "mine-too.yaml")                     # a longer name is no earlier parse of mine
    parse_yaml(text, "mine.yaml")
    assert {p.name.split("-")[1] == "too" for p in (tmp_path / "parsed").iterdir()} == {True, False}


def test_what_cannot_be_kept_is_parsed_each_time(tmp_path, monkeypatch):
    blocked = tmp_path / "file"
    blocked.write_text("")
    monkeypatch.setenv("AUTOTUNE_PARSED", str(blocked / "parsed"))   # no folder can be made there
    assert parse_yaml("a: 1\n", "m.yaml") == {"a": 1}
    monkeypatch.setenv("AUTOTUNE_PARSED", str(tmp_path / "parsed"))
    assert parse_yaml("when: 2026-11-27\n", "dated.yaml") == {"when": datetime.date(2026, 11, 27)}
    assert not list((tmp_path / "parsed").glob("dated-*"))           # marshal holds no dates


def test_a_machine_file_read_again_imports_no_yaml(tmp_path):
    script = ("import sys; from autotune.specs.machine import load_machine; m = load_machine('haswell-ep-e5-2630v3'); "
              "print(m.name, 'yaml' in sys.modules)")
    env = {"AUTOTUNE_PARSED": str(tmp_path), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    runs = [subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)
            for _ in range(2)]
    assert [r.stdout.split() for r in runs] == [["haswell-ep-e5-2630v3", "True"], ["haswell-ep-e5-2630v3", "False"]]
    assert load_machine("haswell-ep-e5-2630v3").name == "haswell-ep-e5-2630v3"

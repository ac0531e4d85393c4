"""specs.parsedfiles: a data file's parse is kept between commands, keyed by its path and its
text, so an everyday command imports no YAML parser; an edited file is parsed again and its
earlier parse removed; a parse that cannot be kept, or a folder that cannot be found or written,
changes nothing but the time."""
import datetime
import hashlib
import inspect
import math
import subprocess
import sys

from autotune.specs import loading, parsedfiles
from autotune.specs.loading import parse_yaml
from autotune.specs.machine import load_machine

# the loader's rules as they were when parsedfiles.FORMAT was last set: a change of the rules
# fails here until FORMAT changes with them (and this digest is taken again)
RULES = {b"autotune-yaml-1": "36c7922b07f77ef0"}


def test_the_kept_format_names_the_loaders_rules():
    rules = hashlib.blake2b(inspect.getsource(loading._loader).encode(), digest_size=8).hexdigest()
    assert RULES.get(parsedfiles.FORMAT) == rules, \
        f"specs.loading._loader changed: change parsedfiles.FORMAT, and RULES here to {{FORMAT: {rules!r}}}"


def _kept_files(folder):
    return sorted(p.name for p in folder.iterdir())


def test_a_parse_is_kept_by_path_and_text_and_an_edited_file_is_parsed_again(tmp_path, monkeypatch):
    kept = tmp_path / "parsed"
    monkeypatch.setenv("AUTOTUNE_PARSED", str(kept))
    text = ("z: 5e-07\nb: !!omap [y: 1, x: 2]\nc: [1, 2.5, true, null, -0.0, .nan, 123456789012345678901234567890]\n"
            "d: &shared {k: 1}\ne: *shared\nf: !!set {p, q}\ng: !!binary aGk=\n")
    first = parse_yaml(text, "some/where/mine.yaml")
    assert list(first) == ["z", "b", "c", "d", "e", "f", "g"] and list(first["b"]) == ["y", "x"]
    assert first["z"] == 5e-07 and first["f"] == {"p", "q"} and first["g"] == b"hi"
    assert first["c"][:4] == [1, 2.5, True, None] and first["c"][6] == 123456789012345678901234567890
    assert math.copysign(1.0, first["c"][4]) == -1.0 and math.isnan(first["c"][5])
    assert len(_kept_files(kept)) == 1 and _kept_files(kept)[0].startswith("mine-")
    again = parsedfiles.kept(text, "some/where/mine.yaml")
    assert again is not first and list(again) == list(first) and list(again["b"]) == ["y", "x"]
    assert again["e"] is again["d"] and again["c"][6] == first["c"][6] and math.copysign(1.0, again["c"][4]) == -1.0
    assert parse_yaml(text, "some/where/mine.yaml").keys() == first.keys()

    edited = text.replace("5e-07", "6e-07")
    assert parse_yaml(edited, "some/where/mine.yaml")["z"] == 6e-07
    assert len(_kept_files(kept)) == 1                         # the earlier parse gave way
    assert parsedfiles.kept(text, "some/where/mine.yaml") is None
    other = parse_yaml(text, "elsewhere/mine.yaml")            # a file of the same name elsewhere
    assert other["z"] == 5e-07 and len(_kept_files(kept)) == 2
    assert parsedfiles.kept(edited, "some/where/mine.yaml")["z"] == 6e-07   # each keeps its own
    parse_yaml("k: 1\n", "some/where/mine-too.yaml")           # a longer name is no earlier parse of mine
    parse_yaml(edited.replace("6e-07", "7e-07"), "some/where/mine.yaml")
    assert len(_kept_files(kept)) == 3 and parsedfiles.kept("k: 1\n", "some/where/mine-too.yaml") == {"k": 1}


def test_what_cannot_be_kept_is_parsed_each_time(tmp_path, monkeypatch):
    blocked = tmp_path / "file"
    blocked.write_text("")
    monkeypatch.setenv("AUTOTUNE_PARSED", str(blocked / "parsed"))   # no folder can be made there
    assert parse_yaml("a: 1\n", "m.yaml") == {"a": 1}
    monkeypatch.delenv("AUTOTUNE_PARSED")
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.delenv("HOME", raising=False)
    monkeypatch.setattr("pathlib.Path.home", lambda: (_ for _ in ()).throw(RuntimeError("no home")))
    assert parse_yaml("a: 2\n", "m.yaml") == {"a": 2}                # no folder can be found
    monkeypatch.setenv("AUTOTUNE_PARSED", str(tmp_path / "parsed"))
    assert parse_yaml("when: 2026-11-27\n", "dated.yaml") == {"when": datetime.date(2026, 11, 27)}
    assert not (tmp_path / "parsed").exists() or not _kept_files(tmp_path / "parsed")   # marshal holds no dates


def test_a_machine_file_read_again_imports_no_yaml(tmp_path):
    script = ("import sys; from autotune.specs.machine import load_machine; m = load_machine('haswell-ep-e5-2630v3'); "
              "print(m.name, 'yaml' in sys.modules)")
    env = {"AUTOTUNE_PARSED": str(tmp_path), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    runs = [subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True, cwd=tmp_path)
            for _ in range(2)]
    assert [r.stdout.split() for r in runs] == [["haswell-ep-e5-2630v3", "True"], ["haswell-ep-e5-2630v3", "False"]]
    assert load_machine("haswell-ep-e5-2630v3").name == "haswell-ep-e5-2630v3"

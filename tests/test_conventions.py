"""What users of other tools expect of a command line and its files: --version and a help for
users, every report as CSV, no value read as "not given", a validator that checks what its
schemas say, machine-file keys that nothing reads named, guarded kerncraft patches, and a store
outside the cache folder (docs/usage.md)."""
import csv
import io
import json
import sqlite3
from pathlib import Path

import pytest

from autotune.errors import InputError, InputWarning
from autotune.specs.machine import kerncraft_file_error, load_machine
from autotune.specs.schema import check_keywords, first_error

from .conftest import run_cli


def run_exits(capsys, *argv):
    """--help and --version end in SystemExit (argparse's way): (its code, stdout, stderr)."""
    with pytest.raises(SystemExit) as e:
        run_cli(capsys, *argv)
    out, err = capsys.readouterr()
    return e.value.code, out, err


def test_version_and_the_top_level_help(capsys):
    from importlib import metadata
    code, out, err = run_exits(capsys, "--version")
    assert code == 0 and err == ""
    assert out.startswith(f"autotune {metadata.version('autotune')} (kerncraft {metadata.version('kerncraft')}, "
                          f"osaca {metadata.version('osaca')}, Python ")
    code, out, _ = run_exits(capsys, "--help")
    assert code == 0 and "main(argv)" not in out and "callable in-process" not in out
    assert "Runge-Kutta" in out and "autotune rank --ivp heat2d --nodes 8" in out and "--version" in out


def test_help_texts_say_what_the_code_does(capsys):
    from autotune.request.defaults import TABLE_ROWS
    code, out, _ = run_exits(capsys, "rank", "--help")
    assert code == 0 and f"up to {TABLE_ROWS} rows" in " ".join(out.split())
    code, out, _ = run_exits(capsys, "explain", "--help")
    assert code == 0 and "p.g." not in out and "e.g. lc=jil,comm=neighbour" in " ".join(out.split())


@pytest.mark.parametrize("argv,option", [
    (["generate", "--ivp", "heat2d", "--online", "0"], "--online 0: expected K from 1 to 8"),
    (["generate", "--ivp", "heat2d", "--within", "0"], "--within 0.0: only with --online"),
    (["rank", "--ivp", "heat2d", "--machine", ""], "--machine: expected a value, got ''"),
    (["rank", "--ivp", "heat2d", "--method", ""], "--method: expected a value, got ''"),
    (["rank", "--ivp", "heat2d", "--comm", " "], "--comm: expected a value, got ' '"),
    (["rank", "--ivp", "heat2d", "--variant-filter", ""], "--variant-filter: expected a value, got ''"),
    (["tune", "--ivp", "heat2d", "--variants", ""], "--variants: expected a value, got ''"),
    (["tune", "--ivp", "heat2d", "--flags", ""], "--flags: expected a value, got ''"),
    (["tune", "--ivp", "heat2d", "--launcher", ""], "--launcher: expected a value, got ''"),
    (["list", "variants", "--ivp", ""], "--ivp: expected a value, got ''"),
    (["generate", "--ivp", "heat2d", "--out", ""], "argument --out: expected a path, got ''"),
    (["tune", "--ivp", "heat2d", "--recheck", "0"], "--recheck 0: only with --online"),
    (["tune", "--ivp", "heat2d", "--online", "--format", "t4"], "--format: t4 is a tune of variants (not with "
                                                                 "--ingest, --plan or --online)"),
])
def test_zero_and_empty_are_values_not_absence(capsys, tmp_path, argv, option):
    """`generate --online 0` wrote a solver of the default pre-selection, `--machine ''` ranked on
    the default machine: a value given is read as given, and refused where it cannot be."""
    argv = [*argv, "--store", tmp_path / "s.sqlite"] if argv[0] != "list" else argv
    try:
        code, out, err = run_cli(capsys, *argv)
    except SystemExit as e:      # argparse's own checks (a path's type) end so
        code, (out, err) = e.code, capsys.readouterr()
    assert code == 2 and out == "" and err == f"autotune: error: {option}\n", err
    assert not (tmp_path / "variants-out").exists()


def test_every_report_has_a_csv_form(capsys, tmp_path, replay_store):
    code, out, _ = run_cli(capsys, "list", "variants", "--ivp", "heat2d", "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert code == 0 and {r["dimension"] for r in rows} >= {"lc", "comm", "pipe", "traversal"}
    assert [r["value"] for r in rows if r["dimension"] == "traversal"] == ["rows", "strips"]
    code, out, _ = run_cli(capsys, "list", "machines", "--format", "csv")
    assert code == 0 and out.splitlines()[0] == "name,description" and "haswell-ep-e5-2630v3," in out
    code, out, _ = run_cli(capsys, "generate", "--ivp", "wave1d", "--n", "1000", "--out", tmp_path / "g",
                           "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    manifest = json.loads((tmp_path / "g" / "variants.json").read_text())
    assert code == 0 and [r["name"] for r in rows] == list(manifest["variants"])
    assert {r["ivp"] for r in rows} == {"wave1d"}
    (tmp_path / "s.yaml").write_text("scenarios:\n  - {ivp: heat2d, nodes: 8, top: 2}\n")
    code, out, _ = run_cli(capsys, "plan", tmp_path / "s.yaml", "--out", tmp_path / "p.json", "--store", replay_store,
                           "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    planned = json.loads((tmp_path / "p.json").read_text())["scenarios"][0]["variants"]
    assert code == 0 and [r["variant"] for r in rows] == [v["name"] for v in planned] and len(rows) == 2
    code, out, _ = run_cli(capsys, "plan", tmp_path / "s.yaml", "--out", tmp_path / "p.json", "--store", replay_store,
                           "--format", "json")
    assert code == 0 and list(json.loads(out))[:2] == ["meta", "out"]


def test_the_validator_checks_every_keyword_its_schemas_use():
    from autotune.pipeline.plan import FILE_SCHEMA
    from autotune.specs import ivp, machine_schema, method
    for schema in (ivp.SCHEMA, machine_schema.SCHEMA, method.SCHEMA, FILE_SCHEMA):
        check_keywords(schema)
    with pytest.raises(ValueError, match="'multipleOf' at properties/x is not implemented"):
        check_keywords({"type": "object", "properties": {"x": {"type": "number", "multipleOf": 2}}})
    bounded = {"type": "number", "exclusiveMinimum": 0, "maximum": 1}
    assert first_error(1, bounded) is None and first_error(0.5, bounded) is None
    assert first_error(5.0, bounded) == ((), "expected a number <= 1, got 5.0")
    assert first_error(3, {"type": "integer", "exclusiveMaximum": 3}) == ((), "expected an integer < 3, got 3")


def _machine(tmp_path, edit) -> str:
    text = open(load_machine("haswell-ep-e5-2630v3").path).read()
    p = tmp_path / "m.yaml"
    p.write_text(edit(text))
    return str(p)


def test_machine_file_keys_nothing_reads(tmp_path, capsys):
    """A field of `cluster` at the top level is refused (a `learned:` there would predict without
    the factors); any other key nothing reads is a warning naming it; tolerance's maximum holds."""
    path = _machine(tmp_path, lambda t: t + "learned:\n  factors: {}\n")
    with pytest.raises(InputError, match=r"field 'learned': belongs under 'cluster' \(cluster.learned\)"):
        load_machine(path)
    path = _machine(tmp_path, lambda t: "colck: 2.4 GHz\n" + t)
    with pytest.warns(InputWarning, match=r"m.yaml: field 'colck': unknown, nothing reads it"):
        load_machine(path)
    code, _, err = run_cli(capsys, "list", "ivps")          # no machine: nothing to say
    assert code == 0 and err == ""
    path = _machine(tmp_path, lambda t: t + "in-core measured: {cpu: x, when: always, tolerance: 5.0}\n")
    with pytest.raises(InputError, match=r"field 'in-core measured.tolerance': expected a number <= 1, got 5.0"):
        load_machine(path)


def test_an_unknown_key_is_one_warning_line_on_the_command_line(tmp_path, capsys):
    path = _machine(tmp_path, lambda t: "colck: 2.4 GHz\n" + t)
    code, _, err = run_cli(capsys, "explain", "--ivp", "heat2d", "--machine", path, "--variant", "nonsense",
                           "--store", tmp_path / "s.sqlite")
    lines = err.splitlines()
    assert code == 2 and lines[0] == f"autotune: warning: {path}: field 'colck': unknown, nothing reads it"
    assert lines[1].startswith("autotune: error: --variant 'nonsense': expected") and len(lines) == 2


def test_the_kerncraft_version_a_machine_file_was_written_for(tmp_path):
    """kerncraft reads machine files from 0.8.3.dev0 to its own version (distutils' order: a
    .dev0 after its release); autotune says so at loading (too old) and before any analysis (newer
    than the installed kerncraft), naming the field."""
    from kerncraft.machinemodel import MIN_SUPPORTED_VERSION

    from autotune.specs.machine_schema import KERNCRAFT_FILE_MIN
    assert KERNCRAFT_FILE_MIN == MIN_SUPPORTED_VERSION
    old = _machine(tmp_path, lambda t: t.replace("kerncraft version: 0.8.11.dev0", "kerncraft version: 0.8.2"))
    with pytest.raises(InputError, match=r"field 'kerncraft version': written for kerncraft 0.8.2; kerncraft "
                                         r"reads files from version 0.8.3.dev0 on"):
        load_machine(old)
    gone = _machine(tmp_path, lambda t: t.replace("kerncraft version: 0.8.11.dev0\n", ""))
    with pytest.raises(InputError, match=r"field 'kerncraft version': required field is missing"):
        load_machine(gone)
    m = load_machine(_machine(tmp_path, lambda t: t.replace("0.8.11.dev0", "0.8.18.dev0")))
    assert kerncraft_file_error(m, "0.8.18") is not None          # LooseVersion: 0.8.18.dev0 > 0.8.18
    assert kerncraft_file_error(m, "0.9.0") is None
    assert "newer than the installed kerncraft 0.8.17" in kerncraft_file_error(m, "0.8.17")
    assert kerncraft_file_error(load_machine("haswell-ep-e5-2630v3"), "0.8.18") is None


def test_a_kerncraft_file_newer_than_kerncraft_stops_before_any_analysis(tmp_path, capsys):
    path = _machine(tmp_path, lambda t: t.replace("kerncraft version: 0.8.11.dev0", "kerncraft version: 9.0.0"))
    code, out, err = run_cli(capsys, "rank", "--ivp", "heat2d", "--machine", path, "--store", tmp_path / "s.sqlite")
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert "field 'kerncraft version': written for kerncraft 9.0.0, newer than the installed kerncraft" in err


def test_every_patch_target_exists_and_a_missing_one_is_named():
    from autotune.tools.kerncraft_patches import missing_targets
    assert missing_targets() is None
    line = missing_targets({"kerncraft.cacheprediction": ("LayerConditionPredictor.no_such_method",)})
    assert line.startswith("kerncraft.cacheprediction.LayerConditionPredictor.no_such_method is gone, which "
                           "autotune patches (kerncraft ")
    assert "osaca" in line and "pyproject.toml" in line


def test_the_patches_cover_what_the_backend_replaces():
    """Each module global or class attribute the workers replace is a declared target, so that a
    kerncraft that renamed it fails the analyses instead of leaving the patch undone."""
    from autotune.tools.kerncraft_patches import TARGETS
    assert "parse_asm" in TARGETS["kerncraft.incore_model"]
    assert "MachineModel._get_cached" in TARGETS["osaca.semantics.hw_model"]
    assert "LayerConditionPredictor" in TARGETS["kerncraft.models.ecm"]


def _store_with_a_run(path):
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("CREATE TABLE t (x)")
    db.execute("INSERT INTO t VALUES (42)")
    db.commit()
    return db        # left open: the row may sit in the write-ahead log


def test_the_store_moves_out_of_the_cache_folder_once(tmp_path, monkeypatch):
    from autotune.storage.paths import default_store_path
    monkeypatch.delenv("AUTOTUNE_STORE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    old, new = tmp_path / "cache" / "autotune" / "store.sqlite", tmp_path / "data" / "autotune" / "store.sqlite"
    db = _store_with_a_run(old)
    said = []
    assert default_store_path(said.append) == new
    db.close()
    assert said == [f"moved the store from {old} to {new} (it keeps measured runs: not a cache); the old one "
                    f"is kept as store.sqlite.moved"]
    assert sqlite3.connect(new).execute("SELECT x FROM t").fetchall() == [(42,)]
    assert not old.exists() and old.with_name("store.sqlite.moved").exists()       # kept, out of the way
    assert default_store_path(said.append) == new and len(said) == 1      # once
    monkeypatch.setenv("AUTOTUNE_STORE", str(tmp_path / "mine.sqlite"))
    assert default_store_path(said.append) == tmp_path / "mine.sqlite" and len(said) == 1
    # a second command that found the old store too, and takes the lock after the first: it moves nothing
    from autotune.storage.paths import move_store
    _store_with_a_run(old).close()
    assert move_store(old, new) == (True, None) and old.exists()
    assert sqlite3.connect(new).execute("SELECT count(*) FROM t").fetchall() == [(1,)]


def test_a_store_that_cannot_be_moved_stays_whole(tmp_path, monkeypatch):
    from autotune.storage.paths import default_store_path
    monkeypatch.delenv("AUTOTUNE_STORE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    (tmp_path / "data").write_text("a file where the data folder should be")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    old = tmp_path / "cache" / "autotune" / "store.sqlite"
    _store_with_a_run(old).close()
    said = []
    assert default_store_path(said.append) == old
    assert said[0].startswith(f"the store stays at {old}: it could not be moved to ")
    assert sqlite3.connect(old).execute("SELECT x FROM t").fetchall() == [(42,)]
    assert [p.name for p in (tmp_path / "cache" / "autotune").iterdir() if "moving" in p.name] == []


def test_every_row_carries_its_configuration(replay_store, capsys):
    """One column per dimension in the rank, sweep and scale CSVs and frames (values at their
    defaults, which names leave out, included), and a configuration object per variant in JSON:
    pandas groups by a dimension without parsing names."""
    import pandas as pd

    import autotune
    from autotune.results.frames import DIMENSION_KEYS, configuration
    head = ["--ivp", "heat2d", "--nodes", "2", "--threads", "1", "--n", "1000000", "--store", replay_store]
    code, out, _ = run_cli(capsys, "rank", *head, "--format", "csv")
    table = pd.read_csv(io.StringIO(out), keep_default_na=False)
    assert code == 0 and list(DIMENSION_KEYS) == list(table.columns[8:8 + len(DIMENSION_KEYS)])
    assert set(table["pipe"]) == {"none", "wavefront"} and set(table["traversal"]) <= {"rows", "strips"}
    best = table.groupby("pipe")["predicted_s"].min()
    assert best.index.tolist() == ["none", "wavefront"]
    for _, row in table.iterrows():
        assert {k: row[k] for k in DIMENSION_KEYS} == configuration(row["name"])
    code, out, _ = run_cli(capsys, "rank", *head, "--format", "json")
    variants = json.loads(out)["variants"]
    assert all(v["configuration"] == configuration(v["name"]) for v in variants)
    frame = autotune.rank("heat2d", nodes=2, threads=1, n=1000000, store=replay_store).to_frame()
    assert list(frame.columns) == list(table.columns) and frame["fuse"].notna().all()
    code, out, _ = run_cli(capsys, "rank", *head[:4], "--n", "1e6,4e6", "--threads", "1", "--store", replay_store,
                           "--format", "csv")
    sweep = pd.read_csv(io.StringIO(out), keep_default_na=False)
    assert code == 0 and set(DIMENSION_KEYS) <= set(sweep.columns) and len(sweep) == 2 * len(table)
    assert all({k: r[k] for k in DIMENSION_KEYS} == configuration(r["name"]) for _, r in sweep.iterrows())
    code, out, _ = run_cli(capsys, "scale", "--ivp", "heat2d", "--n", "1000000", "--nodes", "1,2", "--threads", "1",
                           "--store", replay_store, "--format", "csv")
    scale = pd.read_csv(io.StringIO(out), keep_default_na=False)
    assert code == 0 and list(scale.columns[1:1 + len(DIMENSION_KEYS)]) == list(DIMENSION_KEYS)


def test_every_json_document_says_what_made_it(replay_store, capsys, tmp_path):
    """meta first: the schema and its version, a UTC time, the versions of autotune, kerncraft,
    OSACA and Python, and the machine file by name and the SHA-256 of its text."""
    import hashlib
    from datetime import datetime, timedelta, timezone
    from importlib import metadata
    machine = load_machine("haswell-ep-e5-2630v3")
    digest = hashlib.sha256(open(machine.path, "rb").read()).hexdigest()
    code, out, _ = run_cli(capsys, "rank", "--ivp", "heat2d", "--nodes", "8", "--format", "json",
                           "--store", replay_store)
    assert code == 0 and out.splitlines()[1].startswith('  "meta": {')
    meta = json.loads(out)["meta"]
    assert meta["schema"] == "autotune/RankResult" and meta["schema_version"] == 1
    assert meta["machine"] == {"name": machine.name, "sha256": digest}
    assert meta["versions"]["kerncraft"] == metadata.version("kerncraft")
    assert meta["versions"]["osaca"] == metadata.version("osaca")
    made = datetime.fromisoformat(meta["created"])
    assert made.utcoffset() == timedelta(0) and abs(datetime.now(timezone.utc) - made) < timedelta(minutes=5)
    code, out, _ = run_cli(capsys, "rank", "--ivp", "heat2d", "--nodes", "1,2", "--format", "json",
                           "--store", replay_store)
    assert code == 0 and json.loads(out)["meta"]["machine"]["sha256"] == digest           # a sweep's too
    code, out, _ = run_cli(capsys, "generate", "--ivp", "wave1d", "--n", "1000", "--out", tmp_path / "g",
                           "--format", "json")
    assert code == 0 and json.loads(out)["meta"]["schema"] == "autotune/GenerateResult"


def test_the_schema_files_are_json_schema_and_accept_the_shipped_files(capsys):
    """The shipped JSON Schema files are what `autotune schema NAME` prints and what the code's
    schemas say (kept equal), valid JSON Schema (the reference validator's meta-check), and
    accept every shipped data file (read as autotune reads them: kerncraft's !!omap as maps)."""
    from importlib import resources

    import jsonschema

    from autotune.cli.main import build_parser
    from autotune.pipeline.schemas import SCHEMAS, schema_text
    from autotune.specs.loading import read_yaml
    from autotune.specs.shipped import shipped_dir
    folder = resources.files("autotune.data.schemas")
    sub = next(a for a in build_parser(complete=True)._actions if a.dest == "command").choices
    assert set(next(a for a in sub["schema"]._actions if a.dest == "name").choices) == set(SCHEMAS)
    docs = {}
    for name in SCHEMAS:
        text = (folder / f"{name}.schema.json").read_text()
        assert text == schema_text(name), f"autotune/data/schemas/{name}.schema.json: write it again"
        code, out, _ = run_cli(capsys, "schema", name)
        assert code == 0 and out == text
        docs[name] = json.loads(text)
        jsonschema.Draft202012Validator.check_schema(docs[name])
    for kind, files in (("machine", shipped_dir("machines").glob("*.yaml")), ("ivp", shipped_dir("ivps").glob("*.yaml")),
                        ("method", resources.files("autotune.data.methods").iterdir())):
        for f in files:
            if str(f).endswith(".yaml"):
                jsonschema.validate(read_yaml(Path(str(f))), docs[kind])
    jsonschema.validate({"scenarios": [{"ivp": "heat2d", "nodes": 8, "top": 3}]}, docs["plan"])
    with pytest.raises(jsonschema.ValidationError):        # what our validator refuses, theirs too
        jsonschema.validate({"scenarios": [{"ivp": "heat2d", "top": 0}]}, docs["plan"])
    machine = read_yaml(Path(load_machine("haswell-ep-e5-2630v3").path))
    for bad in ({"clock": "2.4GHz"}, {"clock": -2.0}, {"sockets": 0}, {"cluster": dict(machine["cluster"], nodes=0)}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(dict(machine, **bad), docs["machine"])


@pytest.fixture(scope="session")
def t4_schema(tmp_path_factory):
    """Kernel Tuner's published T4 results schema, from its package on the index (only the file:
    nothing of Kernel Tuner is imported)."""
    import subprocess
    import sys
    import zipfile
    folder = tmp_path_factory.mktemp("kernel_tuner")
    done = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(folder),
                           "kernel_tuner==1.5.0"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    wheel = next(folder.glob("kernel_tuner-*.whl"))
    with zipfile.ZipFile(wheel) as z:
        return json.loads(z.read("kernel_tuner/schema/T4/1.0.0/results-schema.json"))


def test_tune_as_kernel_tuner_t4(own_replay_store, capsys, t4_schema, mpiexec, compiler, private_builds):
    """tune --format t4 is valid against Kernel Tuner's T4 results schema: a result per variant,
    its configuration the variant's dimensions, its runtimes its repetitions; a variant that did
    not build is marked so (invalidity compile, correctness 0)."""
    import jsonschema

    from autotune.results.frames import configuration
    head = ["tune", "--ivp", "heat2d", "--nodes", "1", "--threads", "1", "--n", 200 ** 2, "--steps", "3",
            "--warmup", "0", "--reps", "2", "--store", own_replay_store]
    code, out, err = run_cli(capsys, *head, "--top", "2", "--format", "t4")
    assert code == 0, err
    doc = json.loads(out)
    jsonschema.validate(doc, t4_schema)
    assert doc["schema_version"] == "1.0.0" and len(doc["results"]) >= 2
    code, out, _ = run_cli(capsys, *head, "--top", "2", "--replay", "--format", "json")
    runs = {v["name"]: v for v in json.loads(out)["variants"]}
    for r in doc["results"]:
        name = next(n for n in runs if configuration(n) == r["configuration"])
        assert r["times"]["runtimes"] == runs[name]["runs_s"] and len(r["times"]["runtimes"]) == 2
        assert r["invalidity"] == "correct" and r["correctness"] == 1
        assert r["measurements"][0] == {"name": "time", "value": runs[name]["measured_s"], "unit": "s"}
    code, out, _ = run_cli(capsys, *head, "--variants", "lc=jli,comm=allgather", "--flags", "-O3 -fno-such-flag",
                           "--format", "t4")
    doc = json.loads(out)
    jsonschema.validate(doc, t4_schema)
    assert code == 1 and [(r["invalidity"], r["correctness"]) for r in doc["results"]] == [("compile", 0)]


def test_every_environment_variable_is_in_the_table():
    """Each AUTOTUNE_* name the package, its C templates or the tests read is documented in
    docs/usage.md's table of environment variables (or its line on compile-time switches)."""
    import re
    root = Path(__file__).parents[1]
    found = set()
    for folder, pattern in (("autotune", "*.py"), ("variants", "*.j2"), ("tests", "*.py"), ("autotune", "*.c")):
        for f in (root / folder).rglob(pattern):
            if f.name != "test_conventions.py":
                found |= set(re.findall(r"\bAUTOTUNE_[A-Z_]+[A-Z]\b", f.read_text()))
    text = (root / "docs" / "usage.md").read_text()
    section = text.split("### Environment variables", 1)[1].split("\n### ", 1)[0]
    assert found and sorted(v for v in found if v not in section) == []

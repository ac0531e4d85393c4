"""Porting to a new cluster: kerncraft's machine files taken in, this host described (its port
model borrowed, or given by file, where the installed OSACA has none), analyses and builds for
the same instruction set."""
from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import pytest

from autotune.progress import Callbacks, SILENT
from autotune.errors import InputError
from autotune.specs.cpus import CpuId
from autotune.specs.machine import load_machine

from .conftest import run_cli, uarch_args

KERNCRAFT_FILES = sorted((Path(__file__).parent / "data" / "kerncraft-machines").glob("*.yml"))


def _kerncraft_loads(path: Path) -> bool:
    from kerncraft.machinemodel import MachineModel
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            MachineModel(str(path))
            return True
        except Exception:
            return False


def test_a_kerncraft_file_is_refused_naming_the_command(capsys):
    path = KERNCRAFT_FILES[0]
    code, _, err = run_cli(capsys, "rank", "--ivp", "heat2d", "--nodes", "2", "--machine", str(path))
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "field 'cluster': required field is missing" in err
    assert f"autotune calibrate --from-kerncraft {path} --name NAME --nodes N" in err


@pytest.mark.kerncraft     # kerncraft's machine model reads each file (no analyses)
@pytest.mark.parametrize("path", KERNCRAFT_FILES, ids=[p.stem for p in KERNCRAFT_FILES])
def test_every_kerncraft_example_becomes_a_cluster_machine(path, tmp_path, capsys):
    assert _kerncraft_loads(path)   # all of kerncraft's own examples load in kerncraft
    target = tmp_path / "m.yaml"
    code, out, err = run_cli(capsys, "calibrate", "--from-kerncraft", str(path), "--name", "imported",
                             "--nodes", "16", "--out", str(target), "--format", "json")
    assert code == 0, err
    res = json.loads(out)
    m = load_machine(str(target))
    assert m.nodes == 16 and res["nodes"] == 16 and m.name == "m" and res["cores"] >= m.cores >= 1
    assert m.network["model"] == "datasheet" and "assumed" in m.network["provenance"]
    assert _kerncraft_loads(target)  # and kerncraft still reads what we wrote
    text = target.read_text()
    assert f"from the kerncraft machine file {path.name}" in text
    if "A64FX" in path.name:        # no model name and no FLOPs in the file: named and filled in
        assert m.model_name.startswith("A64FX_qpace4") and m.isa == "aarch64"
        assert "FLOPs per cycle: from autotune's CPU table (a64fx" in text


def test_an_arm_machine_on_this_host_fails_before_any_analysis(tmp_path, capsys):
    from autotune.tools.cpuprobe import this_isa
    if this_isa() == "aarch64":
        pytest.skip("an ARM host analyses ARM machines")
    target = tmp_path / "fx.yaml"
    src = next(p for p in KERNCRAFT_FILES if "A64FX" in p.name)
    assert run_cli(capsys, "calibrate", "--from-kerncraft", str(src), "--name", "fx", "--out", str(target))[0] == 0
    store = tmp_path / "s.sqlite"
    code, _, err = run_cli(capsys, "rank", "--ivp", "heat2d", "--nodes", "4", "--machine", str(target),
                           "--store", str(store))
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "a machine of aarch64 and this host is x86" in err and "--jobs mpi" in err
    assert "kernel analyses missing" in err


def test_import_refuses_what_it_cannot_use(tmp_path, capsys):
    bad = tmp_path / "iaca.yml"
    bad.write_text(KERNCRAFT_FILES[0].read_text().replace("OSACA", "IACA"))
    code, _, err = run_cli(capsys, "calibrate", "--from-kerncraft", str(bad), "--name", "x", "--out",
                           str(tmp_path / "x.yaml"))
    assert code == 2 and "expected an OSACA entry" in err and not (tmp_path / "x.yaml").exists()
    code, _, err = run_cli(capsys, "calibrate", "--from-kerncraft", str(KERNCRAFT_FILES[0]), "--name", "a b")
    assert code == 2 and "--name 'a b': expected a name without spaces" in err
    code, _, err = run_cli(capsys, "calibrate", "--from-kerncraft", str(KERNCRAFT_FILES[0]), "--name", "x",
                           "--nodes", "0", "--out", str(tmp_path / "x.yaml"))
    assert code == 2 and "--nodes 0: expected an integer >= 1" in err


def test_dry_run_identifies_and_writes_nothing(tmp_path, capsys, compiler):
    target = tmp_path / "here.yaml"
    code, out, err = run_cli(capsys, "calibrate", "--node", "--dry-run", "--name", "here", "--nodes", "64",
                             "--out", str(target), *uarch_args())
    assert code == 0, err
    assert not target.exists() and "dry run: nothing measured, nothing written" in out
    assert "microarchitecture:" in out and "cores_per_node" in out and "nodes: 64" in out
    assert "bandwidth" not in err    # nothing measured


def test_the_api_identifies_this_host_or_says_why():
    import autotune
    try:
        got = autotune.identify_cpu()
    except InputError as e:
        assert "--uarch" in str(e)
        return
    assert got.record.osaca and got.uarch == got.key
    assert got.key == got.record.osaca.lower() or got.borrowed_from


def test_tune_refuses_flags_this_cpu_cannot_run(monkeypatch, compiler):
    """A machine file made for an AVX-512 CPU, tune on a host without it: one line before any build;
    through srun from another host, a warning only."""
    from types import SimpleNamespace

    from autotune.pipeline.runners import make_runner, runner_for
    from autotune.request.run import RunOptions
    from autotune.tools import cpuprobe
    if cpuprobe.this_isa() != "x86":
        pytest.skip("x86 flags")
    monkeypatch.setattr(cpuprobe, "host_cpu", lambda: CpuId("x86", "AuthenticAMD", 25, 1, 1, "Milan",
                                                            frozenset("sse4_2 avx avx2 fma".split())))
    machine = load_machine("zen4-epyc-vm-2core")
    plan = RunOptions().plan(0.01, machine.isa_flags)
    assert "-mavx512f" in plan.flags and plan.flags[0] == "-O3" and plan.flags[-1] == "-fopenmp"
    sc = SimpleNamespace(machine=machine)

    def check(plan, say):
        make_runner(runner_for(plan), sc, plan, None, say).check(["lc=jli,comm=neighbour"])
    with pytest.raises(InputError) as e:
        check(plan, SILENT)
    assert "avx512f" in str(e.value) and "Milan" in str(e.value) and "calibrate --node" in str(e.value)
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    said = []
    check(RunOptions(launcher="srun").plan(0.01, machine.isa_flags), Callbacks(say=said.append))
    assert said and said[0].startswith("warning: ")
    check(RunOptions(flags="-O3 -march=haswell").plan(0.01, machine.isa_flags), SILENT)


def test_calibrate_options_that_belong_to_making_a_machine(capsys):
    code, _, err = run_cli(capsys, "calibrate", "--procs", "2")
    assert code == 2 and "--machine" in err and "--node / --from-kerncraft" in err
    code, _, err = run_cli(capsys, "calibrate", "--machine", "zen4-epyc-vm-2core", "--uarch", "zen3")
    assert code == 2 and "--uarch zen3: only with --node or --from-kerncraft" in err
    code, _, err = run_cli(capsys, "calibrate", "--node", "--dry-run", "--name", "x", "--uarch", "pentium4")
    assert code == 2 and "--uarch 'pentium4': unknown microarchitecture" in err


def test_the_api_makes_machines_like_the_command(tmp_path, compiler):
    import autotune
    res = autotune.import_kerncraft(KERNCRAFT_FILES[0], "fx16", nodes=16, out=tmp_path / "fx16.yaml")
    assert res.nodes == 16 and load_machine(str(tmp_path / "fx16.yaml")).nodes == 16
    assert res.to_frame().empty     # nothing measured for an imported file
    uarch = (uarch_args() or [None, None])[1]
    dry = autotune.calibrate_node("here", nodes=4, uarch=uarch, dry_run=True, out=tmp_path / "here.yaml")
    assert dry.dry_run and dry.nodes == 4 and "nodes: 4" in dry.text and not (tmp_path / "here.yaml").exists()
    with pytest.raises(InputError, match="expected a name without spaces"):
        autotune.calibrate_node("a/b", dry_run=True)


def _installed_model(name: str) -> Path:
    import osaca
    return Path(osaca.__file__).parent / "data" / f"{name.lower()}.yml"


def _host_model() -> str:
    """The OSACA model a machine file of this host names (its CPU's, or borrowed)."""
    from autotune.tools.cpuprobe import identify_cpu
    uarch = (uarch_args() or [None, None])[1]
    return identify_cpu(uarch=uarch).record.osaca


def _with_port_model(machine_path: Path, model: Path, out: Path) -> Path:
    """A copy of a machine file whose in-core model is given by the file `model`."""
    import yaml

    from autotune.tools.cpuprobe import PORT_MODEL_FIELD, port_model_entry, read_port_model
    out.write_text(machine_path.read_text() + yaml.safe_dump({PORT_MODEL_FIELD: port_model_entry(read_port_model(model))}))
    return out


def test_port_model_files_that_cannot_serve_are_refused(tmp_path, capsys, compiler):
    from autotune.tools.cpuprobe import this_isa
    not_yaml = tmp_path / "bad.yml"
    not_yaml.write_text("ports: [0, 1\n")
    not_osaca = tmp_path / "machine.yml"
    not_osaca.write_text("model name: x\nclock: 2 GHz\n")
    other_isa = _installed_model("a64fx" if this_isa() == "x86" else "zen4")
    for path, words in [(tmp_path / "none.yml", "cannot read"), (not_yaml, "not valid YAML"),
                        (not_osaca, "not an OSACA architecture file (no arch_code, isa, ports, instruction_forms)"),
                        (other_isa, f"a port model for {'aarch64' if this_isa() == 'x86' else 'x86'}")]:
        code, _, err = run_cli(capsys, "calibrate", "--node", "--dry-run", "--name", "x", "--port-model", path,
                               *uarch_args())
        assert code == 2 and err.strip().splitlines() == [f"autotune: error: --port-model {path}: "
                                                          + err.split(f"{path}: ", 1)[1].strip()], err
        assert words in err, err
    code, _, err = run_cli(capsys, "calibrate", "--machine", "zen4-epyc-vm-2core", "--port-model", not_yaml)
    assert code == 2 and f"--port-model {not_yaml}: only with --node" in err


def test_calibrate_node_records_the_port_model_file(tmp_path, capsys, compiler):
    copy = tmp_path / "model.yml"
    shutil.copy(_installed_model(_host_model()), copy)
    code, out, err = run_cli(capsys, "calibrate", "--node", "--dry-run", "--name", "here", "--port-model", copy,
                             *uarch_args())
    assert code == 0, err
    import hashlib
    digest = hashlib.sha256(copy.read_bytes()).hexdigest()
    assert f"port model file:\n  path: {copy}\n  sha256: {digest}\n" in out
    assert f"OSACA: {_host_model()}\n" in out and "--port-model; sha256" in out
    assert f"port model file {copy}" in err


def test_a_port_model_file_that_changed_is_refused(tmp_path, capsys):
    copy = tmp_path / "zen4.yml"
    shutil.copy(_installed_model("zen4"), copy)
    machine = _with_port_model(Path(load_machine("zen4-epyc-vm-2core").path), copy, tmp_path / "given.yaml")
    from autotune.tools.cpuprobe import incore_key
    digest = incore_key(load_machine(str(machine))).split("@sha256:")[1]
    assert incore_key(load_machine("zen4-epyc-vm-2core")) == "OSACA:ZEN4"      # keys without a file: as before
    with copy.open("a") as f:
        f.write("# changed\n")
    code, _, err = run_cli(capsys, "rank", "--ivp", "heat2d", "--nodes", "1", "--machine", machine,
                           "--store", tmp_path / "s.sqlite")
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert f"field 'port model file': {copy} changed since the machine file was made" in err
    assert f"recorded {digest[:12]}" in err and "--port-model" in err
    copy.unlink()
    code, _, err = run_cli(capsys, "rank", "--ivp", "heat2d", "--nodes", "1", "--machine", machine,
                           "--store", tmp_path / "s.sqlite")
    assert code == 2 and "field 'port model file'" in err and "cannot read" in err


@pytest.mark.kerncraft
def test_a_port_model_file_is_what_the_analyses_use(tmp_path):
    """A copy of the installed Zen 4 model, given by path, analyses a part as the installed model
    does, under a key of its own; a changed copy (loads 4 x as long on the load ports) changes
    the analysis, so the file is what OSACA read; a machine without a file reads OSACA's own
    again in the same worker."""
    import re
    import tempfile

    from autotune.model.regime import Regime
    from autotune.pipeline.layout import Session
    from autotune.pipeline.predict import _analysis_inputs
    from autotune.specs.ivp import load_ivp
    from autotune.specs.method import load_method
    from autotune.specs.variants import enumerate_variants
    from autotune.tools import kerncraft_backend
    ivp = load_ivp("heat2d")
    units = Session().layout(ivp, load_method("radauIIA7"), enumerate_variants(ivp.comm)[:5]).units
    part, regime = next(u.part for u in units if u.part.name == "update"), Regime("MEM", None)
    plain = Path(load_machine("zen4-epyc-vm-2core").path)
    (tmp_path / "copy").mkdir()
    (tmp_path / "slow").mkdir()
    text = _installed_model("zen4").read_text()
    (tmp_path / "copy" / "zen4.yml").write_text(text)
    (tmp_path / "slow" / "zen4.yml").write_text(
        re.sub(r"\[(\d+), \['1D', '3D'\]\]", lambda m: f"[{4 * int(m.group(1))}, ['1D', '3D']]", text))

    def analyse(path: Path) -> tuple[str, dict]:
        machine = load_machine(str(path))
        inputs = _analysis_inputs(part, machine, regime)
        task = {"name": part.name, "code": part.code, "machine_path": machine.path, "unroll": part.unroll,
                "scratch": tempfile.mkdtemp(dir=tmp_path),
                "regimes": [{"key": "k", "label": regime.label, "constants": inputs["constants"],
                             "cache_predictor": inputs["cache_predictor"], "view": inputs.get("view")}]}
        result = kerncraft_backend.analyse_part(task)[0]
        assert result["ok"], result
        return inputs["incore"], result

    key, alone = analyse(plain)
    given_key, given = analyse(_with_port_model(plain, tmp_path / "copy" / "zen4.yml", tmp_path / "copy.yaml"))
    assert key == "OSACA:ZEN4" and given_key.startswith("OSACA:ZEN4@sha256:")
    assert given == alone
    slow_key, slow = analyse(_with_port_model(plain, tmp_path / "slow" / "zen4.yml", tmp_path / "slow.yaml"))
    assert slow_key not in (key, given_key)
    assert slow["port_cycles"]["1D"] == 4 * alone["port_cycles"]["1D"] > 0
    assert analyse(plain)[1] == alone


def test_calibrate_node_on_a_cpu_osaca_does_not_model_borrows_and_says_so(tmp_path, capsys, monkeypatch, compiler):
    """A Zen 5 (family 26) with an OSACA that has no ZEN5 model: the file is made, its port model
    Zen 4's, its flags from the Zen 5 record (znver5 first, else the newest the compiler knows)."""
    from autotune.tools import cpuprobe
    if cpuprobe.this_isa() != "x86":
        pytest.skip("an x86 CPU read on an x86 host")
    flags = "fpu sse sse2 ssse3 fma sse4_1 sse4_2 avx f16c avx2 bmi2 avx512f avx512dq avx512cd avx512bw avx512vl"
    monkeypatch.setattr(cpuprobe, "read_cpuinfo", lambda: (
        f"processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 26\nmodel\t\t: 2\n"
        f"model name\t: AMD EPYC 9575F 64-Core Processor\nstepping\t: 1\nflags\t\t: {flags}\n"))
    monkeypatch.setattr(cpuprobe, "osaca_models", lambda: (frozenset({"zen3", "zen4"}), "0.7.1"))
    code, out, err = run_cli(capsys, "calibrate", "--node", "--dry-run", "--name", "turin", "--out",
                             tmp_path / "turin.yaml")
    assert code == 0, err
    reason = ("AMD Zen 5 (zen5): the installed OSACA 0.7.1 has no ZEN5 model; ports from AMD Zen 4 (zen4), "
              "the closest it models")
    assert f"port model borrowed: {reason}; the in-core times are measured on this CPU" in err
    import yaml
    data = yaml.safe_load(out[out.index("# Machine model"):])
    assert dict(data["in-core model"])["OSACA"] == "ZEN4" and data["model type"] == "AMD Zen 5 (zen5)"
    assert f"borrowed ({reason})" in data["provenance"]["microarchitecture"]
    accepted = cpuprobe.accepted_march("gcc", "x86", ("znver5", "znver4", "znver3"))
    assert f" -march={accepted} " in dict(data["compiler"])["gcc"]

"""Porting to a new cluster: kerncraft's machine files taken in, this host described without a
borrowed microarchitecture, analyses and builds for the same instruction set."""
from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

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
    assert got.record.osaca and got.uarch == got.key == got.record.osaca.lower()


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
        check(plan, print)
    assert "avx512f" in str(e.value) and "Milan" in str(e.value) and "calibrate --node" in str(e.value)
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    said = []
    check(RunOptions(launcher="srun").plan(0.01, machine.isa_flags), said.append)
    assert said and said[0].startswith("warning: ")
    check(RunOptions(flags="-O3 -march=haswell").plan(0.01, machine.isa_flags), print)


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

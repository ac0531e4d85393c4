"""Bad input: one line naming what is wrong, exit status 2, no traceback (no kerncraft needed)."""
import json

import pytest

from .conftest import run_cli


@pytest.mark.parametrize("argv,needle", [
    (["rank", "--ivp", "heat3d"], "unknown IVP 'heat3d'"),
    (["rank", "--ivp", "heat2d", "--machine", "cray-1"], "unknown machine 'cray-1'"),
    (["rank", "--ivp", "heat2d", "--method", "euler"], "unknown method 'euler'"),
    (["rank", "--ivp", "heat2d", "--nodes", "0"], "--nodes 0"),
    (["rank", "--ivp", "heat2d", "--threads", "9"], "8 cores per node"),
    (["rank", "--ivp", "heat2d", "--n", "1000"], "N**2"),
    (["rank", "--ivp", "heat2d", "--n", "100", "--nodes", "20", "--comm", "neighbour"], "exceeds the block"),
    (["rank", "--ivp", "heat2d", "--comm", "sparse"], "not applicable"),
    (["rank", "--ivp", "heat2d", "--top", "0"], "--top 0"),
    (["explain", "--ivp", "heat2d", "--variant", "lc=abc,comm=neighbour"], "lc must be one of"),
    (["explain", "--ivp", "heat2d", "--variant", "lc=jil"], "missing comm"),
])
def test_bad_input_exits_2_with_one_line(argv, needle, capsys, tmp_path):
    code, out, err = run_cli(capsys, *argv, "--store", tmp_path / "s.sqlite")
    assert code == 2 and out == ""
    assert needle in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_malformed_user_file(capsys, tmp_path):
    bad = tmp_path / "mine.yaml"
    bad.write_text("name: mine\nrhs: [oops\n")
    code, _, err = run_cli(capsys, "rank", "--ivp", bad, "--store", tmp_path / "s.sqlite")
    assert code == 2 and str(bad) in err and "malformed YAML" in err


def test_argparse_errors_are_exit_2(capsys):
    with pytest.raises(SystemExit) as e:
        run_cli(capsys, "rank")
    assert e.value.code == 2


def test_list_and_generate(capsys, tmp_path):
    code, out, _ = run_cli(capsys, "list", "ivps")
    assert code == 0 and {"heat2d", "inverterchain", "medakzo", "wave1d", "string-row", "string-mix"} <= {
        line.split()[0] for line in out.splitlines()}
    code, out, _ = run_cli(capsys, "list", "variants", "--ivp", "medakzo", "--format", "json")
    space = json.loads(out)["medakzo"]
    assert space["variants"][-1] == ("lc=jl-onepass,comm=sparse,au=fused,pred=direct,buf=ghost,rhs=onepass,"
                                     "fuse=rhs-lc,block=l2") and space["count"] == len(space["variants"]) == 264
    dims = {d["key"]: d for d in space["dimensions"]}
    assert dims["comm"]["values"] == ["allgather", "sparse"] and dims["overlap"]["rules"] == {
        "halo": {"comm": ["neighbour"]}} and dims["au"]["default"] == "split"
    code, out, _ = run_cli(capsys, "list", "variants", "--ivp", "heat2d")
    assert out.startswith("heat2d: 396 variants") and "fuse       none rhs-lc" in out
    assert "rhs-lc needs lc=jl-onepass, rhs=onepass, pred=direct, au=fused" in out
    code, out, _ = run_cli(capsys, "list", "methods")
    assert "radauIIA7" in out and "order 7" in out
    code, out, _ = run_cli(capsys, "generate", "--ivp", "wave1d", "--out", tmp_path / "v")
    manifest = json.loads((tmp_path / "v" / "variants.json").read_text())
    assert code == 0 and len(manifest["variants"]) == 396
    files = list((tmp_path / "v" / "kernels").glob("*.c"))
    solvers = manifest["solvers"]
    assert len(solvers) == 396 and (tmp_path / "v" / solvers["lc=jli,comm=neighbour"]["file"]).read_text().count(
        "MPI_Init_thread") == 1 and solvers["lc=jli,comm=neighbour"]["build"].startswith("mpicc -O3")
    assert manifest["barriers"]["lc=jli,comm=neighbour"] == 22 and manifest["barriers"][
        "lc=jli,comm=neighbour,pred=direct"] == 21
    # LC (paper, one-pass, from F_1), APPROX/UPDATE (split, fused), RHS (one vector, all s), pack, copy,
    # the fused sweeps (predictor, corrector, last)
    assert len(files) == 10 + 2 + 1 + 3 + 1 + 2 + 1 + 1 + 3
    assert "for (int j = 4; j < M + 4; j++)" in (tmp_path / "v" / "kernels" / "rhs.wave1d.interior.c").read_text()
    parts = {p["part"]: p for p in manifest["variants"]["lc=jli,comm=neighbour"]}
    assert parts["lc.acc.jli"]["iterations_per_execution"] == "12 * M"
    assert parts["lc.acc.jli"]["executions_per_step"] == 6
    assert parts["rhs.wave1d.interior"]["executions_per_step"] == 25
    assert parts["comm.pack"]["executions_per_step"] == 25 and parts["predictor.copy"]["executions_per_step"] == 3
    assert manifest["comm_phases_per_step"] == 25


def test_a_file_named_like_an_ivp_does_not_shadow_it(capsys, tmp_path, monkeypatch):
    """A built solver called heat2d in the working directory is not an IVP file; a file that is
    not text is refused in one line."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "heat2d").write_bytes(b"\x7fELF\x02\x01\x01\xd8\x9e\x00")
    (tmp_path / "mine").write_bytes(b"\x7fELF\x02\xff\xfe\x00")
    code, out, _ = run_cli(capsys, "list", "variants", "--ivp", "heat2d", "--format", "json")
    assert code == 0 and json.loads(out)["heat2d"]["count"] == 396
    code, _, err = run_cli(capsys, "list", "variants", "--ivp", "mine")
    assert code == 2 and err.strip().endswith("mine: not a text (YAML) file") and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("argv,needle", [
    (["plan", "S", "--out", "plan.txt"], "--out plan.txt: expected a .json file name"),
    (["plan", "S", "--out", "F/plan.json"], "does not exist and cannot be created"),
    (["calibrate", "--machine", "haswell-ep-e5-2630v3", "--out", "m.yaml", "--raw", "r.csv"],
     "--raw r.csv: expected a .jsonl or .json file name"),
    (["calibrate", "--machine", "haswell-ep-e5-2630v3", "--out", "F/m.yaml"], "does not exist and cannot be created"),
    (["scale", "--ivp", "heat2d", "--nodes", "1:4", "--plot", "s.gif"], "--plot s.gif: expected a .png"),
    (["scale", "--ivp", "heat2d", "--nodes", "1:4", "--plot", "F/s.png"], "does not exist and cannot be created"),
])
def test_output_paths_are_refused_before_the_work(argv, needle, capsys, tmp_path, monkeypatch):
    """An output that cannot be written, or whose extension no writer knows, ends the command in
    one line before any analysis or measurement (F is a file, so nothing can be created below it;
    this holds for root too)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "F").write_text("a file, not a folder\n")
    (tmp_path / "S").write_text("scenarios:\n  - {ivp: heat2d}\n")
    code, out, err = run_cli(capsys, *argv, "--store", tmp_path / "s.sqlite")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert needle in err, err

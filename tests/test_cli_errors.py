"""Bad input: one line naming what is wrong, exit status 2, no traceback (no kerncraft needed)."""
import json

import pytest

from autotune.cli.main import main

from autotune.specs.ivp import load_ivp
from autotune.specs.variants import enumerate_variants

from .conftest import pool_size, run_cli


@pytest.mark.parametrize("argv,needle", [
    (["rank", "--ivp", "heat4d"], "unknown IVP 'heat4d'"),
    (["rank", "--ivp", "inverterchain", "--variant-filter", "traversal=strips"],
     "--variant-filter: none of the 26 variants selected can run here: traversal=strips: the IVP declares no grid"),
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
    separate = [v for v in space["variants"] if "blocks=" not in v]     # its blocks as its file stores them
    assert separate[-1].startswith("lc=jl-onepass,comm=sparse,au=fused,pred=direct,buf=ghost,rhs=onepass,"
                                   "fuse=rhs-lc,block=l2")
    assert space["variants"][-1].startswith("lc=jl-onepass,comm=neighbour,") and \
        space["variants"][-1].endswith(",blocks=interleaved")       # the twin's schemes: neighbour, not sparse
    assert space["count"] == len(space["variants"]) == pool_size("medakzo")
    dims = {d["key"]: d for d in space["dimensions"]}
    assert dims["comm"]["values"] == ["allgather", "neighbour", "sparse"] and dims["overlap"]["rules"] == {
        "halo": {"comm": ["neighbour"]}} and dims["au"]["default"] == "split"
    code, out, _ = run_cli(capsys, "list", "variants", "--ivp", "heat2d")
    assert out.startswith(f"heat2d: {pool_size()} variants") and "fuse       none rhs-lc" in out
    assert "rhs-lc needs lc=jl-onepass, rhs=onepass, pred=direct, au=fused" in out
    code, out, _ = run_cli(capsys, "list", "methods")
    assert "radauIIA7" in out and "order 7" in out
    code, out, _ = run_cli(capsys, "generate", "--ivp", "wave1d", "--out", tmp_path / "v")
    strips = [v for v in enumerate_variants(load_ivp("wave1d").comm) if v.traversal == "strips"]
    assert out.rstrip().endswith(f"; {len(strips)} the IVP cannot run, without a solver (variants.json: not_generated)")
    manifest = json.loads((tmp_path / "v" / "variants.json").read_text())
    assert code == 0 and len(manifest["variants"]) == pool_size()
    files = list((tmp_path / "v" / "kernels").glob("*.c"))
    solvers = manifest["solvers"]
    names = [v for v in manifest["variants"] if "traversal=strips" in v]   # wave1d declares no grid
    assert names == [v.name for v in strips] and set(manifest["not_generated"]) == set(names) and all(
        why.endswith("the IVP declares no grid") for why in manifest["not_generated"].values())
    assert len(solvers) == pool_size() - len(strips) and (tmp_path / "v" / solvers["lc=jli,comm=neighbour"]["file"]).read_text().count(
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
    assert code == 0 and json.loads(out)["heat2d"]["count"] == pool_size()
    code, _, err = run_cli(capsys, "list", "variants", "--ivp", "mine")
    assert code == 2 and err.strip().endswith("mine: not a text (YAML) file") and len(err.strip().splitlines()) == 1


M = "haswell-ep-e5-2630v3"


def run_refused(capsys, *argv):
    """`autotune argv` in-process, whether main returns or argparse exits: (code, stdout, stderr)."""
    try:
        code = main([str(a) for a in argv])
    except SystemExit as e:
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line(code, out, err, needle):
    assert code == 2 and out == "" and "Traceback" not in err
    assert len(err.splitlines()) == 1 and err.startswith("autotune: error: "), err
    assert needle in err, err


@pytest.mark.parametrize("argv,needle", [
    (["plan", "S", "--out", "plan.txt"], "--out plan.txt: expected a .json file name"),
    (["plan", "S", "--out", "F/plan.json"],
     "--out F/plan.json: folder F does not exist and cannot be created (F is a file)"),
    (["plan", "S", "--out", "D"], "--out D: expected a .json file name"),
    (["plan", "S", "--out", "D.json"], "--out D.json: is a folder, expected a file name"),
    (["calibrate", "--machine", M, "--out", "m.yaml", "--raw", "r.csv"],
     "--raw r.csv: expected a .jsonl or .json file name"),
    (["calibrate", "--machine", M, "--out", "m.yaml", "--raw", "missing/r.jsonl"],
     "--raw missing/r.jsonl: folder missing does not exist"),
    (["calibrate", "--machine", M, "--out", "F/m.yaml"],
     "--out F/m.yaml: folder F does not exist and cannot be created"),
    (["calibrate", "--machine", M, "--out", "m.txt"], "--out m.txt: expected a .yaml or .yml file name"),
    (["calibrate", "--machine", M, "--plot", "missing/c.pdf"], "--plot missing/c.pdf: folder missing does not exist"),
    (["calibrate", "--machine", "myhost", "--node", "--out", "F/x/m.yaml"],
     "--out F/x/m.yaml: folder F/x does not exist"),
    (["scale", "--ivp", "heat2d", "--nodes", "1:4", "--plot", "s.gif"], "--plot s.gif: expected a .png, .svg or .pdf "
                                                                         "file name"),
    (["scale", "--ivp", "heat2d", "--nodes", "1:4", "--plot", "F/s.png"], "--plot F/s.png: folder F does not exist"),
    (["scale", "--ivp", "heat2d", "--nodes", "1:4:x2", "--plot", "missing/dir/x.png"],
     "--plot missing/dir/x.png: folder missing/dir does not exist"),
    (["tune", "--ivp", "heat2d", "--plot", "missing/t.svg"], "--plot missing/t.svg: folder missing does not exist"),
    (["tune", "--ivp", "heat2d", "--plot", "t.jpg"], "--plot t.jpg: expected a .png, .svg or .pdf file name"),
    (["generate", "--ivp", "heat2d", "--out", "F"], "--out F: is a file, expected a folder"),
    (["generate", "--ivp", "heat2d", "--out", "F/sub"], "--out F/sub: folder F/sub does not exist and cannot be "
                                                         "created (F is a file)"),
])
def test_output_paths_are_refused_before_the_work(argv, needle, capsys, tmp_path, monkeypatch):
    """An output that cannot be written, or whose extension no writer knows, ends the command in
    one line before any analysis or measurement (F is a file, so nothing can be created below it;
    this holds for root too; a plot or raw file needs its folder, a plan or machine file's folder
    is made)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AUTOTUNE_STORE", str(tmp_path / "s.sqlite"))
    (tmp_path / "F").write_text("a file, not a folder\n")
    (tmp_path / "D").mkdir()
    (tmp_path / "D.json").mkdir()
    (tmp_path / "S").write_text("scenarios:\n  - {ivp: heat2d}\n")
    assert_one_line(*run_refused(capsys, *argv), needle)


def test_the_api_checks_the_machine_file_it_writes(tmp_path):
    import autotune
    (tmp_path / "F").write_text("a file\n")
    with pytest.raises(autotune.InputError) as e:
        autotune.calibrate(M, out=tmp_path / "F" / "m.yaml", store=tmp_path / "s.sqlite")
    assert e.value.field == "out" and "does not exist and cannot be created" in str(e.value)


@pytest.mark.parametrize("argv,needle", [
    # scalar options (argparse: the option and the text)
    (["generate", "--ivp", "heat2d", "--n", "2.5"], "argument --n: expected an integer, got '2.5'"),
    (["explain", "--ivp", "heat2d", "--variant", "lc=jil,comm=neighbour", "--nodes", "2.5"],
     "argument --nodes: expected an integer, got '2.5'"),
    (["rank", "--ivp", "heat2d", "--top", "1.5"], "argument --top: expected an integer, got '1.5'"),
    (["rank", "--ivp", "heat2d", "--top", "inf"], "argument --top: expected an integer, got 'inf'"),
    (["rank", "--ivp", "heat2d", "--jobs", "1.5"],
     "argument --jobs: expected a number of processes or 'mpi', got '1.5'"),
    (["tune", "--ivp", "heat2d", "--steps", "2.5"], "argument --steps: expected an integer, got '2.5'"),
    (["tune", "--ivp", "heat2d", "--reps", "nan"], "argument --reps: expected an integer or 'auto', got 'nan'"),
    (["tune", "--ivp", "heat2d", "--warmup", "0.5"], "argument --warmup: expected an integer, got '0.5'"),
    (["calibrate", "--machine", M, "--min-bytes", "1.5"], "argument --min-bytes: expected an integer, got '1.5'"),
    # the sweep grammar: single values, lists, range ends and steps
    (["rank", "--ivp", "heat2d", "--nodes", "2.5"], "--nodes 2.5: expected an integer"),
    (["rank", "--ivp", "heat2d", "--nodes", "2,2.5"], "--nodes 2.5: expected an integer"),
    (["rank", "--ivp", "heat2d", "--nodes", "1.5:8"], "--nodes 1.5:8: expected integer ends, got 1.5"),
    (["rank", "--ivp", "heat2d", "--nodes", "1:8.5"], "--nodes 1:8.5: expected integer ends, got 8.5"),
    (["rank", "--ivp", "heat2d", "--nodes", "1:8:2.5"], "--nodes 1:8:2.5: expected an integer step > 0"),
    (["rank", "--ivp", "heat2d", "--threads", "1.5"], "--threads 1.5: expected an integer"),
    (["scale", "--ivp", "heat2d", "--nodes", "1:4", "--threads", "1,1.5"], "--threads 1.5: expected an integer"),
    (["rank", "--ivp", "heat2d", "--n", "1e6:2.5e6:0.5"], "--n 1e6:2.5e6:0.5: expected an integer step > 0"),
    (["calibrate", "--machine", M, "--procs", "2,2.5"], "--procs 2.5: expected an integer"),
    (["calibrate", "--machine", M, "--procs", "2:4.5"], "--procs 2:4.5: expected integer ends, got 4.5"),
    (["calibrate", "--machine", M, "--threads", "1.5"], "--threads 1.5: expected an integer"),
    (["tune", "--ivp", "heat2d", "--sample", "1.5"], "--sample 1.5: expected an integer"),
    (["tune", "--ivp", "heat2d", "--seed", "1.5"], "--seed 1.5: expected an integer"),
    # zero or negative where a positive count is needed
    (["rank", "--ivp", "heat2d", "--nodes", "0"], "--nodes 0: expected values >= 1"),
    (["rank", "--ivp", "heat2d", "--threads", "0"], "--threads 0: expected values >= 1"),
    (["rank", "--ivp", "heat2d", "--jobs", "0"], "--jobs 0: expected a positive number of processes or 'mpi'"),
    (["plan", "S", "--jobs", "-1"], "--jobs -1: expected a positive number of processes or 'mpi'"),
    (["rank", "--ivp", "heat2d", "--top", "-1"], "--top -1: expected an integer >= 1"),
    (["tune", "--ivp", "heat2d", "--steps", "0"], "--steps 0: expected an integer >= 1"),
    (["tune", "--ivp", "heat2d", "--reps", "0"], "--reps 0: expected an integer >= 1"),
    (["tune", "--ivp", "heat2d", "--warmup", "-1"], "--warmup -1: expected an integer >= 0"),
    (["tune", "--ivp", "heat2d", "--sample", "0"], "--sample 0: expected an integer >= 1"),
    (["calibrate", "--machine", M, "--procs", "1"], "--procs 1: communication needs at least 2 processes"),
    (["calibrate", "--machine", M, "--threads", "0"], "--threads 0: expected values >= 1"),
    (["rank", "--ivp", "heat2d", "--within", "nan"], "--within nan: expected a percentage >= 0"),
    (["calibrate", "--machine", M, "--factor", "nan"], "--factor nan: expected a number > 1"),
    # argparse's own errors: one line too, without the usage block
    (["rank"], "the following arguments are required: --ivp"),
    (["rank", "--ivp", "heat2d", "--format", "xml"], "argument --format: invalid choice: 'xml'"),
    (["rank", "--ivp", "heat2d", "--colour", "blue"], "unrecognized arguments: --colour blue"),
    (["frobnicate"], "argument command: invalid choice: 'frobnicate'"),
])
def test_bad_options_are_refused_in_one_line(argv, needle, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AUTOTUNE_STORE", str(tmp_path / "s.sqlite"))
    (tmp_path / "S").write_text("scenarios:\n  - {ivp: heat2d}\n")
    assert_one_line(*run_refused(capsys, *argv), needle)

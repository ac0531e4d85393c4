"""The node benchmark's own edges: its clock check measures the host and compares the file's."""
import os
import re

import pytest


@pytest.mark.compiler
def test_the_clock_check_measures_a_chain_and_names_both_clocks():
    from benchmarks.node import clock_check
    from autotune.specs.machine import load_machine
    line = clock_check("haswell-ep-e5-2630v3")
    m = re.fullmatch(r"clock: the file says ([\d.]+) GHz, a dependent-add chain runs at ([\d.]+) GHz on all cores "
                     r"now \(([+-][\d.]+) %; target within 5 %\)", line)
    assert m, line
    file_ghz, chain_ghz, off = map(float, m.groups())
    assert file_ghz == pytest.approx(load_machine("haswell-ep-e5-2630v3").clock_hz / 1e9, abs=0.005)
    assert chain_ghz > 0.1 and off == pytest.approx(100 * (file_ghz / chain_ghz - 1), abs=1.0)


def test_the_ranks_on_this_host_are_checked_before_anything_runs(capsys):
    import os

    from benchmarks.node import main
    cores = len(os.sched_getaffinity(0))
    for bad in (0, cores + 1):
        assert main(["--machine", "haswell-ep-e5-2630v3", "--nodes", str(bad)]) == 2
        assert capsys.readouterr().err.strip() == f"--nodes: {bad}: expected 1 to {cores} (the cores this process may use)"


def test_the_solver_benchmark_reads_its_cases_and_refuses_bad_ones(capsys, tmp_path):
    from benchmarks.solvers import CASES, main, parse_cases
    assert parse_cases("heat2d:40000:lc=ijl,comm=allgather; wave1d:4000000:lc=jl-onepass,comm=neighbour") == [
        ("heat2d", 40000, "lc=ijl,comm=allgather"), ("wave1d", 4000000, "lc=jl-onepass,comm=neighbour")]
    assert len(CASES) == 7 and all(n in (40_000, 4_000_000) for _, n, _ in CASES)
    assert main(["--against-code", str(tmp_path), "--machine", "x", "--cases", "heat2d:4e4:lc=ijl"]) == 2
    assert capsys.readouterr().err.strip() == "--cases: 'heat2d:4e4:lc=ijl': expected ivp:n:variant"
    assert main(["--against-code", str(tmp_path), "--machine", "x"]) == 2
    assert capsys.readouterr().err.strip() == f"--against-code: {tmp_path}: no autotune in it"


def test_an_ivp_outside_the_scenarios_is_refused(capsys):
    from benchmarks.node import main
    assert main(["--machine", "haswell-ep-e5-2630v3", "--scenarios", "memory", "--ivps", "heat2d,allencahn1d"]) == 2
    assert capsys.readouterr().err.strip() == \
        "--ivps: 'allencahn1d': expected some of heat2d, inverterchain, wave1d"


def test_the_other_checkouts_templates_ivps_and_machines_are_its_own(tmp_path):
    """--against-code runs another checkout's autotune with that checkout's shipped data (an
    editable install would resolve autotune.data.variants to its own checkout's folder), and a
    sitecustomize already on the path still runs."""
    import subprocess
    from benchmarks.checkout import DATA_FOLDERS, interpreter
    code = tmp_path / "checkout"
    for kind in DATA_FOLDERS:
        (code / kind).mkdir(parents=True)
        (code / kind / "__init__.py").write_text("")
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text("import os\nos.environ['HIDDEN_SITE_RAN'] = '1'\n")
    python, env = interpreter(str(code))
    env["PYTHONPATH"] += os.pathsep + str(tmp_path / "site")
    probe = ("import os; from autotune.specs.shipped import shipped_dir; "
             "print(' '.join(str(shipped_dir(k)) for k in ('ivps', 'machines', 'variants', 'methods')), "
             "os.environ.get('HIDDEN_SITE_RAN'))")
    got = subprocess.run([*python, "-c", probe], env=env, capture_output=True, text=True, check=True).stdout.split()
    assert got[:3] == [str(code / k) for k in ("ivps", "machines", "variants")]
    assert not got[3].startswith(str(code))       # methods live inside the package: the installed one's
    assert got[4] == "1"


def test_the_data_folders_are_read_from_the_checkouts_pyproject():
    from pathlib import Path
    from benchmarks.checkout import DATA_FOLDERS, data_folders
    root = Path(__file__).parents[1]
    assert data_folders(str(root)) == {k: str(root / v) for k, v in DATA_FOLDERS.items()}

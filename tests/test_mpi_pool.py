"""--jobs mpi: the kerncraft analyses on the ranks of `mpiexec -n 3 python -m mpi4py.futures -m autotune`
give the very results of the local process pool, and a run that has no MPI workers says how to
start one before doing any work."""
import json
import os
import shutil
import sqlite3
import subprocess
import sys

import pytest

import autotune
from autotune.cli import main
from autotune.tools.ecm_runner import check_jobs, mpi_workers

from .conftest import run_cli

# one variant's kernel parts; the replayed store holds them all but COLD, which both runs analyse
SCENARIO = ["rank", "--ivp", "heat2d", "--nodes", "8", "--variant-filter",
            "lc=jli,comm=neighbour,au=split,pred=copy", "--format", "json"]
COLD = ("approx.first", "comm.pack", "update")   # cheap parts (5-8 s each)
HINT = "--jobs mpi: no MPI workers; start autotune as `mpiexec -n 3 python -m mpi4py.futures -m autotune"


def _store_lacking(template, path, parts):
    shutil.copy(template, path)
    db = sqlite3.connect(path)
    with db:
        db.execute(f"DELETE FROM ecm WHERE part IN ({','.join('?' * len(parts))})", parts)
    db.close()
    return path


def _ecm_rows(path) -> dict:
    """The ecm table by key, everything but the time a row was written."""
    db = sqlite3.connect(path)
    rows = {key: (part, regime, machine, ok, json.loads(result), json.loads(inputs))
            for key, part, regime, machine, ok, result, inputs in
            db.execute("SELECT key, part, regime, machine, ok, result, inputs FROM ecm")}
    db.close()
    return rows


@pytest.mark.kerncraft
def test_mpi_ranks_store_the_results_of_the_local_pool(replay_template, tmp_path, mpiexec, capsys):
    local = _store_lacking(replay_template, tmp_path / "local.sqlite", COLD)
    ranks = _store_lacking(replay_template, tmp_path / "mpi.sqlite", COLD)

    code, out, err = run_cli(capsys, *SCENARIO, "--store", local, "--jobs", 2)
    assert code == 0, err
    by_pool = json.loads(out)
    proc = subprocess.run([mpiexec, "-n", "3", sys.executable, "-m", "mpi4py.futures", "-m", "autotune",
                           *SCENARIO, "--store", str(ranks), "--jobs", "mpi"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    by_ranks = json.loads(proc.stdout)

    # the same analyses ran (the cold parts, and any record the replay no longer matches) ...
    ran = by_pool["ecm"]["analyses_run"]
    assert ran >= len(COLD) and by_ranks["ecm"] == by_pool["ecm"] == {"analyses_run": ran, "failures": {}}
    assert f"running {ran} kerncraft analyses" in proc.stderr and f"[{ran}/{ran}]" in proc.stderr
    # ... and stored the same rows: the key hashes every input, so equal keys and equal results
    a, b = _ecm_rows(local), _ecm_rows(ranks)
    assert a.keys() == b.keys()
    for key in a:
        assert a[key] == b[key], a[key][:2]
    fresh = [row for row in a.values() if row[0] in COLD]
    assert {row[0] for row in fresh} == set(COLD) and all(row[3] == 1 for row in fresh)
    assert by_ranks["variants"] == by_pool["variants"]


def test_jobs_mpi_without_workers_fails_at_once(tmp_path, capsys):
    assert mpi_workers() == 0   # not started as python -m mpi4py.futures
    store = tmp_path / "store.sqlite"
    code, out, err = run_cli(capsys, "rank", "--ivp", "heat2d", "--nodes", 8, "--jobs", "mpi", "--store", store)
    assert code == 2 and out == "" and err.startswith("autotune: error: " + HINT)
    assert len(err.strip().splitlines()) == 1 and not store.exists()   # before any work
    with pytest.raises(autotune.InputError, match="no MPI workers") as e:
        autotune.rank("heat2d", nodes=8, jobs="mpi", store=store)
    assert e.value.field == "jobs" and not store.exists()
    check_jobs(None), check_jobs(3)
    for bad in (0, -1, "two", True):
        with pytest.raises(autotune.InputError, match="expected a positive number"):
            check_jobs(bad)
    with pytest.raises(SystemExit) as stop:
        main(["plan", str(tmp_path / "s.yaml"), "--jobs", "many"])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and "argument --jobs: expected a number of processes or 'mpi', got 'many'" in err


def test_jobs_mpi_on_one_rank_fails_at_once(tmp_path, mpiexec):
    """Under mpi4py.futures but with a single rank: no workers either."""
    store = tmp_path / "store.sqlite"
    proc = subprocess.run([mpiexec, "-n", "1", sys.executable, "-m", "mpi4py.futures", "-m", "autotune", "rank",
                           "--ivp", "heat2d", "--nodes", "8", "--jobs", "mpi", "--store", str(store)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stdout == "" and not store.exists()
    assert proc.stderr.startswith("autotune: error: " + HINT)


PROBE = '''
import inspect, os, time

def probe(_):
    from kerncraft import incore_model
    time.sleep(0.1)
    original = inspect.getclosurevars(incore_model.x86.get_pointer_increment).nonlocals["original"]
    return os.getpid(), original.__qualname__
'''
DRIVER = '''
import json, os
from autotune.tools.ecm_runner import _mpi_pool
from mpi_probe import probe
runs = []
for _ in range(2):
    with _mpi_pool() as pool:
        runs.append(sorted(set(pool.map(probe, range(8)))))
print(json.dumps({"rank0": os.getpid(), "runs": runs}))
'''


def test_mpi_workers_are_set_up_once_across_pools(tmp_path, mpiexec):
    """Each executor on mpi4py.futures' shared pool runs its initializer on the same long-lived
    workers again; kerncraft must still be patched once (a second patch would scale the
    pointer increment by the unroll twice)."""
    (tmp_path / "mpi_probe.py").write_text(PROBE)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")])))
    proc = subprocess.run([mpiexec, "-n", "3", sys.executable, "-m", "mpi4py.futures", "-c", DRIVER],
                          capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    pids = {pid for run in got["runs"] for pid, _ in run}
    assert got["rank0"] not in pids and 0 < len(pids) <= 2   # the other ranks analyse
    assert {name for run in got["runs"] for _, name in run} == {"x86.get_pointer_increment"}

"""A rank that cannot predict says so: where the analyses a scenario needs failed, rank, explain,
a sweep and scale exit 1 with one line naming the cause; where kerncraft cannot even start in the
analysis workers, the pool stops at once with why.  Failed parts beside predicted variants are
listed, those variants last, and the command succeeds (no kerncraft runs: a replayed store)."""
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from concurrent.futures import ProcessPoolExecutor

import pytest

import autotune
from autotune.progress import SILENT
from autotune.tools import ecm_runner

from .conftest import run_cli

ONE = ["--ivp", "heat2d", "--nodes", "8", "--variant-filter", "lc=jli,comm=neighbour,au=split,pred=copy"]
FAILED = {"ok": False, "error": "No compiler (gcc) was found", "log": "/scratch/part.7/kerncraft.log"}


def _store_failing(template, path, parts=None):
    """The replayed store with the analyses of `parts` (default: all) recorded as failed."""
    shutil.copy(template, path)
    db = sqlite3.connect(path)
    where = "" if parts is None else f" WHERE part IN ({','.join('?' * len(parts))})"
    with db:
        db.execute(f"UPDATE ecm SET ok = 0, result = ?{where}", (json.dumps(FAILED), *(parts or ())))
    db.close()
    return path


def _one_line(err: str) -> str:
    assert "running" not in err, err                       # the replay held every analysis
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.mark.parametrize("argv", [
    ["rank", *ONE],
    ["rank", *ONE, "--n", "35808256,36000000", "--format", "csv"],
    ["scale", *ONE, "--n", "35808256"],
    ["explain", "--ivp", "heat2d", "--nodes", "8", "--variant", "lc=jli,comm=neighbour"],
])
def test_no_prediction_at_all_exits_1_naming_the_cause(argv, replay_template, tmp_path, capsys):
    store = _store_failing(replay_template, tmp_path / "s.sqlite")
    code, out, err = run_cli(capsys, *argv, "--store", store)
    line = _one_line(err)
    assert code == 1 and out == ""
    assert line.startswith("autotune: error: kerncraft: ") and "heat2d, n = 3" in line
    assert line.endswith("No compiler (gcc) was found (log: /scratch/part.7/kerncraft.log)")
    if "--n" in argv and argv[0] == "rank":
        assert "2 of 2 scenarios have no prediction" in line
    with pytest.raises(autotune.ToolError, match="No compiler"):
        autotune.rank("heat2d", nodes=8, store=store)


def test_failed_parts_beside_predictions_are_listed_last(replay_template, tmp_path, capsys):
    store = _store_failing(replay_template, tmp_path / "s.sqlite", ["lc.acc.jli"])
    paper = ["--ivp", "heat2d", "--nodes", "8", "--variant-filter", "paper", "--store", store]
    code, out, err = run_cli(capsys, "rank", *paper, "--format", "json")
    assert code == 0 and "running" not in err
    d = json.loads(out)
    assert list(d["ecm"]["failures"]) == ["lc.acc.jli"] and d["ecm"]["failures"]["lc.acc.jli"]["log"] == FAILED["log"]
    assert [v["name"] for v in d["variants"][-2:]] == ["lc=jli,comm=allgather", "lc=jli,comm=neighbour"]
    assert all(v["predicted_s"] is None and v["failed_kernels"] == ["lc.acc.jli"] for v in d["variants"][-2:])
    assert len(d["variants"]) == 12 and all(v["predicted_s"] > 0 for v in d["variants"][:-2])
    # explaining a variant that failed is an error; one that did not, a breakdown
    code, out, err = run_cli(capsys, "explain", *paper[:4], "--variant", "lc=jli,comm=neighbour", "--store", store)
    line = _one_line(err)
    assert code == 1 and out == "" and "lc=jli,comm=neighbour cannot be predicted: kernel part lc.acc.jli (" in line
    assert line.endswith("No compiler (gcc) was found (log: /scratch/part.7/kerncraft.log)")
    code, out, err = run_cli(capsys, "explain", *paper[:4], "--variant", "lc=jil,comm=neighbour", "--format", "json",
                             "--store", store)
    d = json.loads(out)
    assert code == 0 and d["predicted_s"] > 0 and "lc.acc.jil" in [k["name"] for k in d["kernels"]]


BLOCK_DISTUTILS = textwrap.dedent("""\
    import sys

    class Blocked:
        def find_spec(self, name, path=None, target=None):
            if name == "distutils" or name.startswith("distutils."):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)

    sys.meta_path.insert(0, Blocked())
    """)


def test_workers_that_cannot_start_kerncraft_stop_at_once(tmp_path):
    """Python 3.12 without setuptools: kerncraft imports distutils, which is not there.  The pool
    stops at the first answer, one line says why, nothing is stored as a kernel's failure."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(BLOCK_DISTUTILS)
    store = tmp_path / "store.sqlite"
    proc = subprocess.run([sys.executable, "-m", "autotune", "rank", *ONE, "--store", str(store), "--jobs", "2"],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path,   # the installed autotune
                          env={**os.environ, "PYTHONPATH": str(site)})
    assert proc.returncode == 1 and proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert lines[0].startswith("autotune: running ") and len(lines) == 2, proc.stderr
    assert lines[1].startswith("autotune: error: kerncraft cannot start in the analysis workers: "
                               "No module named 'distutils'; none of ")
    db = sqlite3.connect(store)
    assert db.execute("SELECT COUNT(*) FROM ecm").fetchone()[0] == 0
    db.close()


def _die(task):
    os._exit(9)


def test_a_worker_that_dies_stops_the_pool_with_why(monkeypatch):
    monkeypatch.setattr(ecm_runner, "analyse", _die)
    got = []
    with pytest.raises(autotune.ToolError) as e:
        ecm_runner._run_pool(lambda: ProcessPoolExecutor(2),
                             [{"name": f"part{i}", "regimes": [{"label": "MEM"}]} for i in range(5)],
                             lambda task, regime, result: got.append(result), SILENT)
    assert str(e.value).startswith("an analysis worker died (BrokenProcessPool: ")
    assert str(e.value).endswith("; none of 5 kernel analyses ran") and got == []

"""The loops benchmark's own edges: its input checked before anything runs, and its loop pair
built and run (the four forms compute; their times are the benchmark's to print)."""
import os
import subprocess
from pathlib import Path

import pytest


def test_bad_input_exits_2_with_one_line(capsys, tmp_path):
    from benchmarks.loops import main
    assert main(["--machine", str(tmp_path / "none.yaml")]) == 2
    assert main(["--pair", "--ks", "8,x"]) == 2
    assert main(["--machine", "machines/haswell-ep-e5-2630v3.yaml", "--against-code", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0].startswith("--machine: expected a machine file") and err[1].startswith("--ks, --tiles")
    assert err[2].startswith("--against-code:") and len(err) == 3


@pytest.mark.compiler
def test_the_loop_pair_runs_each_form(tmp_path):
    exe = tmp_path / "looppair"
    src = Path(__file__).parents[1] / "benchmarks" / "looppair.c"
    subprocess.run(["gcc", "-O2", "-fopenmp", "-DK=4", str(src), "-o", str(exe)], check=True)
    out = subprocess.run([str(exe), "4096", "512", "3", "2", "2e9"], capture_output=True, text=True,
                         env=dict(os.environ, OMP_NUM_THREADS="1"), check=True).stdout.split()
    assert len(out) == 4 and all(float(x) > 0 for x in out)
    bad = subprocess.run([str(exe), "4096", "512", "0", "2", "2e9"], capture_output=True, text=True)
    assert bad.returncode == 2 and "bad arguments" in bad.stderr


def test_json_holds_what_was_printed(tmp_path, monkeypatch, capsys):
    import json

    import benchmarks.loops as loops
    rows = [{"K": 8, "threads": 1, "where": "L1", "tile": 512, **dict.fromkeys(loops.PAIR_COLUMNS, 12.5)}]
    monkeypatch.setattr(loops, "pair", lambda clock, ks, tiles, cc: rows)   # the runs: the test above
    out = tmp_path / "pair.json"
    assert loops.main(["--pair", "--ks", "8", "--tiles", "512", "--json", str(out)]) == 0
    assert json.loads(out.read_text()) == rows and "12.5" in capsys.readouterr().out

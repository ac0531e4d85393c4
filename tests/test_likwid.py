"""generate --likwid: each sweep of a solver is a LIKWID marker region (LIKWID's own header and
library, built with the manifest's command); the solver computes the same numbers as without the
markers, and without --likwid every file is as before.  Needs LIKWID's header and library: CI
installs them (apt: likwid) and sets AUTOTUNE_REQUIRE_LIKWID=1, so that there a missing LIKWID
fails instead of skipping."""
import json
import os
import shlex
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from autotune.cli.main import main
from autotune.pipeline.generate import file_stem
from autotune.specs.ivp import load_ivp
from autotune.tools.build import find_mpicc, run
from autotune.tools.launcher import parse_launcher


HAVE = Path("/usr/include/likwid-marker.h").exists() or bool(shutil.which("likwid-perfctr"))
needs_likwid = pytest.mark.skipif(not HAVE and os.environ.get("AUTOTUNE_REQUIRE_LIKWID") != "1",
                                  reason="LIKWID is not installed (apt: likwid)")

# a variant per kind of region: the paper form's phases (rhs, copy, lc, au), the predictor's direct
# LC, the overlapped halo (its interior and boundary), the fused sweeps (sweep.*) with streaming
# stores, the pipelined step (wavefront) and its strips
VARIANTS = ["lc=ijl,comm=allgather", "lc=jli,comm=neighbour,pred=direct",
            "lc=ijl,comm=neighbour,au=fused,buf=ghost,overlap=halo",
            "lc=jl-onepass,comm=neighbour,au=fused,pred=direct,buf=ghost,rhs=onepass,fuse=rhs-lc,block=l1,store=nt",
            "lc=jl-onepass,comm=neighbour,au=fused,pred=direct,buf=ghost,rhs=onepass,fuse=rhs-lc,block=l1,pipe=wavefront",
            "lc=jl-onepass,comm=allgather,au=fused,pred=direct,buf=ghost,rhs=onepass,fuse=rhs-lc,block=l2,"
            "pipe=wavefront,traversal=strips"]


def _generate(out: Path, *more) -> dict:
    assert main(["generate", "--ivp", "heat2d", "--n", "10000", "--out", str(out), *more]) == 0
    return json.loads((out / "variants.json").read_text())


@needs_likwid
def test_likwid_markers_build_and_change_no_number(tmp_path, mpiexec, compiler, private_builds, capsys):
    plain, marked = _generate(tmp_path / "plain"), _generate(tmp_path / "marked", "--likwid")
    assert set(VARIANTS) <= set(marked["solvers"]) and set(VARIANTS) <= set(plain["solvers"])
    assert "likwid" in marked and "likwid" not in plain
    assert marked["build"].endswith("-lm -llikwid") and "-DLIKWID_PERFMON" in marked["build"]
    ivp, launcher, mpicc = load_ivp("heat2d"), parse_launcher(None), find_mpicc()
    for name in VARIANTS:
        stem = file_stem(name)
        source = (tmp_path / "marked" / "solvers" / f"{stem}.c").read_text()
        assert "#include <likwid-marker.h>" in source and "LIKWID_MARKER_INIT;" in source
        assert "likwid" not in (tmp_path / "plain" / "solvers" / f"{stem}.c").read_text().lower()
        ys = []
        for kind, manifest in (("plain", plain), ("marked", marked)):
            argv = shlex.split(manifest["solvers"][name]["build"])
            argv[0] = mpicc
            done = subprocess.run(argv, cwd=tmp_path / kind, capture_output=True, text=True)
            assert done.returncode == 0, done.stderr
            exe = tmp_path / kind / argv[argv.index("-o") + 1]
            if kind == "marked":     # the markers call LIKWID's library
                assert "likwid_markerStartRegion" in subprocess.run(["nm", "-u", str(exe)], capture_output=True,
                                                                    text=True).stdout
            out = tmp_path / f"{kind}-{stem}.bin"
            res = run(exe, launcher, 1, 2, 10000, ivp.size_value(10000), 3, 1e-5, 0, out)
            assert res["steps"] == 3
            ys.append(np.fromfile(out))
        assert np.array_equal(ys[0], ys[1]), name


def test_likwid_is_not_for_the_online_solver(capsys, tmp_path):
    code = main(["generate", "--ivp", "heat2d", "--online", "--likwid", "--out", str(tmp_path / "o")])
    assert code == 2 and "--likwid: not with --online" in capsys.readouterr().err

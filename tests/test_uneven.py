"""Uneven blocks (docs/method.md, "Uneven blocks"): a solver generated for them takes each rank's
number of components from AUTOTUNE_COUNTS, and every form computes the numbers of the even split
to rounding, on 2 and 3 ranks; bad counts stop it with exit status 2; without the flag the source
is the one it was."""
import os
import subprocess

import numpy as np
import pytest

from autotune.codegen.solver import solver_source
from autotune.errors import ToolError
from autotune.request.run import RunOptions
from autotune.specs.ivp import load_ivp
from autotune.specs.method import load_method
from autotune.specs.variants import enumerate_variants, parse_variant, value_cover
from autotune.tools.build import build, run
from autotune.tools.launcher import parse_launcher
from autotune.tools.mpiinfo import launch_argv

LAUNCHER = parse_launcher(None)
FLAGS = RunOptions().plan(1.0).flags
METHOD = load_method("radauIIA7")
HEAT = load_ivp("heat2d")
N, STEPS, H = 1024, 3, 1e-5
# every value of every dimension the fixed step has, on heat2d (both schemes)
COVER = value_cover(enumerate_variants(HEAT.comm))


@pytest.fixture(autouse=True)
def _private_builds(private_builds):
    """The tests that build solvers build their own."""


def _y(exe, procs, path, monkeypatch, counts=None):
    if counts is None:
        monkeypatch.delenv("AUTOTUNE_COUNTS", raising=False)
    else:
        monkeypatch.setenv("AUTOTUNE_COUNTS", ",".join(map(str, counts)))
    run(exe, LAUNCHER, procs, 1, N, HEAT.size_value(N), STEPS, H, 0, path)
    return np.fromfile(path)


@pytest.mark.parametrize("variant", COVER, ids=[v.name for v in COVER])
def test_every_form_computes_the_even_splits_numbers_at_uneven_blocks(variant, tmp_path, monkeypatch):
    ref = _y(build(solver_source(HEAT, METHOD, variant, N), FLAGS), 1, tmp_path / "ref.bin", monkeypatch)
    exe = build(solver_source(HEAT, METHOD, variant, N, uneven=True), FLAGS)
    for procs, counts in ((1, None), (2, (300, 724)), (3, (300, 424, 300)), (2, (700, 324))):
        y = _y(exe, procs, tmp_path / "y.bin", monkeypatch, counts)
        assert np.max(np.abs(y - ref)) <= 1e-12 * np.max(np.abs(ref)), (variant.name, counts)


def test_bad_counts_stop_the_solver_before_it_steps(tmp_path, monkeypatch):
    exe = build(solver_source(HEAT, METHOD, parse_variant("lc=ijl,comm=allgather", HEAT.comm), N, uneven=True), FLAGS)
    for bad in ((300, 700), (1024, 0), (512,), (512, 512, 0)):
        monkeypatch.setenv("AUTOTUNE_COUNTS", ",".join(map(str, bad)))
        with pytest.raises(ToolError, match="exit 2") as got:
            run(exe, LAUNCHER, 2, 1, N, HEAT.size_value(N), STEPS, H, 0)
        # (the solver's stderr is cut to its end, where MPI's abort lines may stand after the message)
        assert "allocating" not in str(got.value), bad     # no rank went on to the set-up
    monkeypatch.setenv("AUTOTUNE_COUNTS", "512,x")
    out = subprocess.run(launch_argv(LAUNCHER, 2, [str(exe), str(N), str(HEAT.size_value(N)), str(STEPS), "1e-5", "0"]),
                         capture_output=True, text=True, env=dict(os.environ, OMP_NUM_THREADS="1"))
    assert out.returncode == 2 and "AUTOTUNE_COUNTS=512,x: expected 2 whole numbers >= 1, comma-separated, " \
        "that sum to n = 1024" in out.stderr


def test_an_even_splits_solver_is_the_one_it_was():
    """The flag replaces the even split's loop by the counts' code; without it there is none."""
    loop = {"  for (int r = 0; r < size; ++r) {", "    counts[r] = (int)(n / size + (r < n % size));",
            "    displs[r] = r == 0 ? 0 : displs[r - 1] + counts[r - 1];", "  }"}
    for v in COVER:
        even, uneven = solver_source(HEAT, METHOD, v, N), solver_source(HEAT, METHOD, v, N, uneven=True)
        assert "AUTOTUNE_COUNTS" not in even and uneven.count("block_counts(n, size, counts, comm);") == 2
        lines = set(uneven.splitlines())
        assert {ln for ln in even.splitlines() if ln not in lines} <= loop, v.name


def test_an_uneven_solver_reports_each_ranks_busy_seconds(monkeypatch):
    """Each rank's seconds per timed step outside the exchange, the larger block's the larger."""
    n = 262144
    exe = build(solver_source(HEAT, METHOD, parse_variant("lc=ijl,comm=allgather", HEAT.comm), n, uneven=True), FLAGS)
    monkeypatch.setenv("AUTOTUNE_COUNTS", "32768,229376")
    out = run(exe, LAUNCHER, 2, 1, n, HEAT.size_value(n), 6, H, 2)
    assert out["block"] == 32768 and len(out["rank_busy_s"]) == 2
    small, big = out["rank_busy_s"]
    assert 0 < small < big <= out["median_step_s"] * 1.5


def test_the_online_solver_races_its_candidates_at_uneven_blocks(tmp_path, monkeypatch):
    """An online solver built for uneven blocks computes the even split's numbers at a split
    (whichever candidate its trial picks) and reports its trial."""
    from autotune.codegen.online import meta_of
    from autotune.pipeline.online import online_solver
    pair = [parse_variant("lc=ijl,comm=allgather", HEAT.comm), parse_variant("lc=jli,comm=neighbour", HEAT.comm)]
    monkeypatch.delenv("AUTOTUNE_COUNTS", raising=False)
    run(build(solver_source(HEAT, METHOD, pair[0], N), FLAGS), LAUNCHER, 1, 1, N, HEAT.size_value(N), 8, H, 0,
        tmp_path / "ref.bin")
    ref = np.fromfile(tmp_path / "ref.bin")
    src = online_solver(HEAT, METHOD, pair, N, None, meta_of(HEAT, METHOD, None, FLAGS, [None, None]), uneven=True)
    exe = build(src.source, FLAGS, parts=src.parts)
    monkeypatch.setenv("AUTOTUNE_COUNTS", "300,724")
    out = run(exe, LAUNCHER, 2, 1, N, HEAT.size_value(N), 8, H, 0, tmp_path / "y.bin")
    y = np.fromfile(tmp_path / "y.bin")
    assert np.max(np.abs(y - ref)) <= 1e-12 * np.max(np.abs(ref))
    assert out["block"] == 300 and out["online"]["choice"] in [v.name for v in pair]

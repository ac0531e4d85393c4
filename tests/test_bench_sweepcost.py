"""The sweep-cost benchmark's own edges: its input checked before anything runs, its lines fitted
as drawn, and the solver's sweeps timed at each tile and size (their figures are the
benchmark's to print)."""
import math

import pytest

MACHINE = "machines/zen4-epyc-vm-2core.yaml"


def test_bad_input_exits_2_with_one_line(capsys, tmp_path):
    from benchmarks.sweepcost import main
    assert main(["--machine", MACHINE, "--tiles", "64,x"]) == 2
    assert main(["--machine", MACHINE, "--fractions", "0.5,1.5"]) == 2
    assert main(["--machine", MACHINE, "--stores", "wide"]) == 2
    assert main(["--machine", MACHINE, "--rounds", "0"]) == 2
    assert main(["--machine", str(tmp_path / "none.yaml")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert [e.split(":")[0] for e in err] == ["--tiles, --fractions"] * 2 + ["--stores", "--rounds", "--machine"]


def test_the_fits_recover_a_cost_per_tile_and_per_sweep():
    from benchmarks.sweepcost import fits
    clock, threads, fixed, per_comp, per_tile = 2e9, 2, 1.5e-6, 1e-9, 40 / 2e9
    points = {}
    for t in (64, 128, 256):
        n = 8192
        points[f"tile {t}"] = {"n": n, "tile": t, "pred": fixed + per_comp * n + per_tile * math.ceil(n / threads / t)}
    for n in (2048, 4096, 8192):      # at the form's own tile: its tiles' cost grows with n, as the loops do
        points[f"n {n}"] = {"n": n, "tile": 512, "pred": fixed + per_comp * n}
    got = fits({"threads": threads, "points": points}, clock, 6.6e-7)["pred"]
    assert got["cycles_per_tile"] == pytest.approx(40)
    assert got["fixed_s"] == pytest.approx(fixed) and got["region_s"] == 6.6e-7
    assert got["cycles_per_line"] == pytest.approx(per_comp * threads * 8 * clock)


@pytest.mark.compiler
@pytest.mark.mpi
def test_each_point_is_timed_from_the_solvers_own_code(tmp_path):
    from autotune.specs.machine import load_machine
    from autotune.storage.yamlfile import dump_text, round_trip_yaml
    from benchmarks.sweepcost import measure
    yaml = round_trip_yaml()
    data = yaml.load(open(MACHINE).read())
    data["compiler"] = {"gcc": "-O2 -fopenmp"}      # its 2 cores, with code any x86 host runs
    path = tmp_path / "m.yaml"
    path.write_text(dump_text(yaml, data))
    m = measure(load_machine(str(path)), "inverterchain", False, [256, 512], [0.5, 1.0], 1)
    assert "fuse=rhs-lc" in m["variant"] and "block=l1" in m["variant"] and m["n_l2"] > 0
    assert {p["tile"] for k, p in m["points"].items() if k.startswith("tile ")} == {256, 512}
    assert all(p[kind] > 0 for p in m["points"].values() for kind in ("pred", "corr", "final"))

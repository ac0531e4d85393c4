"""The reference stencils of calibrate --node (specs.stencils): kernels whose traffic differs
between levels, measured beside the streaming kernels and fitted with them."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from autotune.model import refkernels as rk
from autotune.specs import stencils
from autotune.specs.hostmachine import Cache, HostInfo, Point, thread_share
from autotune.tools import hostprobe

SHIPPED = Path(__file__).parents[1] / "machines" / "zen4-epyc-vm-2core.yaml"
# a 2-core guest like the development machines: private L1 and L2, an L3 shared by both
ZEN4 = HostInfo("zen4", "AuthenticAMD", "25", "17", 2, 3e9,
                (Cache(1, 32 << 10, 8, 64, 1), Cache(2, 1 << 20, 8, 64, 1), Cache(3, 32 << 20, 16, 64, 2)))


def test_each_stencil_misses_one_level_and_is_measured_below_the_next():
    found = stencils.stencils(ZEN4, hostprobe.working_sets(ZEN4))
    assert [(s.name, s.misses, s.levels) for s in found] == [
        ("stencil_l1", "L1", ("L3", "MEM")), ("stencil_l2", "L2", ("MEM",))]
    for s, (upper, lower) in zip(found, [(32 << 10, 1 << 20), (1 << 20, 16 << 20)]):
        three_rows = 3 * s.row * 8
        assert three_rows >= stencils.MISS * upper                 # the layer condition misses it
        assert three_rows <= stencils.HOLD * lower                 # and holds in the next level
        assert s.row % stencils.LINE_ELEMENTS == 0


def test_no_stencil_where_the_next_level_cannot_hold_its_rows_or_the_arrays_have_too_few():
    # an L2 only 4 x L1: three rows of twice L1 take more than half of it
    small = HostInfo("x", "GenuineIntel", "6", "1", 1, 2e9, (Cache(1, 32 << 10, 8, 64, 1), Cache(2, 128 << 10, 8, 64, 1)))
    assert stencils.stencils(small, hostprobe.working_sets(small)) == ()
    # two levels: the stencil that misses L1 is measured in memory alone
    two = HostInfo("x", "GenuineIntel", "6", "1", 4, 2e9, (Cache(1, 32 << 10, 8, 64, 1), Cache(2, 1 << 20, 8, 64, 4)))
    found = stencils.stencils(two, hostprobe.working_sets(two))
    assert [(s.name, s.levels) for s in found] == [("stencil_l1", ("MEM",))]
    # a working set of fewer than MIN_ROWS rows per thread is not measured
    assert stencils.stencils(ZEN4, {"L3": 4096, "MEM": 4096}) == ()


def test_a_threads_working_set_is_split_in_a_shared_level_only():
    assert thread_share(ZEN4, "L3", 8 << 20, 2) == 4 << 20
    assert thread_share(ZEN4, "L2", 8 << 20, 2) == 8 << 20
    assert thread_share(ZEN4, "MEM", 8 << 20, 2) == 8 << 20


def _point(threads, ws, gbs):
    return Point(threads, ws, gbs, 0.01, (gbs * 0.99, gbs * 1.01), 5)


def _file(found):
    """A file with the streaming kernels' runs and the stencils' section, as calibrate writes them."""
    from autotune.specs import hostmachine as hm
    bandwidths = {"L3": {k: [_point(1, 8 << 20, 30.0), _point(2, 4 << 20, 55.0)] for k in hm.KERNELS},
                  "MEM": {k: [_point(1, 256 << 20, 12.0), _point(2, 256 << 20, 20.0)] for k in hm.KERNELS}}
    bandwidths["L3"]["stencil_l1"] = [_point(1, 8 << 20, 25.0), _point(2, 4 << 20, 45.0)]
    bandwidths["MEM"]["stencil_l1"] = [_point(1, 256 << 20, 11.0), _point(2, 256 << 20, 19.0)]
    bandwidths["MEM"]["stencil_l2"] = [_point(1, 256 << 20, 9.0), _point(2, 256 << 20, 14.0)]
    data = {"benchmarks": {"measurements": hm.measurements(bandwidths)}, "in-core measured": {}}
    return stencils.with_section(data, bandwidths, found)


def test_the_file_holds_the_stencils_apart_and_the_fit_reads_them_beside_the_kernels():
    found = stencils.stencils(ZEN4, hostprobe.working_sets(ZEN4))
    data = _file(found)
    assert list(data) == ["benchmarks", stencils.SECTION, "in-core measured"]
    section = data[stencils.SECTION]
    assert section["rows"] == {s.name: s.row for s in found}
    assert not any(k.startswith("stencil") for k in data["benchmarks"]["measurements"]["L3"][1]["results"])
    one, every = rk.one_thread(data), rk.every_core(data)
    assert one["L3"]["gbs"]["stencil_l1"] == pytest.approx(25.0) and "stencil_l2" not in one["L3"]["gbs"]
    assert one["MEM"]["gbs"]["stencil_l2"] == pytest.approx(9.0)
    assert every["MEM"]["gbs"]["stencil_l2"] == pytest.approx(14.0) and every["MEM"]["threads"] == 2
    kernels = rk.stencil_kernels(data)
    assert [(k.name, k.row, k.levels) for k in kernels] == [(s.name, s.row, s.levels) for s in found]
    assert rk.reference_kernels(data)[:len(rk.REFERENCE_KERNELS)] == rk.REFERENCE_KERNELS
    s1 = kernels[0]
    assert s1.constants(8 << 20) == {"M": (8 << 20) // 16 // s1.row, "N": s1.row}
    assert s1.measured_in("MEM") and not s1.measured_in("L2")
    # a stencil run at another working set than the level's kernels is not compared with them
    data[stencils.SECTION]["MEM"]["size per thread"][0] = "1.00 kB"
    assert "stencil_l1" not in rk.one_thread(data)["MEM"]["gbs"]
    # the references: a stencil only in the levels it was measured in
    refs = rk.references({}, rk.one_thread(_file(found)), 3e9, kernels=rk.reference_kernels(_file(found)))
    assert {(r.kernel, r.level) for r in refs if r.kernel.startswith("stencil")} == {
        ("stencil_l1", "L3"), ("stencil_l1", "MEM"), ("stencil_l2", "MEM")}


def test_the_section_passes_the_machine_schema():
    from autotune.specs.machine_schema import SCHEMA
    from autotune.specs.schema import first_error
    found = stencils.stencils(ZEN4, hostprobe.working_sets(ZEN4))
    schema = SCHEMA["properties"][stencils.SECTION]
    section = _file(found)[stencils.SECTION]
    assert first_error(section, schema) is None
    section["rows"]["stencil_l1"] = -3
    assert first_error(section, schema)[0] == ("rows", "stencil_l1")


def test_the_benchmark_runs_a_stencil_with_the_row_it_is_given(tmp_path, compiler):
    exe = hostprobe.build_stream(tmp_path)
    gbs = hostprobe.stream_gbps(exe, stencils.KERNEL, 4 << 20, 1, 0.01, row=1024)
    assert 0.1 < gbs < 10_000
    bad = subprocess.run([str(exe), stencils.KERNEL, "65536", "0.01", "row=2"], capture_output=True, text=True)
    assert bad.returncode == 2 and "row=W" in bad.stderr


@pytest.mark.kerncraft
def test_kerncraft_sees_the_stencils_move_more_over_the_upper_interface(compiler):
    """Against the shipped Zen 4 file: the stencil that misses L1 moves more lines between L1 and L2
    than copy and as many below; the one that misses L2 also more between L2 and L3."""
    from autotune.tools import refkernels_ecm
    found = stencils.stencils(ZEN4, hostprobe.working_sets(ZEN4))
    kernels = tuple(rk.RefKernel(s.name, rk.STENCIL_VIEW, stencils.ARRAYS, stencils.BYTES, row=s.row, levels=s.levels)
                    for s in found) + tuple(k for k in rk.REFERENCE_KERNELS if k.name == "copy")
    sizes = {"L3": 8 << 20, "MEM": 256 << 20}
    analyses, _ = refkernels_ecm.analyse(SHIPPED, sizes, kernels=kernels)
    assert set(analyses["stencil_l2"]) == {"MEM"} and set(analyses["stencil_l1"]) == {"L3", "MEM"}

    def term(kernel, level, where):
        return dict(analyses[kernel][level]["terms"]["transfers"])[where]
    for level in ("L3", "MEM"):
        assert term("stencil_l1", level, "L2") > 1.5 * term("copy", level, "L2")
        assert term("stencil_l1", level, "L3") == pytest.approx(term("copy", level, "L3"))
    assert term("stencil_l2", "MEM", "L3") > 1.5 * term("copy", "MEM", "L3")
    assert term("stencil_l2", "MEM", "MEM") == pytest.approx(term("copy", "MEM", "MEM"))

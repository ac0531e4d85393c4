"""calibrate --node measures the last cache level's capacity as the node's data get it
(specs.capacity, tools.hostprobe.measure_capacity): a guest that shares the socket's L3 keeps its
data there only up to a part of what the OS reports, and the file says so."""
from __future__ import annotations

from pathlib import Path

import pytest

from autotune.progress import Callbacks, SILENT
from autotune.specs import capacity
from autotune.specs import hostmachine as hm

MIB = 2**20


def _guest(l3_mib: float = 300, ways: int = 20) -> hm.HostInfo:
    """A 2-core guest with a shared L3 of l3_mib as the OS reports it."""
    return hm.HostInfo("Intel(R) Xeon(R) Processor", "GenuineIntel", "6", "207", 2, 2.1e9,
                       (hm.Cache(1, 48 * 1024, 12, 64, 1), hm.Cache(2, 2 * MIB, 16, 64, 1),
                        hm.Cache(3, int(l3_mib * MIB), ways, 64, 2)), "cpuinfo")


def _curve(sizes, fall_mib: float, plateau: float = 46.0, memory: float = 25.0) -> list[list[float]]:
    """Three rounds of a triad that runs at `plateau` up to fall_mib in all and at `memory` beyond,
    with one slow round-robin round among them (a neighbour's spell touches every size alike)."""
    return [[(plateau if s <= fall_mib * MIB else memory) * f for f in (1.0, 0.97, 0.6)] for s in sizes]


def test_the_scan_spans_the_level_from_above_its_upper_neighbours_to_twice_its_size():
    host = _guest()
    sizes = capacity.scan_sizes(host)
    assert sizes == sorted(sizes) and len(sizes) == 16
    assert sizes[0] >= capacity.FROM * 300 * MIB - 4096 and sizes[0] >= capacity.BELOW * (2 * 2 * MIB)
    assert sizes[-1] == pytest.approx(600 * MIB, rel=0.01)
    assert all(s % 4096 == 0 for s in sizes)
    # a last level hardly larger than the levels above it is not scanned: a fall there is theirs
    small = hm.HostInfo("x", "GenuineIntel", "6", "85", 2, 2e9,
                        (hm.Cache(1, 32 * 1024, 8, 64, 1), hm.Cache(2, MIB, 16, 64, 1),
                         hm.Cache(3, int(2.75 * MIB), 11, 64, 2)))
    assert capacity.scan_sizes(small) == []
    scan = capacity.effective(small, [], [])
    assert scan.found == "not scanned" and scan.capacity == small.caches[-1].size
    assert capacity.with_capacity(small, scan) is small


def test_a_fall_under_the_reported_size_is_the_capacity_the_file_holds():
    host = _guest()
    sizes = capacity.scan_sizes(host)
    scan = capacity.effective(host, sizes, _curve(sizes, fall_mib=100))
    assert scan.found == "measured" and scan.measured
    assert scan.plateau == pytest.approx(46 * 0.97) and scan.memory == pytest.approx(25 * 0.97)
    # between the last size at the plateau and the first at memory's, on one instance shared by both cores
    below, above = max(s for s in sizes if s <= 100 * MIB), min(s for s in sizes if s > 100 * MIB)
    assert below <= scan.capacity <= above
    assert scan.capacity % (20 * 64) == 0                   # whole sets of the level's ways
    assert "stay in it up to" in scan.describe() and "the OS says 300 MiB" in scan.describe()
    out = capacity.with_capacity(host, scan)
    assert out.caches[-1].size == scan.capacity and out.caches[:-1] == host.caches[:-1]
    assert scan.to_dict()["capacity_bytes"] == scan.capacity and len(scan.to_dict()["gbps"]) == len(sizes)


def test_a_level_that_holds_its_reported_size_or_is_not_told_from_memory_keeps_it():
    host = _guest()
    sizes = capacity.scan_sizes(host)
    whole = capacity.effective(host, sizes, _curve(sizes, fall_mib=310))       # it falls past 300 MiB
    assert whole.found == "as the OS says" and whole.capacity == 300 * MIB
    flat = capacity.effective(host, sizes, _curve(sizes, fall_mib=100, plateau=27.0))
    assert flat.found == "not told apart" and flat.capacity == 300 * MIB and "not 1.2 x" in flat.describe()


def test_the_scan_runs_round_robin_on_every_core(monkeypatch):
    from autotune.tools import hostprobe
    host = _guest()
    sizes = capacity.scan_sizes(host)
    order = []

    def run(exe, kernel, per_thread, threads, min_seconds):
        order.append(per_thread)
        assert kernel == capacity.KERNEL and threads == host.cores
        return 46.0 if per_thread * threads <= 100 * MIB else 25.0

    monkeypatch.setattr(hostprobe, "build_stream", lambda folder, cc="gcc": Path("stream"))
    monkeypatch.setattr(hostprobe, "stream_gbps", run)
    seen = []
    scan = hostprobe.measure_capacity(host, Callbacks(say=seen.append))
    per_round = [s // host.cores for s in sizes]
    assert order == per_round * capacity.ROUNDS               # every size once per round, in turn
    assert scan.measured and scan.capacity < 300 * MIB and "stay in it" in seen[-1]


def test_the_file_describes_the_capacity_measured_and_loads_in_kerncraft(tmp_path):
    import yaml
    from autotune.pipeline.hostmachine import _dump
    from autotune.specs.cpus import identify, load_table, parse_cpuinfo
    from autotune.specs.machine import load_machine
    from autotune.tools.cpuprobe import osaca_ports
    cpuinfo = ("processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 85\nmodel name\t: "
               "Intel Xeon\nstepping\t: 4\nflags\t\t: fpu sse sse2 ssse3 fma sse4_1 sse4_2 avx f16c avx2 avx512f\n")
    ident = identify(parse_cpuinfo(cpuinfo), load_table())
    host = _guest()
    sizes = capacity.scan_sizes(host)
    scan = capacity.effective(host, sizes, _curve(sizes, fall_mib=100))
    bw = {lvl: {k: [hm.Point(1, 1 << 20, g), hm.Point(2, 1 << 20, 2 * g)] for k in hm.KERNELS}
          for lvl, g in {"L1": 200.0, "L2": 100.0, "L3": 40.0, "MEM": 20.0}.items()}
    data = hm.build(capacity.with_capacity(host, scan), ident, ["-march=skylake-avx512"], "x", osaca_ports("SKX"),
                    bw, "guest", 1, "0.8.18", "today", capacity=scan.describe(), capacity_measured=scan.measured)
    path = tmp_path / "guest.yaml"
    path.write_text(_dump(data))
    d = yaml.safe_load(path.read_text())
    l3 = d["memory hierarchy"][2]
    assert l3["size per group"] == f"{scan.capacity / 1024:.2f} kB"
    assert l3["cache per group"]["sets"] * 20 * 64 == scan.capacity
    assert "stay in it up to" in d["provenance"]["capacity"] and "capacity" in d["provenance"]["measured"]
    m = load_machine(str(path))
    assert m.caches[2].bytes_per_group == pytest.approx(scan.capacity, rel=1e-4)


def test_a_host_whose_os_gives_no_cache_is_not_scanned(monkeypatch):
    from autotune.tools import hostprobe

    def never(*a, **k):
        raise AssertionError("ran the benchmark")
    monkeypatch.setattr(hostprobe, "stream_gbps", never)
    bare = hm.HostInfo("cpu", "GenuineIntel", "6", "1", 2, 2e9, ())
    assert hostprobe.measure_capacity(bare, SILENT) is None

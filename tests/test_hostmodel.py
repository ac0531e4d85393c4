import contextlib
import json
import os
import platform
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from autotune.progress import SILENT
from autotune.tools import hostprobe as hostmodel
from autotune.specs import hostmachine, runstats
from autotune.specs.machine import load_machine

from .conftest import run_cli, uarch_args


def _fake_host(tmp_path):
    cpu = tmp_path / "cpu"
    for i, (level, kind, size, ways, shared) in enumerate([(1, "Data", "48K", 12, "0"), (1, "Instruction", "32K", 8, "0"),
                                                           (2, "Unified", "2048K", 16, "0"),
                                                           (3, "Unified", "36864K", 12, "0-3")]):
        d = cpu / "cpu0" / "cache" / f"index{i}"
        d.mkdir(parents=True)
        for name, value in [("level", level), ("type", kind), ("size", size), ("ways_of_associativity", ways),
                            ("coherency_line_size", 64), ("shared_cpu_list", shared)]:
            (d / name).write_text(f"{value}\n")
    info = tmp_path / "cpuinfo"
    info.write_text("vendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 143\n"
                    "model name\t: Intel(R) Xeon(R) Gold 6430\ncpu MHz\t\t: 2100.000\n")
    return hostmodel.detect(cpu, info)


def test_detect_reads_cache_geometry_and_cpu(tmp_path):
    host = _fake_host(tmp_path)
    assert host.vendor == "GenuineIntel" and host.model_name.startswith("Intel(R) Xeon(R) Gold")
    assert [(c.level, c.size, c.ways, c.shared_by) for c in host.caches] == [
        (1, 48 * 1024, 12, 1), (2, 2 * 2**20, 16, 1), (3, 36 * 2**20, 12, 4)]
    assert host.clock_hz == 2.1e9 and "cpu MHz" in host.clock_source
    ws = hostmodel.working_sets(host)
    assert ws["L1"] < ws["L2"] < ws["L3"] < ws["MEM"]


@pytest.mark.kerncraft
def test_calibrate_node_on_this_host(tmp_path, capsys, compiler):
    target = tmp_path / "here.yaml"
    code, out, err = run_cli(capsys, "calibrate", "--machine", "here", "--node", "--out", target,
                             "--min-seconds", "0.002", "--format", "json", *uarch_args())
    assert code == 0, err
    res = json.loads(out)
    m = load_machine(str(target))
    # the file's clock is the one measured under load on every core, not the OS's figure
    assert res["clock_measured"] and m.clock_hz == pytest.approx(res["clock_ghz"] * 1e9, rel=0.01)
    assert res["os_clock_ghz"] == pytest.approx(hostmodel.detect().clock_hz / 1e9)
    if res["os_clock_ghz"]:
        assert 0.5 < res["clock_ghz"] / res["os_clock_ghz"] < 3 and 0.5 < res["clock_1core_ghz"] / res["os_clock_ghz"] < 3
    assert "clock under load" in err and "the OS says" in err
    assert m.cores == res["cores"] >= 1 and m.caches[0].name == "L1"
    # the last cache level as the node's data get it: the file holds the capacity the scan found,
    # never more than the OS reports
    last = res["last_level"]
    if last:
        assert last["level"] == m.caches[-1].name and 0 < last["capacity_bytes"] <= last["nominal_bytes"]
        assert m.caches[-1].bytes_per_group == pytest.approx(last["capacity_bytes"], rel=1e-3)
        assert last["found"] in ("measured", "as the OS says", "not told apart", "not scanned")
        assert len(last["gbps"]) == len(last["sizes_bytes"]) and all(g > 0 for g in last["gbps"])
    bw, one = res["bandwidth_gbs"], res["bandwidth_1thread_gbs"]
    for level in ("L1", "MEM"):
        assert all(0.1 < v < 10_000 for v in bw[level].values())   # GB/s a real machine can have
    # the first cache level streams faster than memory on one core (copy and load alike)
    assert one["L1"]["load"] > 1.5 * one["MEM"]["load"] and one["L1"]["copy"] > 1.5 * one["MEM"]["copy"]
    text = target.read_text()
    assert "provenance" in text and "streaming benchmark" in text and "bandwidth L1" in err
    # copy and triad with non-temporal stores, in memory, in their own section (not benchmarks)
    if hostmodel.stream_has_nt(hostmodel.build_stream(tmp_path)):
        assert {(s.level, s.kernel) for s in m.streaming_stores} == {("MEM", "copy"), ("MEM", "triad")}
        assert all(len(s.nt_bps) == len(s.allocated_bps) == m.cores for s in m.streaming_stores)
        assert 0.1 < bw["MEM"]["copy_nt"] < 10_000 and "copy_nt" not in bw["L1"]
    import yaml
    data = yaml.safe_load(text)
    assert not any(k.endswith("_nt") for k in data["benchmarks"]["kernels"])
    assert set(data["provenance"]["clock"]) >= {"all cores", "one core", "OS"}
    # the analysis compiles for this CPU's instruction set: no extension the CPU lacks
    from autotune.tools.cpuprobe import missing_on_host
    assert m.isa_flags and missing_on_host(m.isa_flags) == []
    assert res["uarch"]["osaca"] == m.incore_model
    # the step's barrier events, measured: a parallel region's end and the next one's start
    bar = res["barrier"]
    assert list(bar["seconds"]) == [str(t) for t in hostmachine.barrier_thread_counts(m.cores)]
    assert all(0 < v < 1e-3 for v in bar["seconds"].values()) and "barrier events" in err
    assert m.barrier["model"] == "fitted" and m.barrier["per_doubling_s"] == pytest.approx(bar["per_doubling_s"])
    if m.cores >= 2:   # one thread waits for no other: its regions cost less than a team's
        assert bar["seconds"][str(m.cores)] > bar["seconds"]["1"] and bar["per_doubling_s"] > 0
    # each kernel part's in-core time is measured on this CPU, at the first analysis
    from autotune.specs.incoremeasure import cpu_key
    from autotune.tools.cpuprobe import host_cpu
    assert m.incore_measured["cpu"] == cpu_key(host_cpu())
    assert m.incore_measured["when"] == ("always" if res["uarch"]["assumed"] or res["uarch"].get("borrowed_from")
                                         else "disagree")
    _explain_measures_the_parts(capsys, target, tmp_path)


FUSED = "lc=jl-onepass,comm=allgather,au=fused,pred=direct,buf=ghost,rhs=onepass,fuse=rhs-lc,block=l1"


def _explain_measures_the_parts(capsys, machine, tmp_path):
    """A cold explain on the fresh file measures the fused variant's parts on this host, prices
    each with the measurement where the rule says so, and shows both figures."""
    store = tmp_path / "store.sqlite"
    args = ("explain", "--ivp", "heat2d", "--nodes", "1", "--n", "40000", "--machine", machine, "--variant", FUSED,
            "--store", store)
    code, out, err = run_cli(capsys, *args, "--format", "json")
    assert code == 0, err
    assert "measuring the in-core time of" in err
    d = json.loads(out)
    incore = d["incore"]
    assert incore and all(e["measured_cy_per_cl"] > 0 and e["port_cy_per_cl"] > 0 for e in incore.values())
    when, tol = load_machine(str(machine)).incore_measured["when"], 0.15
    for e in incore.values():
        off = abs(e["measured_cy_per_cl"] / e["port_cy_per_cl"] - 1)
        assert e["source"] == ("measured" if when == "always" or off > tol else "port model"), e
    code, text, err = run_cli(capsys, *args)                 # warm: the store's measurements
    assert code == 0 and "measuring the in-core time" not in err
    assert "in-core time, cy/CL" in text and "port model" in text and "measured" in text


def test_the_streaming_benchmark_writes_through_the_caches(tmp_path, compiler):
    """Its kernels store through the caches, as the write-allocate correction of the bytes assumes
    (kerncraft counts a write-allocate read for every written stream): a copy loop the compiler
    turned into a memcpy call streams out with non-temporal stores at large sizes, which made the
    copy bandwidth of memory 1.5 x too high."""
    exe = hostmodel.build_stream(tmp_path)
    data = exe.read_bytes()
    assert b"aligned_alloc" in data                      # the dynamic symbols are there to read
    assert b"memcpy" not in data and b"memmove" not in data


# the bytes a kernel names per element, read and written, 8 each (stream.c's loops), and the
# arrays it sweeps: load reads a; update a = s a; copy b = a; daxpy a = a + s b; triad a = b + c d;
# the stencil b = the five-point sum of a (its interior: 0.3 % fewer at the default row and 48 MiB)
NAMED = {"load": (8, 1), "update": (16, 1), "copy": (16, 2), "daxpy": (24, 2), "triad": (32, 4),
         "copy_nt": (16, 2), "triad_nt": (32, 4), "stencil": (16, 2)}


def _served(exe, kernel: str, bytes_per_thread: int, threads: int, sweeps: int) -> list[tuple[float, float]]:
    """(GB/s the benchmark printed, seconds the request took, timed here) for each of `sweeps`
    single sweeps: serve mode with no minimum time sweeps the arrays once per line read."""
    p = subprocess.Popen([str(exe), kernel, str(bytes_per_thread), "0", "serve"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True, env=hostmodel._omp_env(threads))
    try:
        out = []
        for _ in range(sweeps + 1):                       # the first warms the caches and the TLB
            t0 = time.perf_counter()
            p.stdin.write("\n")
            p.stdin.flush()
            line = p.stdout.readline()
            seconds = time.perf_counter() - t0
            printed_threads, gbps, _ = line.split()
            assert int(printed_threads) == threads
            out.append((float(gbps), seconds))
    finally:
        p.stdin.close()
        p.wait(60)
    return out[1:]


def _least_ratio(exe, kernel: str, per_thread: int, threads: int) -> float:
    """The least, over single sweeps, of the request's seconds over the sweep's seconds that the
    printed GB/s implies for the bytes the kernel names.  It is 1 and a little (the request holds
    the sweep); a busy machine adds its delays to the request alone, so further rounds of 9 are
    taken while it is over 1.2, up to 5."""
    named, arrays = NAMED[kernel]
    moved = named * (per_thread // (8 * arrays)) * threads
    least = float("inf")
    for _ in range(5):
        least = min([least] + [seconds * gbps * 1e9 / moved
                               for gbps, seconds in _served(exe, kernel, per_thread, threads, 9)])
        if least < 1.2:
            break
    return least


def test_the_streaming_benchmark_counts_the_bytes_its_kernels_name(tmp_path, compiler):
    """Each kernel's GB/s against the time of the same sweep taken from outside: the bytes its
    loop names over the seconds the request took.  The request's time holds the sweep and a pipe's
    round trip, so the two agree to within the round trip (2-6 % measured on a shared 2-core guest
    whose bandwidth moves by 30 % between minutes: both clocks time the same sweep, and the least
    of the requests is taken).  A byte miscounted in a kernel's table (one array more or less: 25 %
    and up), the threads or the elements left out of the figure, or a wrong time unit fall
    outside; so does a figure of stream_gbps read from the wrong field."""
    exe = hostmodel.build_stream(tmp_path)
    kernels = [k for k in NAMED if not k.endswith("_nt") or hostmodel.stream_has_nt(exe)]
    per_thread = 48 * 2**20                     # beyond the caches of most CPUs: a sweep takes milliseconds
    for threads in sorted({1, min(2, os.cpu_count() or 1)}):
        for kernel in kernels:
            ratio = _least_ratio(exe, kernel, per_thread, threads)
            assert 0.99 < ratio < 1.2, (kernel, threads, ratio)


def test_stream_gbps_passes_the_run_and_reads_its_bandwidth(tmp_path):
    """What stream_gbps asks of the benchmark and reads of its line (threads GB/s check), on a
    stand-in that echoes its arguments and environment."""
    fake = tmp_path / "stream"
    fake.write_text('#!/bin/sh\necho "$OMP_NUM_THREADS $OMP_PROC_BIND $*" > "$0.args"\necho "3 12.3456 0"\n')
    fake.chmod(0o755)
    assert hostmodel.stream_gbps(fake, "triad", 1 << 20, 3, 0.25) == 12.3456
    assert (tmp_path / "stream.args").read_text().split() == ["3", "close", "triad", str(1 << 20), "0.25"]
    hostmodel.stream_gbps(fake, "stencil", 1 << 20, 1, 0.25, row=4096)
    assert (tmp_path / "stream.args").read_text().split()[2:] == ["stencil", str(1 << 20), "0.25", "row=4096"]


def test_calibrate_node_dry_run_says_the_clock_is_the_os_one(tmp_path, capsys):
    code, out, err = run_cli(capsys, "calibrate", "--node", "--name", tmp_path / "dry.yaml", "--dry-run",
                             *uarch_args())
    assert code == 0, err
    assert "the OS's figure, not measured under load" in out and "clock under load" not in err
    assert not (tmp_path / "dry.yaml").exists()


def test_median_spread_and_the_clock_chosen():
    assert runstats.median_spread([3.0, 1.0, 2.0]) == (2.0, 1.0)
    assert runstats.median_spread([4.0, 4.0]) == (4.0, 0.0)
    with pytest.raises(ValueError):
        runstats.median_spread([])
    # a run's figure is the median of its threads, the measurement's the median of its runs; a run
    # with a thread that measured nothing is left out
    one = [[4.3], [4.1], [4.2]]
    every = [[4.0, 3.9, 4.1], [3.8, 3.8, 3.9], [4.0, 4.0, 4.2], [4.1, 0.0, 4.1]]
    c = hostmachine.clock_under_load(2.6e9, "cpuinfo", one, every)
    assert c.one_core_hz == pytest.approx(4.2e9) and c.one_core_spread == pytest.approx(0.2 / 4.2)
    assert c.all_cores_hz == pytest.approx(4.0e9) and c.all_cores_spread == pytest.approx(0.2 / 4.0)
    assert c.cores == 3 and c.runs == 4
    # the file takes the all-cores figure (a core alone may boost higher); the OS's where nothing was measured
    host = hostmachine.HostInfo("cpu", "v", "1", "2", 3, 2.6e9, (), "cpuinfo")
    assert hostmachine.file_clock_hz(host, c) == c.all_cores_hz
    assert hostmachine.file_clock_hz(host, None) == 2.6e9
    prov = hostmachine.clock_provenance(host, c)
    assert prov["all cores"].startswith("4.00 GHz") and prov["one core"].startswith("4.20 GHz")
    assert prov["OS"].startswith("2.60 GHz")
    assert "not measured" in hostmachine.clock_provenance(host, None)["file"]
    assert "4.00 GHz on all 3 cores" in c.describe() and "the OS says 2.60 GHz" in c.describe()


def test_the_chain_of_dependent_adds_measures_a_sane_clock(tmp_path, compiler):
    """One add per cycle: the chain's rate is the clock, within a sane band of the OS's figure."""
    exe = hostmodel.build_chain(tmp_path)
    runs = hostmodel.chain_runs(exe, 1, 3, 0.02)
    assert len(runs) == 3 and all(len(r) == 1 for r in runs)
    os_hz = hostmodel.detect().clock_hz
    for (ghz,) in runs:
        assert 0.3 < ghz < 8.0
        if os_hz:
            assert 0.5 < ghz * 1e9 / os_hz < 3
    every = hostmodel.chain_runs(exe, 2, 2, 0.01)
    assert len(every) == 2 and all(len(r) == 2 and min(r) > 0 for r in every)


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64") or not shutil.which("objdump"),
                    reason="the non-temporal store instructions checked are x86's (objdump)")
def test_the_streaming_benchmark_nt_kernels_use_non_temporal_stores(tmp_path, compiler):
    exe = hostmodel.build_stream(tmp_path)
    asm = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(exe)], capture_output=True, text=True,
                         check=True).stdout
    assert asm.count("movntpd") >= 2      # movntpd or vmovntpd: in copy_nt and in triad_nt
    assert hostmodel.stream_has_nt(exe)


def test_median_spread_edge_cases_and_the_wide_ones():
    assert runstats.median_spread([5.0]) == (5.0, 0.0)                    # one run: no spread
    assert runstats.median_spread([1.0, 2.0, 3.0, 4.0]) == (2.5, 3.0 / 2.5)   # an even count: the mean of two
    assert runstats.median_spread([0.0, 0.0]) == (0.0, 0.0)               # a median of 0 divides nothing
    mid, spread = runstats.median_spread([30.0, 30.5, 29.8, 31.0, 90.0])  # one fast spell moves the
    assert mid == 30.5 and spread == pytest.approx((90.0 - 29.8) / 30.5)      # spread, not the median
    assert hostmachine.percent(0.0314) == "3.1 %" and hostmachine.percent(0.0) == "0.0 %"
    # wider than WIDE_SPREAD (20 %) is wide; exactly 20 % is not; recorded rows without runs have no spread
    bw = {"MEM": {"copy": [hostmachine.Point(1, 1000, 10.0, 0.2), hostmachine.Point(2, 1000, 18.0, 0.2001)],
                  "load": [(1, 1000, 12.0), (2, 1000, 20.0)]}}
    assert hostmachine.WIDE_SPREAD == 0.20
    assert hostmachine.wide_spreads(bw) == [{"level": "MEM", "kernel": "copy", "threads": 2, "gbps": 18.0,
                                             "spread": 0.2001}]
    assert hostmachine.wide_spreads(bw, limit=0.1)[0]["threads"] == 1
    # where a level has a row without its spread, the file gets none for it (nothing is made up)
    assert "spread" not in hostmachine.measurements(
        {"MEM": {k: [(1, 1000, 10.0)] for k in hostmachine.KERNELS}})["MEM"][1]


# recorded runs (GB/s) of a 2-core shared guest: quiet but for two points of memory on 2 threads, one
# that a busy neighbour slowed in one run (triad: 41 among 68-74) and one with a single fast spell (load)
SHARED_GUEST = {"L1": 120.0, "L2": 60.0, "L3": 40.0, "MEM": 25.0}
WIDE_RUNS = {("MEM", "triad", 2): [41.0, 74.0, 70.0, 68.0, 72.0], ("MEM", "load", 2): [30.0, 30.5, 29.8, 31.0, 90.0]}


def _guest() -> hostmachine.HostInfo:
    return hostmachine.HostInfo("AMD EPYC 9R14", "AuthenticAMD", "25", "17", 2, 2.6e9,
                                (hostmachine.Cache(1, 32 * 1024, 8, 64, 1), hostmachine.Cache(2, 1024 * 1024, 8, 64, 1),
                                 hostmachine.Cache(3, 32 * 2**20, 16, 64, 2)), "cpuinfo")


def _recorded_bandwidths() -> dict:
    """What hostprobe.measure returns for the recorded runs: a Point per thread count, the upper
    quartile and spread of its runs."""
    out = {}
    for level, base in SHARED_GUEST.items():
        kernels = hostmachine.KERNELS + (hostmachine.NT_KERNELS if level in hostmachine.NT_LEVELS else ())
        runs = {(k, t): WIDE_RUNS.get((level, k, t), [base * t * f for f in (1.0, 1.01, 0.99, 1.02, 0.995)])
                for k in kernels for t in (1, 2)}
        out[level] = {k: [hostmachine.Point(t, 100_000, *runstats.attainable_spread(runs[k, t]), None, 5,
                                            tuple(runs[k, t])) for t in (1, 2)] for k in kernels}
    return out


def _kerncraft_loads(path) -> float:
    """The file as kerncraft reads it (its own loader): the memory bandwidth it prices a load-only
    stream with, the most of the load kernel's figures over the cores."""
    from kerncraft.machinemodel import MachineModel
    bw, kernel = MachineModel(str(path)).get_bandwidth(3, 1, 0, 1)   # memory (level 3), 1 thread per core
    assert kernel == "load"
    return float(bw)


def test_the_written_file_keeps_each_bandwidths_spread_and_loads_in_kerncraft(tmp_path):
    import yaml
    from autotune.pipeline.hostmachine import _dump
    from autotune.specs.cpus import identify, load_table, parse_cpuinfo
    from autotune.tools.cpuprobe import osaca_ports
    cpuinfo = ("processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 1\nmodel name\t: "
               "AMD EPYC 7763\nstepping\t: 1\nflags\t\t: fpu sse sse2 ssse3 fma sse4_1 sse4_2 avx f16c avx2 bmi2\n")
    zen3 = identify(parse_cpuinfo(cpuinfo), load_table())
    bw = _recorded_bandwidths()
    barrier = {"per_doubling_s": 1.1e-6, "error_pct": None, "seconds": {1: 4e-8, 2: 1.1e-6}}
    data = hostmachine.build(_guest(), zen3, ["-march=znver3"], "-march=znver3", osaca_ports("ZEN3"), bw, "guest", 1,
                             "0.8.18", "today", barrier=barrier)
    path = tmp_path / "guest.yaml"
    path.write_text(_dump(data))                        # as calibrate --node writes it
    text = path.read_text()
    mem = yaml.safe_load(text)["benchmarks"]["measurements"]["MEM"][1]
    # the spread sits beside kerncraft's results, a percentage per kernel and thread count, the
    # kernels with non-temporal stores among them (they ran in the same rounds)
    assert set(mem["spread"]) == set(hostmachine.KERNELS) | set(hostmachine.NT_KERNELS)
    assert set(mem["results"]) == set(hostmachine.KERNELS)
    # the spread is over the median (70); the file's figure is the upper quartile, the 4th of 5 runs
    assert mem["spread"]["triad"][1] == f"{100 * 33 / 70:.1f} %" == "47.1 %" and mem["results"]["triad"][1] == "72.00 GB/s"
    assert mem["spread"]["copy"][0] == "3.0 %"
    assert "spread" not in yaml.safe_load(text)["streaming stores"]["MEM"]
    assert "benchmarks.measurements.<level>.1.spread" in yaml.safe_load(text)["streaming stores"]["note"]
    assert "their spread, (max - min) / median" in yaml.safe_load(text)["provenance"]["measured"]
    assert _kerncraft_loads(path) == pytest.approx(31.0e9)    # the upper quartile, not the fast spell's 90 GB/s
    m = load_machine(str(path))
    # the floor's figure: the largest of the kernels' upper quartiles; load's single 90 GB/s run did not set it
    assert m.bandwidth("MEM", 2) == pytest.approx(72e9)
    assert m.bandwidth("L1", 2) == pytest.approx(240e9 * 1.01)
    spreads = dict(m.bandwidth_spreads)
    assert set(spreads) == {"L1", "L2", "L3", "MEM"}
    assert spreads["MEM"][1] == pytest.approx((90.0 - 29.8) / 30.5, abs=1e-3)   # the widest kernel's
    assert spreads["MEM"][0] == pytest.approx(0.03) and spreads["L1"] == pytest.approx((0.03, 0.03))
    # the barrier events measured on the node price the step's barriers; the network stays assumed
    assert m.barrier["model"] == "fitted" and m.barrier["per_doubling_s"] == pytest.approx(1.1e-6)
    assert "1 thread(s) 0.04 us, 2 thread(s) 1.10 us" in m.barrier["provenance"]
    prov = yaml.safe_load(text)["provenance"]
    assert prov["assumed"].endswith("network until calibrated") and "barrier events" in prov["measured"]


def test_the_barrier_events_are_measured_at_each_doubling_and_every_core():
    assert hostmachine.barrier_thread_counts(1) == [1]
    assert hostmachine.barrier_thread_counts(2) == [1, 2]
    assert hostmachine.barrier_thread_counts(6) == [1, 2, 4, 6]
    assert hostmachine.barrier_thread_counts(8) == [1, 2, 4, 8]


def test_a_file_without_spreads_loads_and_a_bad_spread_is_refused():
    import yaml
    from autotune.errors import InputError
    from autotune.specs.loading import parse_yaml
    from autotune.specs.machine import parse_machine
    from autotune.specs.shipped import shipped_dir
    shipped = shipped_dir("machines") / "haswell-ep-e5-2630v3.yaml"
    data = parse_yaml(shipped.read_text(), shipped)
    assert load_machine(str(shipped)).bandwidth_spreads == ()
    mem = next(iter(data["benchmarks"]["measurements"]["MEM"].values()))
    n = len(mem["cores"])
    mem["spread"] = {k: ["2.5 %"] * n for k in mem["results"]}
    mem["spread"]["copy"][n - 1] = "12.0 %"
    m = parse_machine(yaml.safe_load(yaml.safe_dump(data)), "h.yaml", "h")
    assert dict(m.bandwidth_spreads)["MEM"] == pytest.approx((0.025,) * (n - 1) + (0.12,))
    mem["spread"]["copy"] = ["2.5 %"]
    with pytest.raises(InputError, match=r"h.yaml: field 'benchmarks.measurements.MEM.1.spread.copy': expected a "
                                         rf"spread for each of the {n} core counts"):
        parse_machine(data, "h.yaml", "h")
    mem["spread"]["copy"] = ["2.5"] * n
    with pytest.raises(InputError, match=r"benchmarks.measurements.MEM.1.spread.copy\[0\].*'2.5'"):
        parse_machine(data, "h.yaml", "h")


def _recorded_host(monkeypatch):
    """calibrate --node's measurements replaced by the recorded guest's: its caches, clock and runs."""
    from autotune.tools import hostprobe
    clock = hostmachine.clock_under_load(2.6e9, "cpuinfo", [[3.65]] * 7, [[3.64, 3.64]] * 7)
    monkeypatch.setattr(hostprobe, "detect", _guest)
    monkeypatch.setattr(hostprobe, "measure_clock", lambda host, progress: clock)
    monkeypatch.setattr(hostprobe, "measure", lambda host, progress, min_seconds, **kw: _recorded_bandwidths())
    monkeypatch.setattr(hostprobe, "stream_exe", lambda cc="gcc": contextlib.nullcontext(Path("stream")))
    monkeypatch.setattr(hostprobe, "measure_capacity", lambda host, progress, min_seconds, **kw: None)


def test_a_wide_spread_is_warned_of_and_in_the_result(tmp_path, capsys, monkeypatch):
    """calibrate --node on recorded runs (the measurements and the reference kernels' check
    replaced by their recorded outcome): the progress names each wide point, the JSON lists them,
    the table says so, and the file written loads in kerncraft and here."""
    from autotune.pipeline import refkernels
    _recorded_host(monkeypatch)
    monkeypatch.setattr(refkernels, "settle_transfers", lambda target, progress: {})
    target = tmp_path / "guest.yaml"
    argv = ("calibrate", "--node", "--name", "guest", "--out", target, *uarch_args())
    code, out, err = run_cli(capsys, *argv, "--format", "json")
    assert code == 0, err
    assert ("warning: bandwidth MEM triad on 2 thread(s): its 5 runs spread 47.1 % (max - min over the median, "
            "over 20.0 %); the file keeps the upper quartile, 72.00 GB/s") in err
    assert "warning: bandwidth MEM load on 2 thread(s): its 5 runs spread 197.4 %" in err
    wide = json.loads(out)["wide_spreads"]
    assert [(w["level"], w["kernel"], w["threads"]) for w in wide] == [("MEM", "load", 2), ("MEM", "triad", 2)]
    assert wide[1]["spread"] == pytest.approx(33 / 70) and wide[1]["gbps"] == 72.0
    # every run is in the JSON, in the order run, beside how many there were
    assert json.loads(out)["bandwidth_samples"]["MEM"]["triad"] == [[25.0 * f for f in (1.0, 1.01, 0.99, 1.02, 0.995)],
                                                                    [41.0, 74.0, 70.0, 68.0, 72.0]]
    assert json.loads(out)["bandwidth_runs"]["MEM"]["triad"] == [5, 5]
    m = load_machine(str(target))
    assert dict(m.bandwidth_spreads)["MEM"][1] == pytest.approx(60.2 / 30.5, abs=1e-3)
    assert _kerncraft_loads(target) == pytest.approx(31.0e9)
    code, text, _ = run_cli(capsys, *argv)
    assert code == 0
    assert ("  warning: MEM triad on 2 thread(s): runs spread 47.1 % (over 20 %), the file keeps the upper "
            "quartile 72.00 GB/s") in text
    from autotune.report.calibrate import wide_lines
    many = [dict(w, threads=t) for t in range(1, 6) for w in wide]
    assert wide_lines(many) == ["  warning: 10 bandwidths' runs spread over 20 % ((max - min) / median), the widest "
                                "MEM load on 1 thread(s) 197.4 %; the file keeps the upper quartiles (the JSON lists them all)"]
    assert wide_lines([]) == []


def test_a_fit_that_does_not_end_leaves_no_file_and_keeps_the_measurements(tmp_path, capsys, monkeypatch):
    """The file lands at its path only once its transfers are settled; where the fit fails, the
    measured draft is kept beside it as <name>.unsettled and the command fails."""
    from autotune.pipeline import hostmachine as phm
    from autotune.pipeline import refkernels
    _recorded_host(monkeypatch)
    seen = []

    def broken(target, progress):
        seen.append(Path(target))
        raise RuntimeError("the fit broke")
    monkeypatch.setattr(refkernels, "settle_transfers", broken)
    target = tmp_path / "guest.yaml"
    uarch = (uarch_args() or [None, None])[1]
    with pytest.raises(RuntimeError, match="the fit broke"):
        phm.write_host_machine(target, "guest", SILENT, uarch=uarch)
    assert not target.exists() and seen[0] != target and seen[0].name == target.name
    kept = tmp_path / ("guest.yaml" + phm.UNSETTLED)
    assert load_machine(str(kept)).bandwidth("MEM", 1) > 0
    monkeypatch.setattr(refkernels, "settle_transfers", lambda target, progress: {})
    phm.write_host_machine(target, "guest", SILENT, uarch=uarch)
    assert load_machine(str(target)).bandwidth("MEM", 1) > 0


def test_the_spread_of_a_level_at_a_core_count_is_its_widest_kernels():
    from dataclasses import replace

    from autotune.specs.machine import load_machine
    m = replace(load_machine("haswell-ep-e5-2630v3"), bandwidth_spreads=(("MEM", (0.05, 0.4)),))
    assert m.bandwidth_spread("MEM", 1) == 0.05 and m.bandwidth_spread("MEM", 2) == 0.4
    assert m.bandwidth_spread("MEM", 8) == 0.4 and m.bandwidth_spread("L2", 1) is None

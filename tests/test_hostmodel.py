import json
import platform
import shutil
import subprocess

import pytest

from autotune.tools import hostprobe as hostmodel
from autotune.specs import hostmachine
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
    assert hostmodel.stream_gbps(exe, "copy", 1 << 16, 1, 0.001) > 0


def test_calibrate_node_dry_run_says_the_clock_is_the_os_one(tmp_path, capsys):
    code, out, err = run_cli(capsys, "calibrate", "--node", "--name", tmp_path / "dry.yaml", "--dry-run",
                             *uarch_args())
    assert code == 0, err
    assert "the OS's figure, not measured under load" in out and "clock under load" not in err
    assert not (tmp_path / "dry.yaml").exists()


def test_median_spread_and_the_clock_chosen():
    assert hostmachine.median_spread([3.0, 1.0, 2.0]) == (2.0, 1.0)
    assert hostmachine.median_spread([4.0, 4.0]) == (4.0, 0.0)
    with pytest.raises(ValueError):
        hostmachine.median_spread([])
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
    for kernel in hostmachine.NT_KERNELS:
        assert hostmodel.stream_gbps(exe, kernel, 1 << 16, 1, 0.001) > 0

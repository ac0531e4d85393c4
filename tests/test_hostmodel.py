import json

from autotune.tools import hostprobe as hostmodel
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
    assert host.clock_hz == 2.1e9
    ws = hostmodel.working_sets(host)
    assert ws["L1"] < ws["L2"] < ws["L3"] < ws["MEM"]


def test_calibrate_node_on_this_host(tmp_path, capsys, compiler):
    target = tmp_path / "here.yaml"
    code, out, err = run_cli(capsys, "calibrate", "--machine", "here", "--node", "--out", target,
                             "--min-seconds", "0.002", "--format", "json", *uarch_args())
    assert code == 0, err
    res = json.loads(out)
    m = load_machine(str(target))
    assert m.cores == res["cores"] >= 1 and m.caches[0].name == "L1"
    bw, one = res["bandwidth_gbs"], res["bandwidth_1thread_gbs"]
    for level in ("L1", "MEM"):
        assert all(0.1 < v < 10_000 for v in bw[level].values())   # GB/s a real machine can have
    # the first cache level streams faster than memory on one core (copy and load alike)
    assert one["L1"]["load"] > 1.5 * one["MEM"]["load"] and one["L1"]["copy"] > 1.5 * one["MEM"]["copy"]
    text = target.read_text()
    assert "provenance" in text and "streaming benchmark" in text and "bandwidth L1" in err
    # the analysis compiles for this CPU's instruction set: no extension the CPU lacks
    from autotune.tools.cpuprobe import missing_on_host
    assert m.isa_flags and missing_on_host(m.isa_flags) == []
    assert res["uarch"]["osaca"] == m.incore_model


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

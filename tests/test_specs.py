import pytest

from autotune.errors import InputError
from autotune.specs.ivp import ivp_names, load_ivp
from autotune.specs.machine import load_machine, machine_names

SIX = {"heat2d", "inverterchain", "medakzo", "wave1d", "string-row", "string-mix"}


def test_the_six_ivps_are_shipped_and_load():
    assert SIX <= set(ivp_names())
    for name in ivp_names():
        ivp = load_ivp(name)
        assert ivp.size_value(ivp.default_n) >= 1
        assert ivp.access_distance(ivp.default_n) >= 1
        assert set(ivp.comm) <= {"allgather", "neighbour", "sparse"}


def test_ivp_size_and_distance_formulas():
    heat = load_ivp("heat2d")
    assert heat.size_value(35808256) == 5984
    assert heat.access_distance(35808256) == 5984
    assert heat.constant_values(36)["cd"] == 25.0
    with pytest.raises(InputError, match="N\\*\\*2"):
        heat.size_value(35808257)
    assert load_ivp("medakzo").size_value(1000) == 500
    with pytest.raises(InputError):
        load_ivp("string-row").size_value(1001)


def test_every_shipped_machine_loads():
    assert "haswell-ep-e5-2630v3" in machine_names()
    for name in machine_names():
        m = load_machine(name)
        assert m.clock_hz > 1e8 and m.cores >= 1 and m.nodes >= 1
        assert [c.name for c in m.caches][:2] == ["L1", "L2"]
        assert m.network["model"] in ("datasheet", "fitted") and m.network["provenance"]


def test_reference_machine_figures():
    m = load_machine(None)
    assert m.name == "haswell-ep-e5-2630v3"
    assert (m.cores, m.nodes, m.cacheline) == (8, 8, 64)
    assert m.caches[-1].bytes_per_group == 20 * 2**20
    assert m.network["model"] == "datasheet"


GOOD = """name: t
size_parameter: N
n: "N"
access_distance: "1"
default_n: 100
comm: [allgather]
rhs:
  - name: i
    components: "N"
    halo: "1"
    expr: "y[j-1] - y[j]"
"""


@pytest.mark.parametrize("edit,field", [
    (lambda s: s.replace('default_n: 100', 'default_n: -3'), "default_n"),
    (lambda s: s.replace('comm: [allgather]', 'comm: [broadcast]'), "comm"),
    (lambda s: s.replace('n: "N"\n', ''), "n"),
    (lambda s: s.replace('"y[j-1] - y[j]"', '"y[j-1] - q * y[j]"'), "rhs[0].expr"),
    (lambda s: s.replace('halo: "1"', 'halo: "N+"'), "rhs[0].halo"),
    (lambda s: s + "colour: blue\n", "colour"),
])
def test_bad_ivp_files_name_file_and_field(tmp_path, edit, field):
    p = tmp_path / "bad.yaml"
    p.write_text(edit(GOOD))
    with pytest.raises(InputError) as e:
        load_ivp(str(p))
    msg = str(e.value)
    assert str(p) in msg and f"'{field}'" in msg and "\n" not in msg


def test_malformed_yaml_names_the_line(tmp_path):
    p = tmp_path / "broken.yaml"
    p.write_text("name: x\nrhs: [\n  - a: b\n")
    with pytest.raises(InputError, match="malformed YAML"):
        load_ivp(str(p))


def test_unknown_names_list_what_is_known():
    with pytest.raises(InputError, match="heat2d"):
        load_ivp("heat4d")
    with pytest.raises(InputError, match="haswell"):
        load_machine("cray-1")


def test_user_machine_missing_cluster_section(tmp_path):
    src = load_machine(None).path
    text = open(src).read()
    p = tmp_path / "m.yaml"
    p.write_text(text[: text.index("\ncluster:")] + "\n")
    with pytest.raises(InputError, match="'cluster'"):
        load_machine(str(p))


HASWELL, ZEN4 = "haswell-ep-e5-2630v3", "zen4-epyc-vm-2core"
# (machine, text in its file, the bad text, the one line's field and expectation)
BAD_MACHINE_NUMBERS = [
    (HASWELL, "clock: 2.4 GHz", "clock: -2.3 GHz", "field 'clock': expected a positive frequency, got '-2.3 GHz'"),
    (HASWELL, "clock: 2.4 GHz", "clock: 2.4 GB", "field 'clock': expected a frequency such as '2.4 GHz', got"),
    (HASWELL, "clock: 2.4 GHz", "clock: 2.4GHz", "field 'clock': expected a frequency such as '2.4 GHz' (a number, "
                                                 "a space, the unit)"),
    (HASWELL, "cacheline size: 64 B", "cacheline size: 0 B", "field 'cacheline size': expected a positive size"),
    (HASWELL, "sockets: 1", "sockets: 0", "field 'sockets': expected an integer >= 1, got 0"),
    (HASWELL, "cores per socket: 8", "cores per socket: 2.5", "field 'cores per socket': expected an integer >= 1, "
                                                             "got 2.5"),
    (HASWELL, "threads per core: 1\ncores", "threads per core: -1\ncores", "field 'threads per core': expected an "
                                                                          "integer >= 1"),
    (HASWELL, "cores per NUMA domain: 8", "cores per NUMA domain: 0", "field 'cores per NUMA domain': expected an "
                                                                     "integer >= 1"),
    (HASWELL, "DP: {total: 16,", "DP: {total: -16,", "field 'FLOPs per cycle.DP.total': expected a number > 0"),
    (HASWELL, "DP: {total: 16, FMA: 8", "DP: {total: 16, FMA: -8", "field 'FLOPs per cycle.DP.FMA': expected a "
                                                                   "number >= 0"),
    (HASWELL, "{sets: 512, ways: 8,", "{sets: 512, ways: 0,", "field 'memory hierarchy[1].cache per group.ways': "
                                                             "expected an integer >= 1, got 0"),
    (HASWELL, "  groups: 8\n  upstream throughput: [64", "  groups: 0\n  upstream throughput: [64",
     "field 'memory hierarchy[1].groups': expected an integer >= 1"),
    (HASWELL, "[64 B/cy, half-duplex]", "[-64 B/cy, half-duplex]", "field 'memory hierarchy[1].upstream throughput[0]'"
                                                                  ": expected a positive throughput, got '-64 B/cy'"),
    (HASWELL, "[64 B/cy, half-duplex]", "[fast, half-duplex]", "field 'memory hierarchy[1].upstream throughput[0]': "
                                                              "expected a throughput such as '64 B/cy' or"),
    (ZEN4, "size per group: 1.00 MB", "size per group: -1.00 MB", "field 'memory hierarchy[1].size per group': "
                                                                 "expected a positive size, got '-1.00 MB'"),
    (ZEN4, "size per group: 1.00 MB", "size per group: 1.00 MiB", "field 'memory hierarchy[1].size per group': "
                                                                 "expected a size such as '32 kB'"),
    (HASWELL, "          - 138.00 GB/s", "          - -138.00 GB/s",
     "field 'benchmarks.measurements.L1.1.results.copy[0]': expected a positive bandwidth, got '-138.00 GB/s'"),
    (HASWELL, "          - 138.00 GB/s", "          - 138.00 GB",
     "field 'benchmarks.measurements.L1.1.results.copy[0]': expected a bandwidth such as '12 GB/s'"),
    (ZEN4, "          - - 217.14 GB/s", "          - - 0.00 GB/s",
     "field 'benchmarks.measurements.L1.1.stats.copy[0][0]': expected a positive bandwidth"),
    (HASWELL, "        - 168.96 kB\n        - 337.92 kB", "        - 168.96 kB\n        - -337.92 kB",
     "field 'benchmarks.measurements.L2.1.total size[1]': expected a positive size"),
    (HASWELL, "        cores:\n        - 1\n", "        cores:\n        - 0\n",
     "field 'benchmarks.measurements.L1.1.cores[0]': expected an integer >= 1, got 0"),
    (HASWELL, "read streams: {bytes: 8.00 B, streams: 1}", "read streams: {bytes: -8.00 B, streams: 1}",
     "field 'benchmarks.kernels.copy.read streams.bytes': expected a non-negative size"),
    (HASWELL, "read streams: {bytes: 8.00 B, streams: 1}", "read streams: {bytes: 8.00 B, streams: -1}",
     "field 'benchmarks.kernels.copy.read streams.streams': expected an integer >= 0"),
    (HASWELL, "FLOPs per iteration: 2", "FLOPs per iteration: -2",
     "field 'benchmarks.kernels.daxpy.FLOPs per iteration': expected a number >= 0"),
    (HASWELL, "  nodes: 8", "  nodes: 0", "field 'cluster.nodes': expected an integer >= 1, got 0"),
    (HASWELL, "  cores_per_node: 8", "  cores_per_node: 1.5", "field 'cluster.cores_per_node': expected an integer "
                                                             ">= 1, got 1.5"),
    (HASWELL, "latency_s: 1.0e-6", "latency_s: -1.0e-6", "field 'cluster.network.latency_s': expected a number >= 0"),
    (HASWELL, "bandwidth_Bps: 6.8e+9", "bandwidth_Bps: 0", "field 'cluster.network.bandwidth_Bps': expected a "
                                                          "number > 0, got 0"),
    (HASWELL, "per_doubling_s: 2.5e-7", "per_doubling_s: -2.5e-7", "field 'cluster.barrier.per_doubling_s': "
                                                                   "expected a number >= 0"),
    (HASWELL, "    bandwidth_Bps: 6.8e+9\n", "    bandwidth_Bps: 6.8e+9\n    fits:\n      allgather:\n"
     "        segments: [{max_bytes: null, latency_s: -1.0e-6, per_byte_s: 1.0e-10}]\n",
     "field 'cluster.network.fits.allgather.segments[0].latency_s': expected a number >= 0"),
]


@pytest.mark.parametrize("machine,old,new,field", BAD_MACHINE_NUMBERS)
def test_machine_numbers_are_checked_when_the_file_is_loaded(tmp_path, capsys, machine, old, new, field):
    """Every number kerncraft or the model divides by, scales with or counts with: one line naming
    the file and the field's path, exit status 2, before any analysis (a negative clock ran every
    kerncraft analysis into a TypeError; a negative bandwidth passed silently)."""
    from autotune.cli.main import main
    text = open(load_machine(machine).path).read()
    assert text.count(old) >= 1
    p = tmp_path / "m.yaml"
    p.write_text(text.replace(old, new, 1))
    code = main(["rank", "--ivp", "heat2d", "--machine", str(p), "--store", str(tmp_path / "s.sqlite")])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert err.startswith(f"autotune: error: {p}: {field}"), err
    with pytest.raises(InputError) as e:       # the same from the Python API's loader
        load_machine(str(p))
    assert str(e.value).startswith(f"{p}: {field}")


@pytest.mark.parametrize("text,kind,value", [
    ("2.4 GHz", "frequency", 2.4e9), ("2.60 GHz", "frequency", 2.6e9), ("32 kB", "size", 32e3),
    ("32.00 kB", "size", 32e3), ("1.00 MB", "size", 1e6), ("64 B", "size", 64), (64, "size", 64),
    ("12 GB/s", "bandwidth", 12e9), ("138.00 GB/s", "bandwidth", 138e9), ("64 B/cy", "throughput", 64),
])
def test_kerncraft_quantities_are_read(text, kind, value):
    from autotune.specs.units import kerncraft_form, quantity
    assert quantity(text, kind) == pytest.approx(value) and kerncraft_form(text)


def test_every_operation_has_a_benchmark_and_a_cost_form():
    from autotune.specs.schemes import OPERATIONS
    assert set(OPERATIONS) == {"allgather", "neighbour", "pairwise", "allreduce"}
    for op in OPERATIONS.values():
        assert op.benchmark.startswith("benchmarks_mpi.")
        assert op.rounds(1) == 0 and op.volume(1) == 0      # one rank: nothing sent
        assert op.rounds(8) >= 1 and op.volume(8) >= 1
    assert [OPERATIONS["allgather"].rounds(p) for p in (2, 3, 8)] == [1, 2, 3]
    assert [OPERATIONS["allgather"].volume(p) for p in (2, 8)] == [1, 7]
    assert [OPERATIONS["neighbour"].volume(p) for p in (1, 2, 4)] == [0, 1, 2]
    assert [OPERATIONS["allreduce"].rounds(p) for p in (2, 3, 8)] == [1, 2, 3]     # recursive doubling

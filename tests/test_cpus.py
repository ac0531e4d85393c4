"""CPU identification: the table, the rules, the flags, and the machine files made from them."""
from __future__ import annotations

import pytest

from autotune.errors import InputError
from autotune.specs import isa as isamod
from autotune.specs.cpus import CpuId, PortModel, check_port_model, identify, load_table, parse_cpuinfo
from autotune.specs.hostmachine import Cache, HostInfo, build
from autotune.specs.loading import parse_yaml
from autotune.specs.machine import parse_machine
from autotune.tools.cpuprobe import osaca_models, osaca_ports

ZEN3_FLAGS = "fpu sse sse2 ssse3 fma sse4_1 sse4_2 avx f16c avx2 bmi2"
ZEN4_FLAGS = ZEN3_FLAGS + " avx512f avx512dq avx512cd avx512bw avx512vl avx512_bf16"
AVX512_FLAGS = ZEN4_FLAGS
INSTALLED = "0.7.1"          # the OSACA version the messages name


def x86(vendor, family, model, stepping=1, name="", flags=ZEN3_FLAGS) -> str:
    return (f"processor\t: 0\nvendor_id\t: {vendor}\ncpu family\t: {family}\nmodel\t\t: {model}\n"
            f"model name\t: {name}\nstepping\t: {stepping}\nflags\t\t: {flags}\n\n"
            f"processor\t: 1\nvendor_id\t: {vendor}\ncpu family\t: 99\nmodel\t\t: 99\n")


def arm(implementer, part) -> str:
    return (f"processor\t: 0\nBogoMIPS\t: 200.00\nFeatures\t: fp asimd evtstrm sha1 sve\n"
            f"CPU implementer\t: {implementer}\nCPU architecture: 8\nCPU variant\t: 0x1\n"
            f"CPU part\t: {part}\nCPU revision\t: 0\n")


def ident(text, models=None, uarch=None):
    return identify(parse_cpuinfo(text), load_table(), models, INSTALLED, uarch)


@pytest.mark.parametrize("text, key", [
    (x86("AuthenticAMD", 25, 1, name="AMD EPYC 7763 64-Core Processor"), "zen3"),     # Milan
    (x86("AuthenticAMD", 25, 33), "zen3"),                                             # Vermeer
    (x86("AuthenticAMD", 25, 17, flags=ZEN4_FLAGS), "zen4"),                           # Genoa
    (x86("AuthenticAMD", 25, 97), "zen4"),                                             # Raphael
    (x86("AuthenticAMD", 23, 49), "zen2"),                                             # Rome
    (x86("AuthenticAMD", 23, 1), "zen1"),                                              # Naples
    (x86("GenuineIntel", 6, 63), "hsw"), (x86("GenuineIntel", 6, 79), "bdw"),
    (x86("GenuineIntel", 6, 45), "snb"), (x86("GenuineIntel", 6, 62), "ivb"),
    (x86("GenuineIntel", 6, 85, stepping=4), "skx"), (x86("GenuineIntel", 6, 85, stepping=7), "csx"),
    (x86("GenuineIntel", 6, 106), "icx"), (x86("GenuineIntel", 6, 126), "icl"), (x86("GenuineIntel", 6, 143), "spr"),
    (arm("0x46", "0x001"), "a64fx"), (arm("0x41", "0xd0c"), "n1"), (arm("0x41", "0xd4f"), "v2"),
    (arm("0x43", "0x0af"), "tx2"), (arm("0x41", "0xd08"), "a72"), (arm("0x48", "0xd01"), "tsv110"),
])
def test_cpus_identify_as_their_microarchitecture(text, key):
    got = ident(text, osaca_models()[0])
    assert got.key == key and not got.assumed
    assert got.record.osaca.lower() == key


def test_the_first_processor_decides():
    cpu = parse_cpuinfo(x86("AuthenticAMD", 25, 1))
    assert (cpu.family, cpu.model, cpu.stepping) == (25, 1, 1) and "avx512f" not in cpu.flags


def test_the_table_covers_every_osaca_model_installed():
    table = load_table()
    models, _ = osaca_models()
    assert models, "OSACA is installed with kerncraft"
    covered = {u.osaca.lower() for u in table.uarchs.values() if u.osaca}
    assert models <= covered | {"zen5"}, f"OSACA models the table lacks: {sorted(models - covered)}"
    for u in table.uarchs.values():
        if u.osaca and u.osaca.lower() in models:   # the ports named exist in OSACA's model
            assert set(u.non_overlapping) <= set(osaca_ports(u.osaca)), u.key
    assert table.count_models() > 300 and len(table.uarchs) >= 20


@pytest.mark.parametrize("text, words", [
    (x86("HygonGenuine", 24, 1), ["HygonGenuine family 24 model 1", "not in autotune's CPU table", "--uarch"]),
    (arm("0x51", "0x001"), ["ARM implementer 0x051 part 0x001", "not in autotune's CPU table", "--uarch"]),
])
def test_a_cpu_of_a_vendor_no_modelled_record_has_is_an_error(text, words):
    with pytest.raises(InputError) as e:
        ident(text, osaca_models()[0])
    assert all(w in str(e.value) for w in words), str(e.value)
    # what was read is the subject, not an option: no field, the option to choose with is named
    assert e.value.field is None and "\n" not in str(e.value)


def test_a_zen5_borrows_zen4_ports_and_keeps_its_own_flags():
    zen5 = x86("AuthenticAMD", 26, 2, name="AMD EPYC 9575F", flags=AVX512_FLAGS)
    own = ident(zen5, frozenset({"zen5", "zen4"}))
    assert own.key == "zen5" and own.record.osaca == "ZEN5" and own.borrowed_from is None
    got = ident(zen5, frozenset({"zen4", "zen3"}))
    assert got.key == "zen5" and not got.assumed
    assert got.borrowed_from == ("AMD Zen 5 (zen5): the installed OSACA 0.7.1 has no ZEN5 model; ports from "
                                 "AMD Zen 4 (zen4), the closest it models")
    zen4 = load_table().uarchs["zen4"]
    # the port model, its ports and the split of overlapping work are Zen 4's ...
    assert got.record.osaca == "ZEN4" and got.record.non_overlapping == zen4.non_overlapping
    # ... the compiler flags, FLOPs and cache design the CPU's own
    assert got.record.march["gcc"] == ("znver5", "znver4", "znver3")
    assert got.record.dp_flops["total"] == 32 and got.record.hierarchy.key == "amd-zen3"
    assert got.to_dict()["borrowed_from"] == got.borrowed_from and "borrowed" in str(got)
    # a guest that hides AVX-512 never gets a port model of 512-bit vectors
    hidden = ident(x86("AuthenticAMD", 26, 2, flags=ZEN3_FLAGS), frozenset({"zen4", "zen3"}))
    assert hidden.record.osaca == "ZEN3" and "AMD Zen 3 (zen3)" in hidden.borrowed_from


def test_a_borrowed_zen5_machine_file_says_so():
    import yaml
    got = ident(x86("AuthenticAMD", 26, 2, name="AMD EPYC 9575F", flags=AVX512_FLAGS), frozenset({"zen4"}))
    bw = {lvl: {k: [(t, 1000, 10.0) for t in range(1, 5)] for k in ("copy", "daxpy", "load", "triad", "update")}
          for lvl in ("L1", "L2", "L3", "MEM")}
    data = build(_zen3_host(), got, ["-march=znver5"], "-march=znver5", osaca_ports("ZEN4"), bw, "turin", 2,
                 "0.8.18", "today")
    m = parse_machine(parse_yaml(yaml.safe_dump(data, sort_keys=False), "turin.yaml"), "turin.yaml", "turin")
    assert m.incore_model == "ZEN4" and data["model type"] == "AMD Zen 5 (zen5)"
    assert data["FLOPs per cycle"]["DP"]["total"] == 32
    assert data["non-overlapping model"]["ports"]["OSACA"] == ["1D", "3D", "5D"]
    line = data["provenance"]["microarchitecture"]
    assert "borrowed (AMD Zen 5 (zen5): the installed OSACA 0.7.1 has no ZEN5 model" in line
    assert "in-core times measured on this CPU" in line


@pytest.mark.parametrize("text, key, osaca, words", [
    # in the table, but OSACA has no model of its own: the same design and SIMD width, the newest older one
    (x86("GenuineIntel", 6, 207, flags=AVX512_FLAGS), "emr", "SPR",
     "Intel Emerald Rapids (emr): OSACA has no model of it; ports from Intel Sapphire Rapids (spr)"),
    (x86("GenuineIntel", 6, 142, flags=ZEN3_FLAGS), "skl", "BDW", "ports from Intel Broadwell (bdw)"),
    # not in the table: the newest record of its vendor whose vectors the CPU's flags run
    (x86("GenuineIntel", 19, 1, name="Intel Xeon 7", flags=AVX512_FLAGS), "spr", "SPR",
     "not in autotune's CPU table; ports from Intel Sapphire Rapids (spr), the newest GenuineIntel record"),
    (x86("GenuineIntel", 6, 183, name="13th Gen Intel(R) Core(TM) i7-13700", flags=ZEN3_FLAGS), "bdw", "BDW",
     "whose vectors the CPU's flags run (avx2 fma)"),
    (arm("0x41", "0xd49"), "v2", "V2", "ARM implementer 0x041 part 0xd49: not in autotune's CPU table; ports "
                                       "from Arm Neoverse V2 (v2)"),
])
def test_a_cpu_osaca_does_not_model_borrows_the_closest_record(text, key, osaca, words):
    got = ident(text, osaca_models()[0])
    assert (got.key, got.record.osaca) == (key, osaca) and not got.assumed
    assert words in got.borrowed_from and "\n" not in got.borrowed_from


def test_the_closest_record_follows_the_rule():
    """Every record the installed OSACA does not model, on a CPU with just the flags its vectors
    need: the record borrowed is of its ISA and vendor, modelled, needs no flag the CPU lacks, and
    has the same cache design and SIMD width wherever one such record exists."""
    table, models = load_table(), osaca_models()[0]
    modelled = {k for k, u in table.uarchs.items() if u.osaca and u.osaca.lower() in models}
    for row in table.rows:
        own = table.uarchs[row.uarch]
        if row.uarch in modelled:
            continue
        flags = own.needs() | {"sse2", "avx", "asimd"}
        cpu = CpuId(own.isa, row.vendor, row.family, row.models[0][0],
                    row.steppings[0][0] if row.steppings else 1, "", frozenset(flags))
        got = identify(cpu, table, models, INSTALLED)
        ports = table.uarchs[got.record.osaca.lower()]
        assert got.key == own.key and got.borrowed_from.startswith(own.label()), own.key
        assert ports.key in modelled and ports.isa == own.isa and row.vendor.lower() in table.vendors(ports.key)
        assert ports.needs() <= flags, (own.key, ports.key)
        alike = [u for k, u in table.uarchs.items() if k in modelled and u.isa == own.isa
                 and row.vendor.lower() in table.vendors(k) and u.needs() <= flags
                 and (u.hierarchy, u.simd_bits) == (own.hierarchy, own.simd_bits)]
        if alike:
            assert (ports.hierarchy, ports.simd_bits) == (own.hierarchy, own.simd_bits), own.key
            assert ports.released == max(u.released for u in alike if u.released <= own.released), own.key


def test_an_explicit_choice_is_recorded_as_assumed():
    got = ident(x86("GenuineIntel", 6, 183), osaca_models()[0], uarch="spr")
    assert got.key == "spr" and got.assumed and got.to_dict()["assumed"] is True
    with pytest.raises(InputError, match="unknown microarchitecture"):
        ident(x86("GenuineIntel", 6, 183), osaca_models()[0], uarch="pentium4")
    # --uarch wins over the borrow, and names no borrowed model
    zen5 = x86("AuthenticAMD", 26, 2, flags=AVX512_FLAGS)
    got = ident(zen5, frozenset({"zen4", "zen3"}), uarch="zen3")
    assert got.key == "zen3" and got.assumed and got.borrowed_from is None and got.record.osaca == "ZEN3"
    with pytest.raises(InputError, match="installed OSACA 0.7.1 does not model") as e:
        ident(zen5, frozenset({"zen4"}), uarch="zen5")
    assert e.value.field == "uarch" and "--port-model" in str(e.value)


def test_a_port_model_file_is_the_model_used():
    """An OSACA architecture file given by path models the record of its arch_code: the CPU's own
    (nothing borrowed), or another one, borrowed from the file."""
    zen5 = x86("AuthenticAMD", 26, 2, flags=AVX512_FLAGS)
    table = load_table()
    newer = PortModel("/m/zen5.yml", "0" * 64, "ZEN5", "x86", ("0", "1", "4D", "5D", "12"))
    got = identify(parse_cpuinfo(zen5), table, frozenset({"zen4"}), INSTALLED, port_model=newer)
    assert got.record.osaca == "ZEN5" and got.borrowed_from is None and got.record.non_overlapping == ("4D", "5D")
    older = PortModel("/m/zen3.yml", "0" * 64, "ZEN3", "x86", tuple(osaca_ports("ZEN3")))
    got = identify(parse_cpuinfo(zen5), table, frozenset({"zen4"}), INSTALLED, port_model=older)
    assert got.record.osaca == "ZEN3" and "ports from the given port model file (AMD Zen 3 (zen3))" in got.borrowed_from
    bad = [(PortModel("/m/x.yml", "", "ZEN9", "x86", ("0",)), "no record of autotune's CPU table"),
           (PortModel("/m/x.yml", "", "ZEN5", "x86", ("0", "1")), "has no port 4D, 5D"),
           (PortModel("/m/x.yml", "", "A64FX", "aarch64", tuple(osaca_ports("A64FX"))), "a port model for aarch64")]
    for pm, words in bad:
        with pytest.raises(InputError) as e:
            identify(parse_cpuinfo(zen5), table, frozenset({"zen4"}), INSTALLED, port_model=pm)
        assert words in str(e.value) and e.value.field == "port_model", str(e.value)
    with pytest.raises(InputError, match="models ZEN5, and --uarch zen4") as e:
        identify(parse_cpuinfo(zen5), table, frozenset({"zen4"}), INSTALLED, uarch="zen4", port_model=newer)
    assert check_port_model({"arch_code": "zen5", "isa": "x86", "ports": ["0"], "instruction_forms": [{}]},
                            "f", "d").arch == "ZEN5"
    for data, words in [([1], "not a mapping"), ({"isa": "x86"}, "no arch_code, ports, instruction_forms"),
                        ({"arch_code": "X", "isa": "riscv", "ports": ["0"], "instruction_forms": [{}]}, "riscv")]:
        with pytest.raises(InputError, match=words):
            check_port_model(data, "f", "d")


def test_isa_flags_come_from_the_cpu():
    avx512 = {"sse4.2", "avx", "avx2", "fma", "avx512f", "avx512dq", "avx512cd", "avx512bw", "avx512vl"}
    avx2 = {"sse4.2", "avx", "avx2", "fma"}
    zen3 = frozenset(ZEN3_FLAGS.split())
    zen4 = frozenset(ZEN4_FLAGS.split())
    assert isamod.compose("x86", "znver3", avx2, zen3) == ["-march=znver3"]
    # gcc without znver4: znver3 plus the AVX-512 subsets the CPU has
    assert isamod.compose("x86", "znver3", avx2, zen4) == [
        "-march=znver3", "-mavx512f", "-mavx512dq", "-mavx512cd", "-mavx512bw", "-mavx512vl"]
    # a guest whose hypervisor hides AVX-512: what -march implies and the CPU lacks is switched off
    assert isamod.compose("x86", "skylake-avx512", avx512, zen3)[1:] == [
        "-mno-avx512f", "-mno-avx512dq", "-mno-avx512cd", "-mno-avx512bw", "-mno-avx512vl"]
    assert isamod.compose("aarch64", "a64fx", None, frozenset()) == ["-mcpu=a64fx"]
    assert isamod.missing(avx512, zen3) == ["avx512f", "avx512dq", "avx512cd", "avx512bw", "avx512vl"]
    assert isamod.isa_part("-O3 -march=znver3 -mavx512f -D_X=1 -fopenmp -mno-avx512vl") == (
        "-march=znver3", "-mavx512f", "-mno-avx512vl")


def test_gcc_gives_a_zen3_no_avx512(compiler):
    from autotune.tools.cpuprobe import isa_flags, this_isa
    if this_isa() != "x86":
        pytest.skip("x86 compiler flags")
    flags, note = isa_flags(ident(x86("AuthenticAMD", 25, 1)), "gcc")
    assert flags == ["-march=znver3"] and note == "-march=znver3"
    flags, note = isa_flags(ident(x86("AuthenticAMD", 25, 17, flags=ZEN4_FLAGS)), "gcc")
    assert flags[0] in ("-march=znver4", "-march=znver3") and not any(f.startswith("-mno-") for f in flags)
    assert flags[0] == "-march=znver4" or "-mavx512f" in flags    # AVX-512 either from -march or added


def _zen3_host() -> HostInfo:
    return HostInfo("AMD EPYC 7763 64-Core Processor", "AuthenticAMD", "25", "1", 4, 2.45e9,
                    (Cache(1, 32 * 1024, 8, 64, 1), Cache(2, 512 * 1024, 8, 64, 1), Cache(3, 32 * 2**20, 16, 64, 4)))


def test_a_zen3_host_gets_a_zen3_machine_file(tmp_path):
    import yaml
    zen3 = ident(x86("AuthenticAMD", 25, 1, name="AMD EPYC 7763 64-Core Processor"))
    bw = {lvl: {k: [(t, 1000 * (i + 1), 10.0 * t) for t in range(1, 5)]
                for k in ("copy", "daxpy", "load", "triad", "update")} for i, lvl in enumerate(["L1", "L2", "L3", "MEM"])}
    data = build(_zen3_host(), zen3, ["-march=znver3"], "-march=znver3", osaca_ports("ZEN3"), bw, "milan", 8,
                 "0.8.18", "today")
    text = yaml.safe_dump(data, sort_keys=False)
    m = parse_machine(parse_yaml(text, "milan.yaml"), "milan.yaml", "milan")
    assert m.incore_model == "ZEN3" and m.nodes == 8 and m.cores == 4
    assert m.isa_flags == ("-march=znver3",) and "avx512" not in text
    assert data["FLOPs per cycle"]["DP"]["total"] == 16 and data["model type"] == "AMD Zen 3 (zen3)"
    assert [c.bytes_per_group for c in m.caches] == [32 * 1024, 512 * 1024, 32 * 2**20]
    assert m.caches[2].victim and m.caches[2].cores_per_group == 4     # Zen's L3 takes L2's victims
    assert "identified from the CPU" in data["provenance"]["microarchitecture"]
    assert "ZEN4" not in text and "znver4" not in text and "K19" not in text


def test_a_host_with_fewer_levels_keeps_its_own(tmp_path):
    import yaml
    a64fx = ident(arm("0x46", "0x001"))
    host = HostInfo("", "0x46", "", "0x001", 48, 1.8e9, (Cache(1, 64 * 1024, 4, 256, 1), Cache(2, 8 * 2**20, 16, 256, 12)))
    bw = {lvl: {k: [(t, 1000, 10.0) for t in range(1, 49)] for k in ("copy", "daxpy", "load", "triad", "update")}
          for lvl in ("L1", "L2", "MEM")}
    data = build(host, a64fx, ["-mcpu=a64fx"], "-mcpu=a64fx", osaca_ports("A64FX"), bw, "fx", 2, "0.8.18", "today")
    m = parse_machine(parse_yaml(yaml.safe_dump(data, sort_keys=False), "fx.yaml"), "fx.yaml", "fx")
    assert [c.name for c in m.caches] == ["L1", "L2"] and m.isa == "aarch64" and m.cacheline == 256


def test_a_cpuid_describes_itself():
    assert CpuId("x86", "GenuineIntel", 6, 85, 4, "Xeon").describe() == "GenuineIntel family 6 model 85 stepping 4 (Xeon)"

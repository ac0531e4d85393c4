"""CPU identification: the table, the rules, the flags, and the machine files made from them."""
from __future__ import annotations

import pytest

from autotune.errors import InputError
from autotune.specs import isa as isamod
from autotune.specs.cpus import CpuId, identify, load_table, parse_cpuinfo
from autotune.specs.hostmachine import Cache, HostInfo, build
from autotune.specs.loading import parse_yaml
from autotune.specs.machine import parse_machine
from autotune.tools.cpuprobe import osaca_models, osaca_ports

ZEN3_FLAGS = "fpu sse sse2 ssse3 fma sse4_1 sse4_2 avx f16c avx2 bmi2"
ZEN4_FLAGS = ZEN3_FLAGS + " avx512f avx512dq avx512cd avx512bw avx512vl avx512_bf16"


def x86(vendor, family, model, stepping=1, name="", flags=ZEN3_FLAGS) -> str:
    return (f"processor\t: 0\nvendor_id\t: {vendor}\ncpu family\t: {family}\nmodel\t\t: {model}\n"
            f"model name\t: {name}\nstepping\t: {stepping}\nflags\t\t: {flags}\n\n"
            f"processor\t: 1\nvendor_id\t: {vendor}\ncpu family\t: 99\nmodel\t\t: 99\n")


def arm(implementer, part) -> str:
    return (f"processor\t: 0\nBogoMIPS\t: 200.00\nFeatures\t: fp asimd evtstrm sha1 sve\n"
            f"CPU implementer\t: {implementer}\nCPU architecture: 8\nCPU variant\t: 0x1\n"
            f"CPU part\t: {part}\nCPU revision\t: 0\n")


def ident(text, models=None, uarch=None):
    return identify(parse_cpuinfo(text), load_table(), models, "0.7.1", uarch)


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
    (x86("GenuineIntel", 6, 183, name="13th Gen Intel(R) Core(TM) i7-13700"), ["not in autotune's CPU table",
                                                                               "family 6 model 183", "--uarch"]),
    (x86("GenuineIntel", 6, 207), ["Emerald Rapids", "OSACA has no port model", "--uarch"]),
    (x86("HygonGenuine", 24, 1), ["HygonGenuine family 24 model 1", "not in autotune's CPU table"]),
    (arm("0x41", "0xd49"), ["ARM implementer 0x041 part 0xd49", "not in autotune's CPU table"]),
])
def test_unknown_or_unmodelled_cpus_are_errors_never_a_borrow(text, words):
    with pytest.raises(InputError) as e:
        ident(text, osaca_models()[0])
    assert all(w in str(e.value) for w in words), str(e.value)
    # what was read is the subject, not an option: no field, the option to choose with is named
    assert e.value.field is None and "\n" not in str(e.value)


def test_a_cpu_newer_than_the_installed_osaca_is_an_error():
    zen5 = x86("AuthenticAMD", 26, 2, name="AMD EPYC 9575F")
    assert ident(zen5, frozenset({"zen5", "zen4"})).key == "zen5"
    with pytest.raises(InputError, match="installed OSACA 0.7.1 does not model.*newer than OSACA knows"):
        ident(zen5, frozenset({"zen4"}))


def test_an_explicit_choice_is_recorded_as_assumed():
    got = ident(x86("GenuineIntel", 6, 183), osaca_models()[0], uarch="spr")
    assert got.key == "spr" and got.assumed and got.to_dict()["assumed"] is True
    with pytest.raises(InputError, match="unknown microarchitecture"):
        ident(x86("GenuineIntel", 6, 183), osaca_models()[0], uarch="pentium4")


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

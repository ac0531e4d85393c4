import pytest

from autotune.model.regime import Regime, regime_of, representative_constants, working_set
from autotune.codegen.parts import lc_parts, rhs_parts
from autotune.specs.ivp import ivp_names, load_ivp
from autotune.specs.machine import load_machine, machine_names
from autotune.specs.method import load_method

MACHINE = load_machine(None)   # L1 32 KiB, L2 256 KiB per core, L3 20 MiB shared by 8
ACC = lc_parts(load_method("radauIIA7"), "ijl")[1]   # Y[4][M], F[4][M]: 64 bytes per component


def test_working_set_levels_hand_computed():
    assert working_set(ACC, 1000, 0) == 64_000
    assert regime_of(ACC, MACHINE, 200, 0, 1).data == "L1"          # 12.8 kB <= 16 kB
    assert regime_of(ACC, MACHINE, 1000, 0, 1).data == "L2"         # 64 kB <= 128 kB
    assert regime_of(ACC, MACHINE, 1000, 0, 4).data == "L1"         # 16 kB per core
    assert regime_of(ACC, MACHINE, 100_000, 0, 8).data == "L3"      # 6.4 MB <= 10 MB shared
    assert regime_of(ACC, MACHINE, 4_476_032, 0, 8).data == "MEM"


def test_layer_condition_of_the_heat_stencil():
    heat = rhs_parts(load_ivp("heat2d"))[0]
    # reuse window 2 * N * 8 B for y plus the output lines: 5984 -> 191 kB > 128 kB (L2 half)
    r = regime_of(heat, MACHINE, 4_476_032, 5984, 8)
    assert r == Regime("MEM", "L3") and r.label == "MEM/lc:L3"
    assert regime_of(heat, MACHINE, 4_476_032, 1000, 8) == Regime("MEM", "L2")
    assert regime_of(heat, MACHINE, 4_476_032, 100, 8) == Regime("MEM", "L1")


def test_sizes_in_one_regime_share_one_key():
    a = regime_of(ACC, MACHINE, 4_476_032, 0, 8)
    b = regime_of(ACC, MACHINE, 9_000_000, 0, 8)
    assert a == b
    assert representative_constants(ACC, MACHINE, a) == representative_constants(ACC, MACHINE, b)


@pytest.mark.parametrize("machine_name", machine_names())
def test_representative_sizes_fall_in_their_regime(machine_name):
    """The size kerncraft analyses (one core) lies inside the regime it stands for."""
    machine = load_machine(machine_name)
    parts = lc_parts(load_method("radauIIA7"), "jli") + rhs_parts(load_ivp("heat2d"))
    for name in ivp_names():
        parts += rhs_parts(load_ivp(name))
    levels = [c.name for c in machine.caches] + ["MEM"]
    for part in parts:
        layers = levels if part.size_parameter else [None]
        for data in levels:
            for layer in layers:
                if layer is not None and levels.index(layer) > levels.index(data):
                    continue
                reg = Regime(data, layer)
                consts = representative_constants(part, machine, reg)
                # (a halo that grows as a power of the size parameter: heat3d's planes, N**2)
                halo = consts[part.size_parameter] ** part.halo_power if part.size_parameter else int(part.halo)
                got = regime_of(part, machine, consts["M"], halo, 1)
                assert got.data == data, (part.name, reg, consts)
                if layer is not None:
                    assert got.layer == layer, (part.name, reg, consts)

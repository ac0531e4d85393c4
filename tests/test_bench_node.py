"""The node benchmark's own edges: its clock check measures the host and compares the file's."""
import re

import pytest


@pytest.mark.compiler
def test_the_clock_check_measures_a_chain_and_names_both_clocks():
    from benchmarks.node import clock_check
    from autotune.specs.machine import load_machine
    line = clock_check("haswell-ep-e5-2630v3")
    m = re.fullmatch(r"clock: the file says ([\d.]+) GHz, a dependent-add chain runs at ([\d.]+) GHz on all cores "
                     r"now \(([+-][\d.]+) %; target within 5 %\)", line)
    assert m, line
    file_ghz, chain_ghz, off = map(float, m.groups())
    assert file_ghz == pytest.approx(load_machine("haswell-ep-e5-2630v3").clock_hz / 1e9, abs=0.005)
    assert chain_ghz > 0.1 and off == pytest.approx(100 * (file_ghz / chain_ghz - 1), abs=1.0)

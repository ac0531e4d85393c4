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
        load_ivp("heat3d")
    with pytest.raises(InputError, match="haswell"):
        load_machine("cray-1")


def test_user_machine_missing_cluster_section(tmp_path):
    src = load_machine(None).path
    text = open(src).read()
    p = tmp_path / "m.yaml"
    p.write_text(text[: text.index("\ncluster:")] + "\n")
    with pytest.raises(InputError, match="'cluster'"):
        load_machine(str(p))


@pytest.mark.parametrize("old,new,field", [
    ("clock: 2.4 GHz", "clock: -2.4 GHz", "field 'clock': expected a positive frequency"),
    ("{sets: 512, ways: 8,", "{sets: 512, ways: 0,", "field 'memory hierarchy[1] (L2).cache per group.ways'"),
    ("          - 138.00 GB/s", "          - -138.00 GB/s", "field 'benchmarks.measurements.L1': expected positive"),
])
def test_machine_numbers_must_be_positive(tmp_path, old, new, field):
    """One line naming the file and the field, before any analysis (a negative clock ran every
    kerncraft analysis into a TypeError; a negative bandwidth of one kernel passed)."""
    text = open(load_machine(None).path).read()
    assert text.count(old) == 1
    p = tmp_path / "m.yaml"
    p.write_text(text.replace(old, new))
    with pytest.raises(InputError) as e:
        load_machine(str(p))
    assert str(e.value).startswith(f"{p}: {field}") and "\n" not in str(e.value)

"""Plans over several partitions: which machine each scenario gets, what the plan records, and
what a plan of an older version reads as.  No solver is built: these are the fast tests."""
import json
import re

import pytest

from autotune.errors import InputError
from autotune.pipeline import plan as planning
from autotune.specs.machine import DEFAULT_MACHINE, load_machine

from .conftest import run_cli


def _cluster_file(path, nodes: int, partitions: str = ""):
    """The default machine as a cluster of `nodes` nodes (its node part unchanged, so the recorded
    analyses serve it), with `partitions` appended to its cluster section."""
    text = open(load_machine(DEFAULT_MACHINE).path).read()
    head, sep, cluster = text.partition("\ncluster:\n")
    assert sep and re.search(r"(?m)^  nodes: \d+$", cluster)
    cluster = re.sub(r"(?m)^  nodes: \d+$", f"  nodes: {nodes}", cluster, count=1).rstrip("\n") + "\n"
    path.write_text(head + sep + cluster + partitions)
    return path


@pytest.fixture()
def cluster(tmp_path):
    """small.yaml (2 nodes) and big.yaml (4 nodes), whose cluster section maps both partitions
    (small by a path beside it, big by a path too)."""
    small = _cluster_file(tmp_path / "small.yaml", 2)
    big = _cluster_file(tmp_path / "big.yaml", 4, "  partitions: {small: small.yaml, big: ./big.yaml}\n")
    return small, big


def _read(tmp_path, text: str):
    (tmp_path / "s.yaml").write_text(text)
    return [(req.machine, partition) for req, _, _, partition in planning.read_scenarios(tmp_path / "s.yaml")]


def test_a_partition_picks_its_machine_from_the_defaults_map(tmp_path, cluster):
    small, big = cluster
    got = _read(tmp_path, f"defaults: {{partitions: {{small: {small}, big: {big}}}, partition: big}}\n"
                          "scenarios:\n  - {ivp: heat2d, partition: small}\n  - {ivp: heat2d}\n")
    assert got == [(str(small), "small"), (str(big), "big")]     # the scenario's partition, else defaults'


def test_a_partition_picks_its_machine_from_the_machine_files_cluster_section(tmp_path, cluster):
    small, big = cluster
    assert load_machine(str(big)).partitions == {"small": str(small), "big": str(tmp_path / "big.yaml")}
    got = _read(tmp_path, f"defaults: {{machine: {big}}}\nscenarios:\n"
                          "  - {ivp: heat2d, partition: small}\n  - {ivp: heat2d, partition: big}\n"
                          "  - {ivp: heat2d}\n")
    assert got == [(str(small), "small"), (str(tmp_path / "big.yaml"), "big"), (str(big), None)]
    # the defaults' map is asked first
    other = _cluster_file(tmp_path / "other.yaml", 3)
    got = _read(tmp_path, f"defaults: {{machine: {big}, partitions: {{small: {other}}}}}\nscenarios:\n"
                          "  - {ivp: heat2d, partition: small}\n  - {ivp: heat2d, partition: big}\n")
    assert got == [(str(other), "small"), (str(tmp_path / "big.yaml"), "big")]


def test_a_scenarios_own_machine_wins_over_its_partition(tmp_path, cluster):
    small, big = cluster
    got = _read(tmp_path, f"defaults: {{machine: {big}, partition: small}}\nscenarios:\n"
                          f"  - {{ivp: heat2d, machine: {big}}}\n"
                          f"  - {{ivp: heat2d, machine: {small}, partition: gpu}}\n")
    # the partition then only says where the job goes, and need not be mapped
    assert got == [(str(big), "small"), (str(small), "gpu")]


def test_an_unknown_partition_is_one_line_before_any_ranking(tmp_path, cluster, capsys, monkeypatch):
    small, big = cluster
    monkeypatch.setattr(planning, "rank_many", lambda *a, **k: pytest.fail("ranked before the error"))
    (tmp_path / "s.yaml").write_text(f"defaults: {{machine: {big}, partitions: {{tiny: {small}}}}}\n"
                                     "scenarios:\n  - {ivp: heat2d, partition: small}\n"
                                     "  - {ivp: heat2d, partition: gpu}\n")
    code, out, err = run_cli(capsys, "plan", tmp_path / "s.yaml", "--out", tmp_path / "p.json",
                             "--store", tmp_path / "st.sqlite")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert (f"{tmp_path}/s.yaml: field 'scenarios[1].partition': unknown partition 'gpu' "
            "(known: big, small, tiny;") in err
    assert not (tmp_path / "p.json").exists()
    # without a machine that maps partitions, the defaults' map alone is known
    (tmp_path / "s.yaml").write_text("scenarios:\n  - {ivp: heat2d, partition: gpu}\n")
    code, out, err = run_cli(capsys, "plan", tmp_path / "s.yaml", "--out", tmp_path / "p.json")
    assert code == 2 and "field 'scenarios[0].partition': unknown partition 'gpu' (known: none;" in err


@pytest.mark.parametrize("text, field", [
    ("scenarios:\n  - {ivp: heat2d, partition: 'a b'}\n", "scenarios[0].partition"),
    ("scenarios:\n  - {ivp: heat2d, partition: 'a,b'}\n", "scenarios[0].partition"),
    ("scenarios:\n  - {ivp: heat2d, partitions: {a: b}}\n", "scenarios[0].partitions"),   # defaults only
    ("defaults: {partitions: {a: 1}}\nscenarios:\n  - {ivp: heat2d}\n", "defaults.partitions.a"),
])
def test_bad_partition_fields(tmp_path, capsys, text, field):
    (tmp_path / "s.yaml").write_text(text)
    code, out, err = run_cli(capsys, "plan", tmp_path / "s.yaml", "--out", tmp_path / "p.json")
    assert code == 2 and f"field '{field}'" in err and len(err.strip().splitlines()) == 1


def test_a_bad_partition_name_in_a_machine_file(tmp_path):
    bad = _cluster_file(tmp_path / "bad.yaml", 2, "  partitions: {'a b': small}\n")
    with pytest.raises(InputError) as e:
        load_machine(str(bad))
    assert "field 'cluster.partitions.a b'" in str(e.value)
    assert load_machine(DEFAULT_MACHINE).partitions == {}


def test_the_plan_records_each_scenarios_partition_and_machine(tmp_path, cluster, capsys, own_replay_store):
    small, big = cluster
    (tmp_path / "s.yaml").write_text(f"defaults: {{machine: {big}, n: 1440000, threads: 1, top: 1}}\nscenarios:\n"
                                     "  - {ivp: heat2d, nodes: 2, partition: small}\n  - {ivp: heat2d, nodes: 2}\n")
    code, out, err = run_cli(capsys, "plan", tmp_path / "s.yaml", "--out", tmp_path / "p.json",
                             "--store", own_replay_store)
    assert code == 0, err
    plan = json.loads((tmp_path / "p.json").read_text())
    assert plan["plan_version"] == planning.PLAN_VERSION == 2
    got = [(s["partition"], s["machine"], s["machine_path"], s["id"]) for s in plan["scenarios"]]
    assert got == [("small", "small", str(small), "heat2d/n=1440000/nodes=2/threads=1/small/partition=small"),
                   (None, "big", str(big), "heat2d/n=1440000/nodes=2/threads=1/big")]
    assert planning.read_plan(tmp_path / "p.json")["scenarios"][0]["partition"] == "small"


def test_a_plan_of_version_1_reads_as_one_without_partitions(tmp_path):
    entry = {"ivp_path": "x", "method": "m", "machine_path": "y", "n": 1, "nodes": 1, "threads": 1, "run": {},
             "variants": []}
    (tmp_path / "p.json").write_text(json.dumps({"plan_version": 1, "scenarios": [entry]}))
    assert "partition" not in planning.read_plan(tmp_path / "p.json")["scenarios"][0]
    (tmp_path / "p.json").write_text(json.dumps({"plan_version": 4, "scenarios": [entry]}))
    with pytest.raises(InputError, match="plan_version"):
        planning.read_plan(tmp_path / "p.json")
    (tmp_path / "p.json").write_text(json.dumps({"plan_version": 2, "scenarios": [dict(entry, partition="a\nb")]}))
    with pytest.raises(InputError, match=r"scenarios\[0\]\.partition"):
        planning.read_plan(tmp_path / "p.json")


@pytest.mark.parametrize("version, shown", [("true", "true"), ("false", "false"), ("1.0", "1.0"), ('"2"', '"2"'),
                                            ("null", None), ("[1]", None)])
def test_a_plan_version_that_is_not_exactly_an_integer_is_refused(tmp_path, capsys, version, shown):
    plan = tmp_path / "p.json"
    plan.write_text('{"plan_version": %s, "scenarios": []}' % version)
    code, out, err = run_cli(capsys, "tune", "--plan", plan)
    assert code == 2 and "Traceback" not in err and err.strip().splitlines() == [
        f"autotune: error: --plan {plan}: field 'plan_version': expected a plan written by `autotune plan` "
        f"(version {planning.PLAN_VERSION})" + (f", not {shown}" if shown else "")]
    with pytest.raises(InputError, match="field 'plan_version'"):
        planning.read_plan(plan)

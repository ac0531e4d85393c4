"""Shared fixtures.  The kerncraft results are slow: one session store holds them."""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from functools import lru_cache
from pathlib import Path

import pytest

# machine files made by tests (calibrate --node) go to a scratch dir, never the user's
os.environ["AUTOTUNE_MACHINES"] = tempfile.mkdtemp(prefix="autotune-test-machines-")
# and the parses of data files kept between commands (specs.parsedfiles) too
os.environ["AUTOTUNE_PARSED"] = tempfile.mkdtemp(prefix="autotune-test-parsed-")

from autotune.cli import main
from autotune.tools.toolchain import find_executable

# a test that uses one of these fixtures (directly or through another fixture) gets the marker,
# so `pytest -m "not kerncraft and not mpi and not compiler and not install"` is the fast subset
# (`install`: the tests that build the wheel or pip-install a package, marked by hand)
FIXTURE_MARKS = {"cold_heat2d": "kerncraft", "session_store": "kerncraft", "mpiexec": "mpi",
                 "compiler": "compiler"}


def pytest_addoption(parser):
    parser.addoption("--all-variants", action="store_true",
                     help="run every variant's solver in the correctness checks (default: the paper's "
                          "forms and a pairwise cover of the dimensions)")


def pytest_collection_modifyitems(items):
    for item in items:
        for fixture, mark in FIXTURE_MARKS.items():
            if fixture in item.fixturenames:
                item.add_marker(mark)


@pytest.fixture(scope="session")
def mpiexec():
    """The MPI launcher (the mpich wheel's, beside this Python, or one on PATH)."""
    exe = find_executable("mpiexec")
    assert exe, "mpiexec not found: pip install mpich"
    return exe


@pytest.fixture(scope="session")
def compiler():
    """A C compiler with OpenMP, for generated solvers and the benchmarks."""
    exe = find_executable("gcc") or find_executable("cc")
    assert exe, "no C compiler on PATH"
    return exe


@pytest.fixture()
def private_builds(tmp_path_factory, monkeypatch, compiler, mpiexec):
    """Compiled solvers go to the session's scratch dir (they need mpicc and mpiexec)."""
    monkeypatch.setenv("AUTOTUNE_BUILDS", str(tmp_path_factory.getbasetemp() / "builds"))


def uarch_args() -> list[str]:
    """[] where this host's CPU is identified; else an explicit --uarch of its ISA (assumed), so
    that the tests that make a machine file of this host run on any CPU."""
    from autotune.errors import InputError
    from autotune.tools.cpuprobe import identify_cpu, this_isa
    try:
        identify_cpu()
        return []
    except InputError:
        return ["--uarch", "zen3" if this_isa() == "x86" else "n1"]


def run_cli(capsys, *argv):
    """Run `autotune argv` in-process; return (exit code, stdout, stderr)."""
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


RECORDED = Path(__file__).with_name("data") / "ecm_results.json"


@pytest.fixture(scope="session")
def replay_template(tmp_path_factory):
    """A store holding recorded kerncraft results (tests/record_ecm.py), for tests about something
    else than the analyses: each record is re-keyed with the compiler, kerncraft and OSACA
    versions installed now.  Records whose kernel code or machine file changed no longer match
    and are analysed for real."""
    from autotune.storage.store import Store, ecm_key
    from autotune.tools.toolchain import compiler_version, package_version
    path = tmp_path_factory.mktemp("replay") / "store.sqlite"
    store = Store(path)
    for rec in json.loads(RECORDED.read_text()):
        inputs = dict(rec["inputs"], compiler_version=compiler_version(rec["inputs"]["compiler"]),
                      kerncraft=package_version("kerncraft"), osaca=package_version("osaca"))
        store.put_ecm(ecm_key(inputs), rec["part"], rec["regime"], rec["machine"], rec["result"], inputs)
    store.close()
    return path


@pytest.fixture(scope="session")
def replay_store(replay_template, tmp_path_factory):
    """The recorded results, shared by the tests of a session."""
    dst = tmp_path_factory.mktemp("replay-shared") / "store.sqlite"
    shutil.copy(replay_template, dst)
    return dst


@pytest.fixture()
def own_replay_store(replay_template, tmp_path):
    """The recorded results for one test alone (nothing other tests stored shows)."""
    dst = tmp_path / "own-store.sqlite"
    shutil.copy(replay_template, dst)
    return dst


@pytest.fixture(scope="session")
def session_store(tmp_path_factory):
    return tmp_path_factory.mktemp("store") / "store.sqlite"


@pytest.fixture(scope="session")
def cold_heat2d(session_store):
    """A cold `rank --ivp heat2d --nodes 8 --format json` on a fresh store (real kerncraft)."""
    import contextlib
    import io

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["rank", "--ivp", "heat2d", "--nodes", "8", "--format", "json",
                     "--store", str(session_store)])
    assert code == 0, err.getvalue()
    return json.loads(out.getvalue()), err.getvalue()


def pool_size(ivp: str = "heat2d", controlled: bool = False) -> int:
    """How many variants an IVP has: every combination of the registry's values (comm: those the
    IVP allows) that breaks no rule.  Tests take the count from here, never as a literal."""
    return ranked_size(ivp, controlled=controlled)


# what the reference cluster's rankings of heat2d at its default size leave out: the pipelined
# step's windows in row order (access distance 5984, 8 threads) exceed the 20 MiB last-level
# cache; over strips they fit.  The sweeps' strips of a 2D grid are whole rows: row order.  The
# items its notes name, and the variants it drops
HEAT_DEFAULT_EXCLUDED = ("pipe=wavefront", "traversal=strips")
HEAT_DEFAULT_DROPPED = ("pipe=wavefront+traversal=rows", "pipe=none+traversal=strips")
# an IVP that declares no grid runs no strips
GRIDLESS = ("traversal=strips",)


@lru_cache(maxsize=None)      # the product has thousands of combinations; many tests ask the same
def ranked_size(ivp: str = "heat2d", excluded: tuple = (), controlled: bool = False) -> int:
    """How many variants a ranking lists where the values `excluded` do not pay: "key=value",
    or "key=value+key=value" for the variants that have all of them; controlled: of a step chosen
    by step-size control (the step-control dimensions' other values)."""
    from itertools import product

    from autotune.specs.ivp import load_ivp
    from autotune.specs.variants import DIMENSIONS, broken_rule, spaces
    keys = list(DIMENSIONS)
    drop = [{tuple(one.split("=")) for one in item.split("+")} for item in excluded]
    total = 0
    for way in spaces(load_ivp(ivp), controlled):   # each way the IVP can be stored, with the schemes it allows so
        fixed = dict(way.fixed)
        values = [[fixed[k]] if k in fixed else [v for v in DIMENSIONS[k].values_for(controlled)
                                                 if k != "comm" or v in way.comm]
                  for k in keys]
        total += sum(1 for combo in product(*values) if broken_rule(dict(zip(keys, combo))) is None
                     and not any(d <= set(zip(keys, combo)) for d in drop))
    return total


def free_factor() -> int:
    """How many times every count over the ruled dimensions repeats: the product of the value
    counts of the dimensions that no rule names (neither has rules nor is named by one).  A
    dimension added without rules multiplies every sub-space count by its values, and the tests
    that count a sub-space of today's (the fused variants, a filter's matches) scale with it."""
    from autotune.specs.variants import DIMENSIONS
    ruled = {k for d in DIMENSIONS.values() for v in d.choices for k, _ in v.requires}
    ruled |= {key for key, d in DIMENSIONS.items() if any(v.requires for v in d.choices)}
    out = 1
    for key, d in DIMENSIONS.items():
        if key not in ruled:
            out *= len(d.values_for(False))
    return out

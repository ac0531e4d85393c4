"""A new variant dimension changes no file of the project: one defined here, installed as a plug-in
(the entry point group autotune.dimensions), doubles the pool; with its default value every
prediction and every solver is byte for byte what it is without it; its other value's solvers
compile and compute the same numbers."""
from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import textwrap

import pytest

import autotune
from autotune.codegen.solver import solver_source
from autotune.specs.ivp import load_ivp
from autotune.specs.method import load_method
from autotune.specs.variants import enumerate_variants

TOY = '''
"""toy: the solver's loops unrolled by the compiler, or not."""
from autotune.specs.dimension import Dimension, values

UNROLL = '#pragma GCC optimize ("unroll-loops")'


def _render(value, _):
    return {"preamble": [UNROLL] if value == "unrolled" else []}


DIMENSION = Dimension("toy", 1000, values(["plain", "unrolled"], "solver.c.j2:preamble ({})"), "plain",
                      "a toy: the solver compiled with its loops unrolled (unrolled), or not (plain)",
                      render=_render)
'''

# In the child: the pool, every solver's digest, and the ranking, with the toy dimension found
CHILD = '''
import hashlib, json, sys
import autotune
from autotune.codegen.solver import solver_source
from autotune.specs.ivp import load_ivp
from autotune.specs.method import load_method
from autotune.specs.variants import DIMENSIONS, enumerate_variants
from autotune.storage.pickled import code_digest

ivp, method = load_ivp("heat2d"), load_method("radauIIA7")
pool = enumerate_variants(ivp.comm)
ranked = autotune.rank("heat2d", nodes=8, store=sys.argv[1])
print(json.dumps({
    "dimensions": list(DIMENSIONS),
    "pool": [v.name for v in pool],
    "sources": {v.name: hashlib.sha256(solver_source(ivp, method, v, 4096).encode()).hexdigest() for v in pool},
    "ranked": {r.variant.name: r.prediction.total_s for r in ranked.ordered},
    "bound_s": ranked.bound_s,
    "code_digest": code_digest(),
}))
'''


@pytest.fixture()
def plugin(tmp_path):
    """A folder holding the toy dimension's module and the metadata that names it as a plug-in."""
    (tmp_path / "toydim.py").write_text(TOY)
    info = tmp_path / "toydim-0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toydim\nVersion: 0\n")
    (info / "entry_points.txt").write_text("[autotune.dimensions]\ntoy = toydim\n")
    return tmp_path


def _with_plugin(plugin, script: str, *args: str) -> str:
    import os
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(plugin), os.environ.get("PYTHONPATH", "")]))
    # run from the plug-in's folder: from the checkout, "-c" would put its source tree (not the
    # installed package) first on the path
    got = subprocess.run([sys.executable, "-c", textwrap.dedent(script), *args], capture_output=True, text=True,
                         env=env, timeout=300, cwd=plugin)
    assert got.returncode == 0, got.stderr[-3000:]
    return got.stdout


def test_a_dimension_kept_outside_changes_nothing_else(plugin, own_replay_store):
    ivp, method = load_ivp("heat2d"), load_method("radauIIA7")
    pool = enumerate_variants(ivp.comm)
    today = autotune.rank("heat2d", nodes=8, store=own_replay_store)
    child = json.loads(_with_plugin(plugin, CHILD, str(own_replay_store)))

    assert child["dimensions"][-1] == "toy" and len(child["pool"]) == 2 * len(pool)
    plain = [name for name in child["pool"] if "toy=" not in name]
    assert sorted(plain) == sorted(v.name for v in pool)        # the default is left out of names
    for v in pool:      # the default's solvers: byte for byte today's
        assert child["sources"][v.name] == hashlib.sha256(solver_source(ivp, method, v, 4096).encode()).hexdigest()
        assert child["sources"][v.name + ",toy=unrolled"] != child["sources"][v.name]
    # the default's predictions: exactly today's; the toy prices nothing, so its other value's too
    # (and the same variants: those a value that does not pay here leaves out, as today)
    ranked = {n: t for n, t in child["ranked"].items() if "toy=" not in n}
    assert ranked == {r.variant.name: r.prediction.total_s for r in today.ordered}
    assert all(child["ranked"][n + ",toy=unrolled"] == t for n, t in ranked.items())
    assert child["bound_s"] == today.bound_s
    # the stored layouts are keyed by the code, the plug-in's included: editing it is a new key
    from autotune.storage.pickled import code_digest
    assert child["code_digest"] != code_digest()


BUILD = '''
import json, sys
import numpy as np
from autotune.codegen.solver import solver_source
from autotune.request.run import RunOptions
from autotune.specs.ivp import load_ivp
from autotune.specs.method import load_method
from autotune.specs.variants import parse_variant
from autotune.tools.build import build, run
from autotune.tools.launcher import parse_launcher

ivp, method, n = load_ivp("heat2d"), load_method("radauIIA7"), 64
out = {}
for name in sys.argv[2:]:
    v = parse_variant(name, ivp.comm)
    source = solver_source(ivp, method, v, n)
    exe = build(source, RunOptions().plan(1.0).flags)
    path = sys.argv[1] + "/" + str(len(out)) + ".bin"
    run(exe, parse_launcher(None), 1, 2, n, ivp.size_value(n), 3, 1e-3, 0, path)
    out[name] = {"unrolled": "unroll-loops" in source, "y": np.fromfile(path).tolist()}
print(json.dumps(out))
'''


def test_the_toy_value_compiles_and_computes_the_same_numbers(plugin, private_builds, tmp_path):
    names = ["lc=jli,comm=neighbour", "lc=jli,comm=neighbour,toy=unrolled",
             "lc=jl-onepass,comm=neighbour,au=fused,pred=direct,buf=ghost,rhs=onepass,fuse=rhs-lc,block=l1,toy=unrolled"]
    got = json.loads(_with_plugin(plugin, BUILD, str(tmp_path), *names))
    assert [got[n]["unrolled"] for n in names] == [False, True, True]
    ref = got[names[0]]["y"]
    scale = max(map(abs, ref))
    assert scale > 0
    for n in names[1:]:
        assert len(got[n]["y"]) == len(ref) and max(abs(a - b) for a, b in zip(got[n]["y"], ref)) <= 1e-12 * scale, n


def test_importlib_metadata_is_asked_only_where_a_distribution_may_declare_a_dimension(plugin, tmp_path_factory):
    from autotune.dimensions import _may_declare
    other = tmp_path_factory.mktemp("other")
    (other / "plain-1.dist-info").mkdir()                       # no entry points at all
    (other / "tool-1.dist-info").mkdir()
    (other / "tool-1.dist-info" / "entry_points.txt").write_text("[console_scripts]\ntool = tool:main\n")
    missing = str(other / "gone")
    assert not _may_declare([str(other), missing])
    assert _may_declare([str(other), missing, str(plugin)])     # the toy's metadata names the group
    archive = other / "bundle.zip"                              # what only importlib.metadata reads
    archive.write_bytes(b"PK")
    assert _may_declare([str(other), str(archive)])
    egg = other / "toydim-0-py3.11.egg" / "EGG-INFO"            # an unzipped egg on the path
    egg.mkdir(parents=True)
    (egg / "entry_points.txt").write_text("[autotune.dimensions]\ntoy = toydim\n")
    assert not _may_declare([str(other)]) and _may_declare([str(other), str(egg.parent)])
    upper = other / "Tool-2.DIST-INFO"                          # a suffix in capitals is one too
    upper.mkdir()
    (upper / "entry_points.txt").write_text("[autotune.dimensions]\nx = y\n")
    assert _may_declare([str(other)])

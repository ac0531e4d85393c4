"""The distribution carries its data: a wheel built from this tree holds the shipped IVPs,
machines, methods, templates (every comm scheme's too) and benchmark sources inside the package,
and the code finds them through importlib.resources, never through the source tree."""
import ast
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from autotune.specs.schemes import SCHEMES
from autotune.specs.shipped import KINDS, shipped_dir

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    # the test extra brings the build backend (pyproject's build-system.requires): no isolated
    # environment to set up for it
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w",
                           str(out), str(ROOT)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"the wheel did not build (the test extra's setuptools>=77?): {proc.stderr[-2000:]}"
    return zipfile.ZipFile(next(out.glob("autotune-*.whl")))


@pytest.mark.install
def test_wheel_ships_the_data_inside_the_package(wheel):
    names = set(wheel.namelist())
    for kind, ext in (("ivps", "yaml"), ("machines", "yaml"), ("variants", "j2")):
        here = sorted(p.name for p in (ROOT / kind).glob(f"*.{ext}"))
        assert here and {f"autotune/data/{kind}/{n}" for n in here} <= names
    assert {f"autotune/data/variants/{s.template}" for s in SCHEMES.values()} <= names
    assert "autotune/data/methods/radauIIA7.yaml" in names
    # the node benchmarks beside the module that builds them; the MPI ones with their runners
    assert {"autotune/tools/stream.c", "autotune/tools/clockchain.c", "benchmarks_mpi/barrier.c"} <= names
    # the developer benchmarks (benchmarks/) stay in the checkout
    shipped = [n for n in names if n.startswith(("benchmarks/", "autotune/bench"))]
    assert shipped == [], f"benchmarks in the wheel (from a stale build/lib?): {shipped}"
    assert not any(n.startswith(("ivps/", "machines/", "variants/")) for n in names)
    meta = wheel.read("autotune-0.1.0.dist-info/METADATA").decode()
    for dep in ("kerncraft", "mpi4py", "numpy", "scipy", "pandas", "pyyaml", "jinja2", "ruamel.yaml"):
        assert re.search(rf"^Requires-Dist: {re.escape(dep)}\b", meta, re.M | re.I), dep
    # distutils for kerncraft where Python has none; the licence as an SPDX expression
    assert re.search(r"""^Requires-Dist: setuptools>=66\.1; python_version >= ["']3\.12["']$""", meta, re.M), meta
    assert re.search(r"^License-Expression: AGPL-3\.0-or-later$", meta, re.M)
    assert {f"Classifier: Programming Language :: Python :: 3.{m}" for m in (11, 12, 13)} <= set(meta.splitlines())


def test_shipped_data_is_found_as_package_resources():
    for kind in KINDS:
        d = shipped_dir(kind)
        assert d.is_dir() and any(d.iterdir())
    with pytest.raises(ValueError):
        shipped_dir("nonsense")


# Run by the installed package's Python, in a folder outside the checkout: imports every module
# of the distribution, reads every shipped file, lists what is shipped and generates the kernel
# parts and solvers of one IVP; reports where each module came from and each file it opened.
INSTALLED_RUN = r"""
import json, os, pkgutil, sys
opened = []
sys.addaudithook(lambda event, args: opened.append(os.path.realpath(os.fsdecode(args[0])))
                 if event == "open" and isinstance(args[0], (str, bytes, os.PathLike)) else None)
import autotune
for info in pkgutil.walk_packages(autotune.__path__, "autotune."):
    if not info.name.endswith("__main__"):
        __import__(info.name)
from autotune.cli.main import main
from autotune.specs.shipped import KINDS, shipped_dir
files = {kind: sorted(str(p.relative_to(shipped_dir(kind))) for p in shipped_dir(kind).rglob("*")
                      if p.is_file() and p.read_bytes() is not None) for kind in KINDS}
codes = [main(["list", what]) for what in ("ivps", "machines", "methods", "variants")]
codes.append(main(["generate", "--ivp", "heat2d", "--out", "generated"]))
modules = {name: getattr(m, "__file__", None) for name, m in sys.modules.items()
           if name.split(".")[0] in ("autotune", "benchmarks_mpi")}
print(json.dumps({"codes": codes, "files": files, "modules": modules, "opened": opened}))
"""


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory):
    """The wheel installed into a folder of its own (pip, no dependencies, no index)."""
    target = tmp_path_factory.mktemp("installed")
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--target",
                    str(target), wheel.filename], check=True, capture_output=True, timeout=300)
    return target


@pytest.mark.install
def test_the_installed_package_reads_only_itself_from_outside_the_checkout(installed, tmp_path):
    """The installed package, run where the checkout is not (its own folder first on the path, the
    site's .pth files, and with them the editable install of this checkout, not read): every
    module loads from the installed folder, every file it opens lies outside the checkout, every
    shipped kind of file is there as in the checkout, and the parts and solvers it generates are
    the checkout's byte for byte."""
    import json
    import site

    from autotune.cli.main import main

    run = tmp_path / "elsewhere"
    run.mkdir()
    path = [str(installed), *site.getsitepackages(), site.getusersitepackages()]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    out = subprocess.run([sys.executable, "-S", "-c", INSTALLED_RUN], cwd=run, capture_output=True, text=True,
                         env=dict(env, PYTHONPATH=os.pathsep.join(path)), timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout.splitlines()[-1])
    target = str(installed.resolve())
    assert not [m for m, f in got["modules"].items() if f and not os.path.realpath(f).startswith(target + os.sep)]
    assert {"autotune.specs.shipped", "autotune.codegen.solver", "autotune.cli.listing"} <= set(got["modules"])
    inside = sorted({f for f in got["opened"] if f == str(ROOT) or f.startswith(str(ROOT) + os.sep)})
    assert inside == [], inside
    for kind in KINDS:
        here = sorted(str(p.relative_to(shipped_dir(kind))) for p in shipped_dir(kind).rglob("*")
                      if p.is_file() and "__pycache__" not in p.parts)
        assert got["files"][kind] and [f for f in got["files"][kind] if "__pycache__" not in f] == here, kind
    assert got["codes"] == [0] * 5, out.stderr[-3000:]
    there, here = run / "generated", tmp_path / "generated"
    assert main(["generate", "--ivp", "heat2d", "--out", str(here)]) == 0
    ours = sorted(p.relative_to(here) for p in here.rglob("*") if p.is_file())
    assert len(ours) > 100 and sorted(p.relative_to(there) for p in there.rglob("*") if p.is_file()) == ours
    assert [f for f in ours if (here / f).read_bytes() != (there / f).read_bytes()] == []


def _anchored(expr: ast.AST, anchors: set[str]) -> bool:
    """Whether an expression starts from a module's own file: __file__, importlib.resources'
    files(...), or a name assigned from one of them."""
    for n in ast.walk(expr):
        if isinstance(n, ast.Name) and (n.id == "__file__" or n.id in anchors):
            return True
        if isinstance(n, ast.Call) and (getattr(n.func, "attr", None) or getattr(n.func, "id", None)) == "files":
            return True
    return False


def reaching_out(source: str) -> list[int]:
    """The lines where a path is made upward from a module's own file or package: .parent,
    .parents[...], os.path.dirname or / ".." of an anchored expression (through names too)."""
    tree = ast.parse(source)
    anchors: set[str] = set()
    while True:
        more = {t.id for n in ast.walk(tree) if isinstance(n, ast.Assign) and _anchored(n.value, anchors)
                for t in n.targets if isinstance(t, ast.Name)} - anchors
        if not more:
            break
        anchors |= more
    lines = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Attribute) and n.attr in ("parent", "parents"):
            base = n.value
        elif isinstance(n, ast.Call) and getattr(n.func, "attr", getattr(n.func, "id", None)) == "dirname" and n.args:
            base = n.args[0]
        elif isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div) and isinstance(n.right, ast.Constant) \
                and n.right.value == "..":
            base = n.left
        else:
            continue
        if _anchored(base, anchors):
            lines.append(n.lineno)
    return sorted(set(lines))


def test_the_reader_of_upward_paths():
    assert reaching_out("p = Path(__file__).parent.parent / 'ivps'") == [1]
    assert reaching_out("import os\nd = os.path.dirname(os.path.dirname(__file__))") == [2]
    assert reaching_out("here = Path(__file__)\nroot = here\n\ndef f():\n    return root.parents[2]") == [5]
    assert reaching_out("d = Path(str(resources.files('autotune'))).parent") == [1]
    assert reaching_out("d = resources.files('autotune') / '..' / 'ivps'") == [1]
    assert reaching_out("src = Path(__file__).with_name('barrier.c')\nout = path.parent") == []


@pytest.mark.install
def test_no_shipped_module_makes_a_path_out_of_its_package(wheel):
    """Data are read through importlib.resources: no module of a package the wheel ships climbs
    from its own file or package folder (the installed run above finds what does at run time)."""
    shipped = {n.split("/")[0] for n in wheel.namelist() if "/" in n and ".dist-info/" not in n}
    assert "autotune" in shipped
    found = [f"{f.relative_to(ROOT)}:{line}" for top in sorted(shipped) for f in sorted((ROOT / top).rglob("*.py"))
             for line in reaching_out(f.read_text())]
    assert found == []

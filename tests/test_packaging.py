"""The distribution carries its data: a wheel built from this tree holds the shipped IVPs,
machines, methods, templates (every comm scheme's too) and benchmark sources inside the package,
and the code finds them through importlib.resources, never through the source tree."""
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
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w",
                    str(out), str(ROOT)], check=True, capture_output=True, timeout=300)
    return zipfile.ZipFile(next(out.glob("autotune-*.whl")))


def test_wheel_ships_the_data_inside_the_package(wheel):
    names = set(wheel.namelist())
    for kind, ext in (("ivps", "yaml"), ("machines", "yaml"), ("variants", "j2")):
        here = sorted(p.name for p in (ROOT / kind).glob(f"*.{ext}"))
        assert here and {f"autotune/data/{kind}/{n}" for n in here} <= names
    assert {f"autotune/data/variants/{s.template}" for s in SCHEMES.values()} <= names
    assert "autotune/data/methods/radauIIA7.yaml" in names and "benchmarks_mpi/stream.c" in names
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


def test_no_module_finds_data_through_the_source_tree():
    for f in (ROOT / "autotune").rglob("*.py"):
        text = f.read_text()
        assert "parent.parent" not in text and "parents[" not in text, f

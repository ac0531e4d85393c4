"""A Python that runs another checkout's autotune (the code before a change), for the benchmarks'
--against-code: its package from PYTHONPATH, and its shipped data (templates, IVPs, machines)
from its own folders.

The data are mapped into the package by pyproject's package-dir (`autotune.data.variants` is the
checkout's `variants/`).  An editable install resolves those packages to its own checkout whatever
PYTHONPATH says, so without more the other side renders this checkout's templates: a change to
the generated C is compared with itself.  So the child gets a sitecustomize, in a private folder
of this process, whose finder maps them to the other checkout's folders ahead of every other
finder, and which then runs the sitecustomize it hides, if there is one.
"""
from __future__ import annotations

import atexit
import functools
import os
import shutil
import sys
import tempfile
import tomllib
from pathlib import Path

DATA_PREFIX = "autotune.data."
DATA_FOLDERS = {"ivps": "ivps", "machines": "machines", "variants": "variants"}   # without a pyproject

_SITECUSTOMIZE = """import importlib.util
import os
import sys

_FOLDERS = {folders!r}
_HERE = os.path.dirname(os.path.abspath(__file__))


class _CheckoutData:
    \"\"\"autotune.data.<kind> from the other checkout's folder (benchmarks/checkout.py).\"\"\"
    def find_spec(self, name, path=None, target=None):
        head, _, kind = name.rpartition(".")
        if head != "autotune.data" or kind not in _FOLDERS:
            return None
        folder = _FOLDERS[kind]
        return importlib.util.spec_from_file_location(name, os.path.join(folder, "__init__.py"),
                                                      submodule_search_locations=[folder])


sys.meta_path.insert(0, _CheckoutData())
for _entry in sys.path:       # the sitecustomize this one hides, run as Python would have
    _other = os.path.join(_entry or os.getcwd(), "sitecustomize.py")
    if os.path.abspath(_entry or os.getcwd()) != _HERE and os.path.isfile(_other):
        _spec = importlib.util.spec_from_file_location("_hidden_sitecustomize", _other)
        _spec.loader.exec_module(importlib.util.module_from_spec(_spec))
        break
"""


def data_folders(code: str) -> dict[str, str]:
    """{kind: absolute folder} of the checkout's data packages, as its pyproject maps them."""
    project = Path(code, "pyproject.toml")
    mapping = DATA_FOLDERS
    if project.is_file():
        dirs = tomllib.loads(project.read_text()).get("tool", {}).get("setuptools", {}).get("package-dir", {})
        mapping = {k[len(DATA_PREFIX):]: v for k, v in dirs.items() if k.startswith(DATA_PREFIX)}
    return {kind: str(Path(code, folder)) for kind, folder in mapping.items()}


@functools.lru_cache(maxsize=None)
def _boot_folder(code: str) -> str:
    """A private folder (removed at exit) holding the sitecustomize of `code`."""
    folder = tempfile.mkdtemp(prefix="autotune-bench-site-")
    atexit.register(shutil.rmtree, folder, True)
    Path(folder, "sitecustomize.py").write_text(_SITECUSTOMIZE.format(folders=data_folders(code)))
    return folder


def interpreter(code: str | None) -> tuple[list[str], dict]:
    """The command and environment of a Python that imports the autotune of `code` (a checkout;
    None: the one installed here), its shipped data included.  -P where `code` is given: python
    -m and -c put the folder they run in (this checkout) ahead of PYTHONPATH, which would run this
    checkout's autotune."""
    env = dict(os.environ)
    if not code:
        return [sys.executable], env
    code = os.path.abspath(code)
    env["PYTHONPATH"] = os.pathsep.join([_boot_folder(code), code,
                                         *([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])])
    return [sys.executable, "-P"], env

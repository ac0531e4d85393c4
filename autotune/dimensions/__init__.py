"""The variant dimensions, one module each, found rather than listed (docs/design.md#variant-dimensions).

Every module of this package that defines DIMENSION (a specs.dimension.Dimension) is one; so is
every module (or Dimension) that an installed distribution names under the entry point group
"autotune.dimensions" (a dimension kept outside this package).  A key or position used twice is
an error, and so are step hooks whose declarations conflict (specs.dimension.step_order).
Dimensions sit with specs on the bottom floor: they import specs only, and what a hook needs from
a higher floor is handed in (specs.dimension).
"""
from __future__ import annotations

import importlib
import os
import pkgutil
import sys
from functools import lru_cache

from autotune.specs.dimension import Dimension, ordered

GROUP = "autotune.dimensions"


@lru_cache(maxsize=1)
def _entry_points() -> tuple:
    """The entry points of the group, read once per process, by importlib.metadata where some
    installed distribution may declare one (_may_declare); none otherwise."""
    if not _may_declare(sys.path):
        return ()
    from importlib.metadata import entry_points
    return tuple(entry_points(group=GROUP))


def _may_declare(path: list[str]) -> bool:
    """Whether a distribution on `path` may declare an entry point of GROUP: a metadata folder
    (*.dist-info, *.egg-info, or an unzipped egg's EGG-INFO) whose entry_points.txt names the
    group, or a path entry that is a file (a zip archive, which only importlib.metadata reads).
    A scan of the folders takes a few milliseconds; importing importlib.metadata alone takes
    tens, on every start of every command.  (A distribution that only a custom import finder
    knows, on no path entry, is not seen; installers put none so.)"""
    needle = GROUP.encode()
    for entry in path:
        folder = entry or "."
        if os.path.isfile(folder):
            return True
        try:
            names = [e.name for e in os.scandir(folder) if e.name.lower().endswith((".dist-info", ".egg-info"))]
        except OSError:
            continue
        if folder.lower().rstrip("/").endswith(".egg"):
            names.append("EGG-INFO")
        for name in names:
            try:
                with open(os.path.join(folder, name, "entry_points.txt"), "rb") as f:
                    if needle in f.read():
                        return True
            except OSError:
                continue
    return False


def _modules():
    for info in pkgutil.iter_modules(__path__):
        yield importlib.import_module(f"{__name__}.{info.name}")
    for ep in _entry_points():
        yield ep.load()


def plugin_modules() -> list:
    """The modules of the dimensions kept outside this package (those the entry points name)."""
    return [sys.modules[ep.module] for ep in _entry_points() if ep.module in sys.modules]


def discover() -> dict[str, Dimension]:
    """Every dimension by key, in position order."""
    found = []
    for module in _modules():
        dim = module if isinstance(module, Dimension) else getattr(module, "DIMENSION", None)
        if isinstance(dim, Dimension):
            found.append(dim)
        elif dim is not None:
            raise TypeError(f"{module.__name__}.DIMENSION is not a Dimension")
    return ordered(found)

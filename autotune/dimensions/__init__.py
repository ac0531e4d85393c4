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
import pkgutil
import sys
from functools import lru_cache

from autotune.specs.dimension import Dimension, ordered

GROUP = "autotune.dimensions"


@lru_cache(maxsize=1)
def _entry_points() -> tuple:
    """The entry points of the group, read once per process (a scan of every installed
    distribution's metadata)."""
    from importlib.metadata import entry_points
    return tuple(entry_points(group=GROUP))


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

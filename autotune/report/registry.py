"""Renderers registered by (result type, format).  A renderer module (report/rank.py, ...)
registers its functions with the decorators here; report/render.py finds the modules (every
module of the package, with pkgutil: none is listed by hand) and looks them up.  This module
imports none of them, so no plug-in imports the module that loads it.  A duplicate
registration is an error, not a silent override."""
from __future__ import annotations

from typing import Callable

RENDERERS: dict[tuple[type, str], Callable] = {}


def renderer(result_type: type, fmt: str):
    """Register fn(result) -> str as the `fmt` rendering of `result_type`."""
    def deco(fn: Callable) -> Callable:
        key = (result_type, fmt)
        if key in RENDERERS:
            raise ValueError(f"duplicate renderer for {result_type.__name__} as {fmt}")
        RENDERERS[key] = fn
        return fn
    return deco


def plotter(result_type: type):
    """Register fn(result, path) as the figure of `result_type` (written to a .png/.svg/.pdf)."""
    return renderer(result_type, "plot")

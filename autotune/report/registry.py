"""Renderers registered by (result type, format).  A renderer module (report/rank.py, ...)
registers its functions with the decorators here; report/render.py finds the modules (every
module of the package, with pkgutil: none is listed by hand) and looks them up.  This module
imports none of them, so no plug-in imports the module that loads it.  A duplicate
registration is an error, not a silent override."""
from __future__ import annotations

from typing import Callable

RENDERERS: dict[tuple[type, str], Callable] = {}
CHUNKED: set[tuple[type, str]] = set()     # renderers that yield their text in pieces


def renderer(result_type: type, fmt: str, chunks: bool = False):
    """Register fn(result) -> str as the `fmt` rendering of `result_type`; chunks: fn yields the
    text in pieces instead (a sweep's CSV of millions of rows, written as it is made)."""
    def deco(fn: Callable) -> Callable:
        key = (result_type, fmt)
        if key in RENDERERS:
            raise ValueError(f"duplicate renderer for {result_type.__name__} as {fmt}")
        RENDERERS[key] = fn
        if chunks:
            CHUNKED.add(key)
        return fn
    return deco


def plotter(result_type: type):
    """Register fn(result, path) as the figure of `result_type` (written to a .png/.svg/.pdf)."""
    return renderer(result_type, "plot")

"""Renderers registered by (result type, format).  A front end asks `render(result, fmt)`; the
formats a result type offers drive the command line's --format choices.  A duplicate
registration is an error, not a silent override."""
from __future__ import annotations

import importlib
from typing import Callable

_RENDERERS: dict[tuple[type, str], Callable] = {}
_MODULES = ("rank", "sweep", "scale", "tune", "calibrate", "learn")
_loaded = False


def renderer(result_type: type, fmt: str):
    """Register fn(result) -> str as the `fmt` rendering of `result_type`."""
    def deco(fn: Callable) -> Callable:
        key = (result_type, fmt)
        if key in _RENDERERS:
            raise ValueError(f"duplicate renderer for {result_type.__name__} as {fmt}")
        _RENDERERS[key] = fn
        return fn
    return deco


def _load() -> None:
    global _loaded
    if not _loaded:
        _loaded = True
        for name in _MODULES:
            importlib.import_module(f"autotune.report.{name}")


def plotter(result_type: type):
    """Register fn(result, path) as the figure of `result_type` (written to a .png/.svg/.pdf)."""
    return renderer(result_type, "plot")


def plot(result, path) -> None:
    """Write the figure of a result (InputError for a path or extension the writer refuses)."""
    _load()
    importlib.import_module("autotune.report.plots")
    fn = _RENDERERS.get((type(result), "plot"))
    if fn is None:
        raise ValueError(f"no figure of {type(result).__name__}")
    fn(result, path)


def formats(result_type: type) -> list[str]:
    _load()
    return [fmt for (t, fmt) in _RENDERERS if t is result_type and fmt != "plot"]


def render(result, fmt: str) -> str:
    """The result as text in format fmt (table, csv, json, ...)."""
    _load()
    fn = _RENDERERS.get((type(result), fmt))
    if fn is None:
        raise ValueError(f"no {fmt} rendering of {type(result).__name__} (have: "
                         f"{', '.join(formats(type(result)))})")
    return fn(result)

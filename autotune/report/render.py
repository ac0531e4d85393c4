"""What a front end asks of the renderers: `render(result, fmt)`, the `formats` a result type
offers (they drive the command line's --format choices) and its `plot`.  The renderer modules
are not listed: the modules of this package are found with pkgutil and imported when a renderer
is looked up that is not registered yet (report.registry); a figure's module imports matplotlib
only when it draws."""
from __future__ import annotations

import importlib
import pkgutil

from typing import Iterator

from autotune.report.registry import CHUNKED, RENDERERS


def _modules(first: str = "") -> list[str]:
    """The modules of the report package, the one named `first` first."""
    package = importlib.import_module("autotune.report")
    return sorted((m.name for m in pkgutil.iter_modules(package.__path__)), key=lambda name: name != first)


def load_renderers() -> None:
    """Import every module of the report package (those imported already are not read again),
    so that each registers its renderers."""
    for module in _modules():
        importlib.import_module(f"autotune.report.{module}")


def _renderer(result_type: type, fmt: str):
    """The renderer of result_type as fmt, the report modules imported in turn until one
    registers it: first the namesake of the type's module (results/rank.py's types: report/rank.py),
    a guess that spares a command the other renderers' imports, not a list the search relies on."""
    key = (result_type, fmt)
    for module in [] if key in RENDERERS else _modules(result_type.__module__.rpartition(".")[2]):
        importlib.import_module(f"autotune.report.{module}")
        if key in RENDERERS:
            break
    return RENDERERS.get(key)


def formats(result_type: type) -> list[str]:
    """Every format result_type is rendered in (every report module imported)."""
    load_renderers()
    return [fmt for (t, fmt) in RENDERERS if t is result_type and fmt != "plot"]


class FormatChoices:
    """The formats of a result type named by its class name, for argparse's `choices`: the type
    (results.registry) and its renderers are imported only when a value is checked (the modules
    that have it) or the choices are shown (all of them), so that building a subcommand's
    parser imports neither."""

    def __init__(self, name: str):
        self._name = name

    def _type(self) -> type:
        from autotune.results.registry import find_result_type
        return find_result_type(self._name)

    def __contains__(self, fmt) -> bool:
        return fmt != "plot" and _renderer(self._type(), fmt) is not None

    def __iter__(self):
        return iter(formats(self._type()))


def render(result, fmt: str, **options) -> str:
    """The result as text in format fmt (table, csv, json, ...); options go to its renderer (a
    ranking's table: every_row=True lists every variant).  A JSON document starts with its
    `meta` (report.meta)."""
    fn = _lookup(result, fmt)
    text = fn(result, **options)
    if (type(result), fmt) in CHUNKED:
        text = "".join(text)
    if fmt == "json":
        from autotune.report.meta import with_meta
        text = with_meta(text, result)
    return text


def render_chunks(result, fmt: str, **options) -> Iterator[str]:
    """render()'s text in pieces, made as they are written where the renderer yields them (a
    sweep's CSV: one scenario at a time, never the whole text in memory), else in one."""
    fn = _lookup(result, fmt)
    if (type(result), fmt) in CHUNKED and fmt != "json":
        yield from fn(result, **options)
    else:
        yield render(result, fmt, **options)


def _lookup(result, fmt: str):
    fn = _renderer(type(result), fmt)
    if fn is None:
        raise ValueError(f"no {fmt} rendering of {type(result).__name__} (have: "
                         f"{', '.join(formats(type(result)))})")
    return fn


def plot(result, path) -> None:
    """Write the figure of a result (InputError for a path or extension the writer refuses)."""
    fn = _renderer(type(result), "plot")
    if fn is None:
        raise ValueError(f"no figure of {type(result).__name__}")
    fn(result, path)

"""Result types registered by name.  A result class registers itself with @result_type; the
modules of this package are found with pkgutil and imported when a name is looked up that is
not registered yet, so no list of types or of their modules is kept by hand (the command line's
--format choices and `autotune.__all__` are made from this registry).  A second class of a
registered name is an error, not a silent override (result_types(), which imports every module,
finds any)."""
from __future__ import annotations

import importlib
import pkgutil

RESULT_TYPES: dict[str, type] = {}


def result_type(cls: type) -> type:
    """Register cls under its class name."""
    name = cls.__name__
    known = RESULT_TYPES.get(name)
    if known is not None and known is not cls:
        raise ValueError(f"duplicate result type {name}: {known.__module__}.{name} and {cls.__module__}.{name}")
    RESULT_TYPES[name] = cls
    return cls


def _modules(name: str = "") -> list[str]:
    """The modules of the results package; those whose name begins the type's come first (a
    guess that spares a command the others' imports: the search does not depend on it)."""
    package = importlib.import_module("autotune.results")
    found = [m.name for m in pkgutil.iter_modules(package.__path__)]
    return sorted(found, key=lambda module: not name.lower().startswith(module))


def discover() -> None:
    """Import every module of the results package (those imported already are not read again)."""
    for module in _modules():
        importlib.import_module(f"autotune.results.{module}")


def result_types() -> dict[str, type]:
    """Every result type, by name."""
    discover()
    return dict(RESULT_TYPES)


def find_result_type(name: str) -> type:
    """The result type of that name, its modules imported in turn until it is registered
    (LookupError where none registers it)."""
    for module in [] if name in RESULT_TYPES else _modules(name):
        importlib.import_module(f"autotune.results.{module}")
        if name in RESULT_TYPES:
            break
    try:
        return RESULT_TYPES[name]
    except KeyError:
        raise LookupError(f"no result type {name} (have: {', '.join(sorted(RESULT_TYPES))})") from None

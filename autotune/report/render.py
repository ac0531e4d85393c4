"""What a front end asks of the renderers: `render(result, fmt)`, the `formats` a result type
offers (they drive the command line's --format choices) and its `plot`.  The renderer modules
are found by name and imported on first use (the figures, which need matplotlib, only when a
figure is asked for)."""
from __future__ import annotations

import importlib

from autotune.report.registry import RENDERERS

MODULES = ("rank", "sweep", "scale", "tune", "calibrate", "learn")
FIGURES = "plots"
# the renderer module of each result type (a type not named here: every module is loaded)
MODULE_OF = {"RankResult": "rank", "ExplainResult": "rank", "RankSet": "rank", "SweepResult": "sweep",
             "ScaleResult": "scale", "TuneResult": "tune", "PlanResult": "tune", "PlanRunResult": "tune",
             "PlanStatusResult": "tune", "CalibrateResult": "calibrate", "HostMachineResult": "calibrate",
             "LearnResult": "learn"}
_loaded: set[str] = set()


def _load(result_type: type | None = None) -> None:
    """The renderer module of result_type (a rank imports none of the tune's), or all of them."""
    wanted = MODULE_OF.get(getattr(result_type, "__name__", None))
    for name in (wanted,) if wanted else MODULES:
        if name not in _loaded:
            importlib.import_module(f"autotune.report.{name}")
            _loaded.add(name)


def formats(result_type: type) -> list[str]:
    _load(result_type)
    return [fmt for (t, fmt) in RENDERERS if t is result_type and fmt != "plot"]


class FormatChoices:
    """The formats of a result type named by its module and class, for argparse's `choices`: the
    type and the renderers are imported only when a value is checked or the choices are shown,
    so a command line that builds every subcommand's parser stays as quick as its one command."""

    def __init__(self, module: str, name: str):
        self._where = (module, name)

    def _formats(self) -> list[str]:
        module, name = self._where
        return formats(getattr(importlib.import_module(module), name))

    def __contains__(self, fmt) -> bool:
        return fmt in self._formats()

    def __iter__(self):
        return iter(self._formats())


def render(result, fmt: str, **options) -> str:
    """The result as text in format fmt (table, csv, json, ...); options go to its renderer (a
    ranking's table: every_row=True lists every variant)."""
    _load(type(result))
    fn = RENDERERS.get((type(result), fmt))
    if fn is None:
        raise ValueError(f"no {fmt} rendering of {type(result).__name__} (have: "
                         f"{', '.join(formats(type(result)))})")
    return fn(result, **options)


def plot(result, path) -> None:
    """Write the figure of a result (InputError for a path or extension the writer refuses)."""
    _load(type(result))
    importlib.import_module(f"autotune.report.{FIGURES}")
    fn = RENDERERS.get((type(result), "plot"))
    if fn is None:
        raise ValueError(f"no figure of {type(result).__name__}")
    fn(result, path)

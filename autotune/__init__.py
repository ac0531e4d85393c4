"""autotune: offline selection of PIRK solver implementation variants for clusters.

    import autotune
    autotune.rank("heat2d", nodes=8).to_frame()
    autotune.tune(autotune.TuneRequest.of("heat2d", nodes=8, top=3, steps=20))

rank, sweep, scale, explain, tune, generate, plan and calibrate are the commands of the command line as
functions (autotune.api), with identify_cpu, calibrate_node and import_kerncraft for a new
cluster's machine file and learn for calibrate --from-runs.  They take the request objects the
command line builds (ScenarioRequest, RankRequest, TuneRequest, CalibrateRequest, RunOptions)
and return the result types (RankResult, TuneResult, ...), all exported here; bad input raises
InputError (docs/design.md#the-python-api).

Nothing but the errors is imported with the package (the command line imports it too): the API
is imported on first use, and the result types are found in their registry
(autotune.results.registry), so `__all__` is made when it is first read.
"""

__version__ = "0.1.0"

from autotune.errors import InputError, ToolError  # noqa: E402, F401 (exported)

# autotune.api's __all__: its functions and the request types they take
_API = ("rank", "sweep", "scale", "explain", "tune", "generate", "generate_online", "plan", "ingest", "calibrate", "identify_cpu", "calibrate_node",
        "import_kerncraft", "learn", "ScenarioRequest", "RankRequest", "TuneRequest", "CalibrateRequest",
        "RunOptions", "Progress")
_OWN = ("InputError", "ToolError", "__version__")


def _exports() -> list[str]:
    from autotune.results.registry import result_types
    return [*_API, *sorted(result_types()), *_OWN]


def __getattr__(name: str):
    """The API and its request types, imported on first use (the command line does not need
    them); a result type by name; __all__, with every registered result type."""
    if name in _API:
        from autotune import api
        return getattr(api, name)
    if name == "__all__":
        exports = _exports()
        globals()["__all__"] = exports
        return exports
    if not name.startswith("_") and name[:1].isupper():
        from autotune.results.registry import find_result_type
        try:
            return find_result_type(name)
        except LookupError:
            pass
    raise AttributeError(f"module 'autotune' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_exports()})

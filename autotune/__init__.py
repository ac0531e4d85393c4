"""autotune: offline selection of PIRK solver implementation variants for clusters.

    import autotune
    autotune.rank("heat2d", nodes=8).to_frame()

rank, sweep, scale, explain, tune and calibrate are the commands of the command line as
functions (autotune.api), with identify_cpu, calibrate_node and import_kerncraft for a new
cluster's machine file and learn for calibrate --from-runs; bad input raises InputError.
"""

__version__ = "0.1.0"

from autotune.errors import InputError, ToolError  # noqa: E402

_API = ("rank", "sweep", "scale", "explain", "tune", "calibrate", "identify_cpu", "calibrate_node",
        "import_kerncraft", "learn")
__all__ = [*_API, "InputError", "ToolError", "__version__"]


def __getattr__(name: str):
    """The API functions, imported on first use (the command line does not need them)."""
    if name in _API:
        from autotune import api
        return getattr(api, name)
    raise AttributeError(f"module 'autotune' has no attribute {name!r}")

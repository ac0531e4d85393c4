"""Which MPI library the benchmarks and solvers use, and the Slurm PMI plug-in that connects its
ranks (edge: asks mpi4py once per process, in a subprocess so this process stays MPI-free).

With the `mpich` wheel, `srun --mpi=pmi2` gives one MPI world; plain `srun` (MpiDefault=none)
starts separate 1-rank worlds, which a benchmark would time as "communication" with nobody.
"""
from __future__ import annotations

import os
import subprocess
import sys
from functools import lru_cache

# the first library name found in MPI_Get_library_version decides
PMI_OF_LIBRARY = (("Open MPI", "pmix"), ("MVAPICH", "pmi2"), ("Intel(R) MPI", "pmi2"), ("MPICH", "pmi2"))
DEFAULT_PMI = "pmi2"
ENV_OVERRIDE = "AUTOTUNE_SRUN_MPI"
_ASK = ("import mpi4py; mpi4py.rc.initialize = False; from mpi4py import MPI; "
        "print(MPI.Get_library_version().splitlines()[0])")


def pmi_for(library_version: str) -> str:
    """The srun --mpi plug-in for an MPI library (its version string)."""
    return next((pmi for name, pmi in PMI_OF_LIBRARY if name.lower() in library_version.lower()), DEFAULT_PMI)


@lru_cache(maxsize=None)
def library_version() -> str | None:
    try:
        proc = subprocess.run([sys.executable, "-c", _ASK], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout.strip() or None if proc.returncode == 0 else None


def srun_pmi() -> str:
    """$AUTOTUNE_SRUN_MPI, else the plug-in for mpi4py's MPI library, else pmi2."""
    return os.environ.get(ENV_OVERRIDE) or pmi_for(library_version() or "")


def launch_argv(launcher, procs: int, command: list[str], nodes: int | None = None) -> list[str]:
    """The launcher's argv for `command` on `procs` ranks, {pmi} filled where the template has it."""
    from autotune.tools.toolchain import resolve_argv
    pmi = srun_pmi() if launcher.needs_pmi else DEFAULT_PMI
    return resolve_argv(launcher.argv(procs, command, nodes, pmi))


def world_size_error(what: str, worlds: int, ranks, asked: int, argv: list[str]) -> str:
    """The message for a run whose MPI world is not the size asked for: `worlds` worlds of `ranks`."""
    got = f"{worlds} separate MPI worlds of {ranks} rank(s)" if worlds > 1 else f"an MPI world of {ranks} rank(s)"
    hint = ("srun needs the PMI plug-in of the MPI in use, e.g. --mpi=pmi2 for MPICH: use --launcher srun"
            if argv and os.path.basename(argv[0]) == "srun" else "the launcher did not connect the ranks")
    return f"{what} ran in {got}, not one of {asked} ({hint}): {' '.join(argv)}"


def placement(reported: dict | None, asked: int | None = None) -> dict | None:
    """A solver's "placement" (node and host name by rank) as stored: the distinct nodes; whether
    they are virtual (several nodes on fewer hosts: a test cluster, whose "network" is one host's
    memory); and packed, where the run was asked for more nodes than it ran on (a local launcher
    that cannot be told the nodes).  Neither is ever to be taken for a measurement across nodes.
    None where not reported."""
    if not reported or not reported.get("nodes"):
        return None
    nodes, hosts = reported["nodes"], reported.get("hosts") or reported["nodes"]
    distinct = sorted(set(nodes))
    return {"nodes": distinct, "ranks_per_node": {n: nodes.count(n) for n in distinct},
            "virtual": len(set(hosts)) < len(distinct), "packed": bool(asked and len(distinct) < asked)}


def placement_error(what: str, where: dict | None, nodes: int, argv: list[str]) -> str | None:
    """Why a run that asked for `nodes` nodes is no result (it ran on fewer), None where it is."""
    if where is None or len(where["nodes"]) >= nodes:
        return None
    return (f"{what} asked for {nodes} nodes and ran on {len(where['nodes'])} ({', '.join(where['nodes'])}): "
            f"its time is not a {nodes}-node measurement: {' '.join(argv)}")

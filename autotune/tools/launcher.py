"""Launchers as data: a template that becomes an argv list.  Building is pure; running is elsewhere.

    mpiexec -n {procs}                      (default)
    srun --mpi={pmi} -N {nodes} -n {procs}  (Slurm; {nodes} defaults to {procs}: one rank per node;
                                            {pmi}: the PMI plug-in of the MPI in use, pmi2 for MPICH)
    any template with {procs}, {nodes}, {ppn}, {pmi}

The edge that runs a launcher fills {pmi} (tools/mpiinfo.py); building stays pure.
"""
from __future__ import annotations

import shlex
from dataclasses import dataclass

from autotune.errors import InputError

DEFAULT = "mpiexec -n {procs}"
PRESETS = {"mpiexec": DEFAULT, "srun": "srun --mpi={pmi} -N {nodes} -n {procs}"}
FIELDS = {"procs", "nodes", "ppn", "pmi"}


@dataclass(frozen=True)
class Launcher:
    template: str

    @property
    def needs_pmi(self) -> bool:
        return "{pmi}" in self.template

    @property
    def places_nodes(self) -> bool:
        """Whether it is told how many nodes to spread the ranks over ({nodes} or {ppn})."""
        return "{nodes}" in self.template or "{ppn}" in self.template

    def argv(self, procs: int, command: list[str], nodes: int | None = None, pmi: str = "pmi2") -> list[str]:
        nodes = procs if nodes is None else nodes
        values = {"procs": procs, "nodes": nodes, "ppn": max(1, procs // max(nodes, 1)), "pmi": pmi}
        try:
            words = [w.format(**values) for w in shlex.split(self.template)]
        except (KeyError, IndexError, ValueError) as e:
            raise InputError(f"{self.template!r}: bad placeholder {e} (use {{procs}}, {{nodes}}, {{ppn}}, {{pmi}})",
                             field="launcher") from None
        return words + list(command)


def parse_launcher(text: str | None) -> Launcher:
    template = PRESETS.get(text or "mpiexec", text or DEFAULT)
    try:
        words = shlex.split(template)
    except ValueError as e:
        raise InputError(f"{text!r}: {e}", field="launcher") from None
    if not words:
        raise InputError(": empty command", field="launcher")
    if "{procs}" not in template:
        raise InputError(f"{text!r}: the template must contain {{procs}}", field="launcher")
    Launcher(template).argv(2, [])  # placeholder check
    return Launcher(template)


# a mixed allocation's launch: one group of ranks per kind of node, each with its threads
# (docs/usage.md "Mixed allocations"), in the MPMD form of the launchers that have one
MPMD_LAUNCHERS = ("mpiexec", "mpirun", "srun")


def mpmd_argv(launcher: Launcher, groups: list[tuple[int, int]], command: list[str], pmi: str = "pmi2",
              prefixes: list[list[str]] | None = None) -> list[str]:
    """The argv that starts `command` as one MPI world of several groups, (ranks, threads) each
    in order, one node a rank: mpiexec's `-n R -env OMP_NUM_THREADS T cmd : ...` (MPICH's
    hydra), or srun's heterogeneous step `srun --mpi=PMI -N R -n R -c T
    --export=ALL,OMP_NUM_THREADS=T cmd : ...` (within an allocation of as many components:
    a Slurm heterogeneous job).  prefixes: per group, words put before its command (a wrapper
    that starts it, e.g. in a cgroup of its own).  InputError for another launcher."""
    program = shlex.split(launcher.template)[0]
    kind = program.rsplit("/", 1)[-1]
    if kind not in MPMD_LAUNCHERS:
        raise InputError(f"{launcher.template!r}: nodes of several kinds are launched with mpiexec or srun "
                         f"(one group of ranks per kind)", field="launcher")
    out = [program]
    for i, (ranks, threads) in enumerate(groups):
        if i:
            out.append(":")
        if kind == "srun":
            out += ([f"--mpi={pmi}"] if i == 0 else []) + [
                "-N", str(ranks), "-n", str(ranks), "-c", str(threads), f"--export=ALL,OMP_NUM_THREADS={threads}"]
        else:
            out += ["-n", str(ranks), "-env", "OMP_NUM_THREADS", str(threads)]
        out += list(prefixes[i] if prefixes else []) + list(command)
    return out

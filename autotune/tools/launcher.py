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

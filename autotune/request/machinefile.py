"""Requests that make or refit a machine file: `calibrate --node` (this host measured),
`calibrate --from-kerncraft FILE` (a kerncraft machine file imported) and `calibrate
--from-runs` (the node model fitted to the stored runs).  Every rule between their options is
checked here, once, for every front end (the communication calibration's is request.calibrate)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from autotune.errors import InputError
from autotune.request.keywords import Keywords
from autotune.request.values import name_list

FOLDS = ("scenario", "size", "ivp")


@dataclass(frozen=True)
class NewMachineRequest(Keywords):
    """A new cluster machine file: of this host (from_kerncraft None: CPU identified, caches from
    the OS, bandwidths measured for min_seconds each; dry_run: identify only) or of a kerncraft
    machine file; name: the new machine's (or a .yaml path), written to the user's machine folder
    or `out`; nodes: the cluster's; uarch and port_model as for the CPU's identification."""
    PRIMARY = "name"

    name: str
    nodes: int = 1
    from_kerncraft: Path | None = None
    uarch: str | None = None
    port_model: Path | None = None
    min_seconds: float = 0.1
    dry_run: bool = False
    out: Path | None = None

    def __post_init__(self):
        if self.from_kerncraft is not None and self.port_model is not None:
            raise InputError(f"{self.port_model}: only with --node", field="port_model")
        s = self.min_seconds
        if isinstance(s, bool) or not isinstance(s, (int, float)) or not math.isfinite(s) or not s > 0:
            raise InputError(f"{s}: expected a positive number", field="min_seconds")


def new_machine_request(node: bool = False, from_kerncraft=None, name: str | None = None,
                        machine: str | None = None, **rest) -> NewMachineRequest:
    """calibrate --node / --from-kerncraft FILE: the name given once (--name, or --machine)."""
    if node and from_kerncraft:
        raise InputError(f"{from_kerncraft}: either --node or --from-kerncraft", field="from_kerncraft")
    if name and machine and name != machine:
        raise InputError(f"{machine}: give the new machine's name once (--name)", field="machine")
    if not (name or machine):
        raise InputError(": expected the new machine's name", field="name")
    return NewMachineRequest.of(name or machine, from_kerncraft=from_kerncraft, **rest)


@dataclass(frozen=True)
class LearnRequest(Keywords):
    """calibrate --from-runs: the machine whose stored runs are fitted, how they are folded for
    the cross-validation, the IVPs no fit sees (holdout), and where the factors go (dry_run: not
    written; out: another file than the machine's)."""
    PRIMARY = "machine"

    machine: str
    folds: str = "scenario"
    holdout: tuple[str, ...] = ()
    dry_run: bool = False
    out: Path | None = None

    def __post_init__(self):
        from autotune.specs.ivp import ivp_names
        if self.folds not in FOLDS:
            raise InputError(f"{self.folds}: expected one of {', '.join(FOLDS)}", field="folds")
        holdout = name_list(self.holdout) or ()
        unknown = [x for x in holdout if x not in ivp_names()]
        if unknown:
            raise InputError(f"{unknown[0]}: unknown IVP (known: {', '.join(ivp_names())})", field="holdout")
        object.__setattr__(self, "holdout", tuple(holdout))


def check_comm_only(name=None, uarch=None, port_model=None, folds=None, holdout=None, from_runs: bool = False,
                    machine=None) -> None:
    """calibrate without --node or --from-kerncraft: the options of those are refused, a machine
    is required, and --from-runs' options come only with it."""
    for flag, value in (("name", name), ("uarch", uarch)):
        if value:
            raise InputError(f"{value}: only with --node or --from-kerncraft", field=flag)
    if port_model:
        raise InputError(f"{port_model}: only with --node", field="port_model")
    if not machine:
        raise InputError(": expected a machine to calibrate (or --node / --from-kerncraft to make one)",
                         field="machine")
    if not from_runs:
        for flag, value in (("folds", folds), ("holdout", holdout)):
            if value not in (None, "scenario"):
                raise InputError(f"{value}: only with --from-runs", field=flag)

"""Learned node parameters as a machine file holds them (`cluster.learned`, written by
`calibrate --from-runs`): factors on the terms of kerncraft's ECM model, by parameter name
"<class>/<term>", one per kernel class (RHS, LC, APPROX+UPDATE, COPY) and term:

- "<class>/core": the port-model terms (T_comp, T_RegL1) of the class's kernel parts;
- "<class>/L1-L2", "<class>/L2-L3", ...: the cycles kerncraft gives the transfers across one
  memory-hierarchy interface;
- "<class>/L3-MEM:copy", "<class>/L3-MEM:triad", ...: the transfer from main memory, priced by
  the bandwidth of the benchmark kernel kerncraft matched to the part's streams (each such
  bandwidth is a measurement of its own).

- "clock": the machine file's clock over the clock the cores run at, on every term counted in
  core cycles (in-core and cache transfers; not the memory transfer, whose cycles are bytes over
  a bandwidth): one number for what a virtual machine's or a turbo clock hides from the file.

By class, because the classes differ in what kerncraft cannot see: the solver's LC, update and
copy sweeps are the same code for every IVP, the RHS is the IVP's own.  How the factors are
applied is model.learned; how they are fitted, model.learnfit.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from autotune.specs.step import CORE_CLASS   # the in-core class of every kernel group
CLOCK = "clock"
_TERM = re.compile(r"core|L\d+-(L\d+|MEM(:[a-z0-9_]+)?)")


@dataclass(frozen=True)
class Learned:
    """Fitted factors (parameter -> factor; a parameter not named keeps 1) and what they rest on."""
    factors: dict = field(hash=False)
    runs: int
    scenarios: int
    kerncraft: str            # the kerncraft version of the analyses the fit priced
    node_digest: str          # the machine file's node part at the fit (Machine.kerncraft_digest)
    date: str = ""

    def label(self) -> str:
        return f"ecm+learned ({self.runs} runs)"


def parameter(kernel: str, term: str) -> str:
    """The name of the factor on one term ("core", "L2-L3", "L3-MEM:copy") of a kernel group's parts."""
    return f"{CORE_CLASS[kernel]}/{term}"


def valid_parameter(name: str) -> bool:
    if name == CLOCK:
        return True
    cls, _, term = name.partition("/")
    return cls in set(CORE_CLASS.values()) and _TERM.fullmatch(term) is not None

"""Learned node parameters as a machine file holds them (`cluster.learned`, written by
`calibrate --from-runs`): factors on the terms of kerncraft's ECM model, by parameter name.

- "L1-L2", "L2-L3", ...: one per memory-hierarchy interface, scaling the cycles kerncraft
  gives the transfers across it; the transfer from main memory has one per benchmark kernel
  whose bandwidth kerncraft priced it with ("L3-MEM:copy", "L3-MEM:triad", ...);
- "core:RHS", "core:LC", "core:APPROX+UPDATE", "core:COPY": one per in-core class, scaling the
  port-model terms (T_comp, T_RegL1) of the kernel parts of that class.

How they are applied is model.learned; how they are fitted, model.learnfit.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

# the in-core class of every kernel group: what a fused sweep computes is dominated by its RHS
CORE_CLASS = {"LC": "LC", "LCD": "LC", "RHS": "RHS", "RHSALL": "RHS", "RHSLC": "RHS", "RHSLCD": "RHS",
              "RHSAU": "RHS", "APPROX": "APPROX+UPDATE", "UPDATE": "APPROX+UPDATE", "COPY": "COPY",
              "PACK": "COPY"}
_INTERFACE = re.compile(r"L\d+-(L\d+|MEM(:[a-z0-9_]+)?)")


@dataclass(frozen=True)
class Learned:
    """Fitted factors (parameter -> factor; a parameter not named keeps 1) and what they rest on."""
    factors: dict
    runs: int
    scenarios: int
    kerncraft: str            # the kerncraft version of the analyses the fit priced
    node_digest: str          # the machine file's node part at the fit (Machine.kerncraft_digest)
    date: str = ""

    def label(self) -> str:
        return f"ecm+learned ({self.runs} runs)"


def core_parameter(kernel: str) -> str:
    return f"core:{CORE_CLASS[kernel]}"


def valid_parameter(name: str) -> bool:
    if name.startswith("core:"):
        return name[5:] in set(CORE_CLASS.values())
    return _INTERFACE.fullmatch(name) is not None

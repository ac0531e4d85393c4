"""Result of `generate`: what was written for every variant of an IVP."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from autotune.results.frames import frame
from autotune.results.registry import result_type


@result_type
@dataclass
class GenerateResult:
    ivp: str
    method: str
    out: str
    n: int
    parts: int                 # distinct kernel parts written (kernels/)
    solvers: int               # solvers written (solvers/): the variants whose scheme is generated
    variants: list[str]
    not_generated: dict[str, str] = field(default_factory=dict)   # a variant the IVP cannot run -> why

    def to_dict(self) -> dict:
        return asdict(self)

    def to_frame(self):
        """One row per variant."""
        return frame([{"ivp": self.ivp, "n": self.n, "name": v} for v in self.variants], ["ivp", "n", "name"])

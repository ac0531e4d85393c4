"""One variant's result in a ranked scenario: its prediction (or the parts that failed), its
step's communication phases and barriers, as rank, explain and tune read them."""
from __future__ import annotations

import math
from dataclasses import dataclass

from autotune.model.compare import predicted_phases, predicted_sweeps
from autotune.model.ecm import Prediction
from autotune.specs.variants import Variant


def number(x):
    """A figure as JSON can hold it: None for none, and for an infinite one."""
    if x is None or (isinstance(x, float) and math.isinf(x)):
        return None
    return x


@dataclass(slots=True)
class VariantResult:
    variant: Variant
    prediction: Prediction | None     # None: a kernel part could not be analysed
    failed_parts: list[str]
    comm_phases: int
    barriers: int

    @property
    def name(self) -> str:
        return self.variant.name

    @property
    def predicted_s(self) -> float | None:
        """Predicted seconds per time step."""
        return self.prediction.total_s if self.prediction else None

    def predicted_phases(self, timers: tuple = ()) -> dict[str, float]:
        """Predicted seconds per step by solver phase (what `tune` times), {} without a prediction;
        timers: the step's sweep timers (specs.step.StepForm.timers), each predicted too."""
        if self.prediction is None:
            return {}
        out = predicted_phases([(c.term.kernel, c.seconds) for c in self.prediction.kernels],
                               self.prediction.comm_s - self.prediction.hidden_s)
        if timers:   # the fused sweeps, one by one (what the solver's sweep timers measure)
            out.update(predicted_sweeps([(c.term.kernel, c.seconds, c.term.executions)
                                         for c in self.prediction.kernels], timers))
        return out

    def kernel_rows(self) -> list[dict]:
        if self.prediction is None:
            return []
        return [{
            "name": c.term.name, "kernel": c.term.kernel, "regime": c.term.regime,
            "alpha": c.term.alpha, "sigma": number(c.term.sigma), "beta": c.term.beta,
            "executions": c.term.executions, "cores_used": number(c.cores_used),
            "seconds": c.seconds,
        } for c in self.prediction.kernels]

    def to_dict(self, rank_no: int, preselected: bool, bound_s: float | None = None) -> dict:
        p = self.prediction
        return {
            "name": self.variant.name, "rank": rank_no, "lc": self.variant.lc, "comm": self.variant.comm,
            "configuration": self.variant.fields(),
            "predicted_s": p.total_s if p else None,
            "node_s": p.node_s if p else None,
            "comm_s": p.comm_s if p else None,
            "barrier_s": p.barrier_s if p else None,
            "preselected": preselected,
            "failed_kernels": self.failed_parts,
            "comm_phases": self.comm_phases, "barriers": self.barriers,
            "kernels": self.kernel_rows(),
            "bound_ratio": p.total_s / bound_s if p and bound_s else None,
            **({"control_s": p.control_s} if p and p.control_s else {}),   # step-size control's, per accepted step
        }

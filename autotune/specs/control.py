"""Step-size control: the tolerances a run asks for, the estimate of the error the generated solver
takes, and the controller that turns it into the next step (docs/method.md, "Step-size control").
Pure.

The estimate is the difference of the last two corrector iterates' approximations.  With the
predictor Y^(0) = y and m corrector iterations, the step's result y^(m+1) = y + h sum_i b_i
F(Y_i^(m)) has order min(p, m + 1); the approximation one iteration earlier, y^(m) = y + h
sum_i b_i F(Y_i^(m-1)), has order min(p, m).  Where the method is stiffly accurate (its last row
of A is b: Radau IIA, Lobatto IIIC), y^(m) is the last argument vector Y_s^(m), which every form
holds after the step: the estimate y^(m+1) - Y_s^(m) costs no right-hand side.  It estimates the
error of the order-m approximation, so the method needs m < p (else both are the corrector's
solution and the difference says nothing about the method's own error).  The step is controlled
with the order-m exponent (local extrapolation: the run goes on with y^(m+1)).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from autotune.errors import InputError
from autotune.specs.method import Method

# Hairer, Norsett and Wanner's controller (Solving ODEs I, II.4): h_new = h min(FACMAX, max(FACMIN,
# SAFETY err^(-1/(q+1)))), no growth right after a rejection
SAFETY = 0.9
FACMIN = 0.2
FACMAX = 5.0
MAX_REJECTS = 50        # rejections of one step in a row before the run gives up


@dataclass(frozen=True)
class Control:
    """A run's tolerances: err = sqrt(mean(((y_new - y_low) / (atol + rtol max(|y|, |y_new|)))^2)) <= 1."""
    rtol: float
    atol: float
    rejected: float = 0.0     # rejected attempts per accepted step: what runs of the scenario reported (0: none)

    def __post_init__(self):
        for field in ("rtol", "atol"):
            _check_tolerance(getattr(self, field), field)
        if not (isinstance(self.rejected, (int, float)) and self.rejected >= 0):
            raise InputError(f"{self.rejected}: expected a rate >= 0", field="rejected")

    def tolerances(self) -> dict:
        """{rtol, atol}: what a solver, a plan or a run's store key is controlled by."""
        return {"rtol": self.rtol, "atol": self.atol}

    def to_dict(self) -> dict:
        return {**self.tolerances(), "rejected_per_step": self.rejected}

    def describe(self) -> str:
        """What a ranking under this control prices (its note)."""
        return (f"step control (rtol {self.rtol:g}, atol {self.atol:g}): seconds per accepted step, with the "
                f"control's own work and {self.rejected:.3g} rejected attempts per accepted step ("
                + ("the rate its runs reported" if self.rejected else
                   "no rejection reported yet: a tune of it measures the rate") + ")")


def _check_tolerance(value, field: str) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not 0 < value < 1:
        raise InputError(f"{value}: expected a tolerance between 0 and 1", field=field)


def control_of(rtol: float | None, atol: float | None) -> Control | None:
    """The control a run asks for: None (fixed step) where neither tolerance is given; atol defaults
    to rtol, rtol to atol (each checked as given)."""
    if rtol is None and atol is None:
        return None
    for value, field in ((rtol, "rtol"), (atol, "atol")):
        if value is not None:
            _check_tolerance(value, field)
    return Control(float(rtol if rtol is not None else atol), float(atol if atol is not None else rtol))


def estimate_order(method: Method) -> int:
    """q: the order of the lower approximation the estimate compares with (the controller's
    exponent is 1 / (q + 1)); an InputError where the method has no free estimate."""
    last = method.A[-1]
    if any(abs(a - b) > 1e-12 * max(1.0, abs(b)) for a, b in zip(last, method.b)):
        raise InputError(f"{method.name}: step-size control needs a stiffly accurate method (its last stage the "
                         f"step's end: Radau IIA, Lobatto IIIC); {method.family} has no free error estimate",
                         field="method")
    if method.iterations >= method.order:
        raise InputError(f"{method.name}: step-size control needs fewer corrector iterations ({method.iterations}) "
                         f"than the method's order ({method.order}): the estimate compares the last two",
                         field="method")
    return method.iterations


def render_context(control: Control | None, method: Method) -> dict | None:
    """What the solver templates read (variants/driver.c.j2, solver.c.j2): None for a fixed step."""
    if control is None:
        return None
    return {"rtol": repr(control.rtol), "atol": repr(control.atol), "exponent": estimate_order(method) + 1,
            "safety": repr(SAFETY), "facmin": repr(FACMIN), "facmax": repr(FACMAX), "max_rejects": MAX_REJECTS}

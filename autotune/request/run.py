"""How to run variants for real (tune): options with their defaults, declared once, checked, and
resolved for one scenario into a run plan."""
from __future__ import annotations

import shlex
from dataclasses import dataclass

from autotune.errors import InputError
from autotune.model.race import RacePolicy
from autotune.tools.launcher import Launcher, parse_launcher

AUTO = "auto"        # reps: race the repetitions (model.race) instead of a fixed number

DEFAULT_FLAGS = "-O3 -march=native -fopenmp"     # generate's build commands (no machine there)


def machine_flags(isa_flags: tuple[str, ...] | list[str]) -> str:
    """tune's default flags: the machine file's instruction set, so the solvers run the code the
    analysis assumed (-march=native where the file names none)."""
    return " ".join(["-O3", *(isa_flags or ["-march=native"]), "-fopenmp"])


@dataclass(frozen=True)
class RunPlan:
    """Run options resolved for one scenario: the step size known, flags split, launcher parsed."""
    steps: int
    warmup: int
    reps: int
    h: float
    flags: tuple[str, ...]
    launcher: Launcher
    timeout: float
    replay: bool = False            # report the store's repetitions instead of running (tune --replay)
    race: RacePolicy | None = None  # reps auto: race them (reps is then the most rounds a variant runs)


@dataclass(frozen=True)
class RunOptions:
    steps: int = 10
    warmup: int = 2
    reps: int | str = 3             # an integer, or "auto": race (model.race)
    h: float | None = None          # None: the IVP's step_size
    flags: str | None = None        # None: the machine's instruction set (machine_flags)
    launcher: str | None = None     # None: mpiexec -n {procs}
    timeout: float = 600.0
    replay: bool = False            # the store's repetitions instead of runs (not part of a plan file)
    budget: str | None = None       # racing's budget: "N" runs or "Ns" seconds (None: none)
    online: bool = False            # one solver carries the chosen variants and picks while it runs (tune --online)
    recheck: int = 0                # online: a trial again every so many steps (0: the first only)

    def __post_init__(self):
        if isinstance(self.recheck, bool) or not isinstance(self.recheck, int) or self.recheck < 0:
            raise InputError(f"{self.recheck}: expected 0 (no re-check) or a number of steps", field="recheck")
        if self.recheck and not self.online:
            raise InputError(f"{self.recheck}: a re-check is of the online solver's trial; give --online",
                             field="recheck")
        if self.online and self.replay:
            raise InputError(": not with --online, which runs one solver for real", field="replay")
        for field in ("steps", "reps"):
            v = getattr(self, field)
            if field == "reps" and v == AUTO:
                continue
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise InputError(f"{v}: expected an integer >= 1" + (" or 'auto'" if field == "reps" else ""),
                                 field=field)
        if self.budget is not None:
            object.__setattr__(self, "budget", str(self.budget))
            if self.reps != AUTO:
                raise InputError(f"{self.budget}: a budget is for racing; give --reps auto", field="budget")
            parse_budget(self.budget)
        if isinstance(self.warmup, bool) or not isinstance(self.warmup, int) or self.warmup < 0:
            raise InputError(f"{self.warmup}: expected an integer >= 0", field="warmup")
        if self.warmup >= self.steps:
            raise InputError(f"{self.warmup}: expected fewer warm-up steps than steps ({self.steps})", field="warmup")
        if self.h is not None and not (isinstance(self.h, (int, float)) and self.h > 0):
            raise InputError(f"{self.h}: expected a step size > 0", field="h")
        if not (isinstance(self.timeout, (int, float)) and self.timeout > 0):
            raise InputError(f"{self.timeout}: expected seconds > 0", field="timeout")
        try:
            shlex.split(self.flags or "")
        except (ValueError, AttributeError) as e:
            raise InputError(f"{self.flags!r}: {e}", field="flags") from None
        parse_launcher(self.launcher)

    @property
    def fixed_reps(self) -> int:
        """The repetitions a fixed design runs: reps, or for a race the most rounds one variant runs."""
        return RacePolicy().max_rounds if self.reps == AUTO else self.reps

    def plan(self, default_h: float | None = None, isa_flags: tuple[str, ...] = ()) -> RunPlan:
        """The plan for one scenario; default_h: the IVP's step size (used where h is None);
        isa_flags: the machine's (the flags where none were given)."""
        h = self.h if self.h is not None else default_h
        if h is None:
            raise InputError(": the IVP gives no step_size; give one", field="h")
        race = None
        if self.reps == AUTO:
            runs, seconds = parse_budget(self.budget)
            race = RacePolicy(budget_runs=runs, budget_s=seconds)
        return RunPlan(self.steps, self.warmup, race.max_rounds if race else self.reps, float(h),
                       tuple(shlex.split(self.flags or machine_flags(isa_flags))),
                       parse_launcher(self.launcher), float(self.timeout), bool(self.replay), race)

    def to_dict(self) -> dict:
        return {"steps": self.steps, "warmup": self.warmup, "reps": self.reps, "flags": self.flags,
                "h": self.h, "launcher": self.launcher, "timeout": self.timeout,
                **({"budget": self.budget} if self.budget else {}),
                **({"online": True, "recheck": self.recheck} if self.online else {})}


def parse_budget(text: str | None) -> tuple[int | None, float | None]:
    """(runs, seconds) of a racing budget: "40" is 40 runs, "90s" 90 seconds, None none."""
    if text is None:
        return None, None
    t = str(text).strip()
    try:
        if t.endswith("s"):
            seconds = float(t[:-1])
            if seconds > 0:
                return None, seconds
        else:
            runs = int(t)
            if runs >= 1:
                return runs, None
    except ValueError:
        pass
    raise InputError(f"{text}: expected a number of runs (40) or of seconds (90s), > 0", field="budget")

"""tune's measurement rounds (docs/tuning.md): every variant still running runs once per round,
in order, with the reference kernels (pipeline.tunestate) measured twice before the first round
and once after each; a round whose probe after it strays from the median of the run's probes
(model.state.strays) is set aside and taken again after a probe of its own, within a limit; with
racing (model.race) a variant leaves once it cannot be the best, otherwise every variant runs
the plan's fixed repetitions.

Each run is recorded in its variant's row (results.tune.TuneRow) as it ends: runs_s (seconds per step, the rounds
kept), runs_round (their rounds), runs_state (the state of each: the median of the probes around
its round), noisy_runs_s (the runs of rounds set aside) and, where the race let it go, race (the
verdict it left on).
"""
from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field, replace
from typing import Callable

from autotune.errors import InputError, ToolError
from autotune.model.race import RacePolicy, RaceState, step
from autotune.model.state import retake_limit, steal_why, strays
from autotune.progress import Progress
from autotune.pipeline.tunestate import Probe, state_of
from autotune.request.run import RunPlan
from autotune.results.tune import TuneRow


@dataclass
class RoundLog:
    """What the rounds did, beside the rows: the probes, the noisy rounds, how the race ended."""
    probes: list[dict] = field(default_factory=list)     # {"round" (after which; -1: before the first), ...}
    noisy: list[dict] = field(default_factory=list)      # {"round", "why", "retaken"}
    race: RaceState | None = None
    policy: RacePolicy | None = None                     # the race's, its budget resolved
    rounds: int = 0
    runs: int = 0
    run_s: float = 0.0                                   # wall seconds of the solver runs
    probe_s: float = 0.0                                 # wall seconds of the reference kernels


def _by_round(rows: dict[str, TuneRow], names: list[str]) -> dict[str, dict[int, float]]:
    return {name: dict(zip(rows[name].runs_round, rows[name].runs_s)) for name in names}


def run_rounds(ready: list[str], rows: dict[str, TuneRow], phase_runs: dict[str, dict], runner, plan: RunPlan,
               progress: Progress, probe: Probe | None,
               done: Callable[[str], None], partial: Callable[[str], None],
               placed: dict[str, dict] | None = None) -> RoundLog:
    """Run the rounds of the variants in `ready` (rows hold repetitions a resumed run measured
    before); done(name) when a variant's measurement is complete (it left the race, or the runs
    ended), partial(name) after each run of one that goes on.  A variant whose run fails leaves
    (its row's error set; done is called).  placed: where each variant's last run ran, as the
    runner reports it (a name is set before its done)."""
    race = plan.race.budgeted(len(ready)) if plan.race else None
    log = RoundLog(policy=race)
    alive, gone = list(ready), {}
    planned = race.max_rounds if race else plan.reps
    # noisy rounds taken again: one in three of the rounds the design expects to run (a race
    # with a budget of runs: the rounds that budget pays for, not its most rounds)
    limit = retake_limit(min(planned, -(-race.budget_runs // max(1, len(ready))))
                         if race and race.budget_runs else planned)
    placed = {} if placed is None else placed
    for name in ready:      # a resumed run's repetitions are its first rounds (their steal not known)
        row = rows[name]
        row.runs_round = row.runs_round or list(range(len(row.runs_s)))
        for runs in (row.runs_steal_pct, row.runs_wall_over_cpu):
            runs[:] = ([None] * len(row.runs_s) + runs)[-len(row.runs_s):] if row.runs_s else []
    def state_now(after_round: int) -> dict | None:
        """One probe; a failing one ends the probing (the rest of the run goes unadjusted)."""
        nonlocal probe
        if probe is None:
            return None
        try:
            return _probe(probe, log, after_round)
        except ToolError as e:
            progress.say(f"machine state: the reference kernels failed ({e}); the runs from here on carry no state")
            probe = None
            return None

    state_now(-1)   # two before the first round: its own probe after it then has a median to stray from
    state_now(-1)
    r, finished = 0, set()
    while alive:
        before = log.probes[-1] if log.probes else None
        ran: dict[str, dict] = {}
        for name in list(alive):
            if r in rows[name].runs_round or r >= runner.available(name):
                continue
            progress.say(f"run {r + 1}/{planned if race is None else str(planned) + ' at most'}: {name} "
                     f"({plan.steps} steps)")
            out = _run_once(runner, name, r, rows[name], phase_runs[name], log, limit, progress)
            if out is None:
                alive.remove(name)
                progress.say(f"{name}: failed: {rows[name].error}")
                finished.add(name)
                done(name)
                continue
            ran[name] = out
            if out.get("placement"):
                placed[name] = out["placement"]
            if race is None and probe is None and len(rows[name].runs_s) >= plan.reps:
                finished.add(name)      # stored as soon as its last repetition ends
                done(name)
            else:
                partial(name)           # a job cancelled now keeps this repetition
        after = state_now(r)
        why = strays(after, log.probes) if after and ran else None
        if why:
            retaken = _retakes(log) < limit
            log.noisy.append({"round": r, "why": why, "retaken": retaken})
            progress.say(f"round {r + 1}: the reference kernels strayed ({why} from the run's median): "
                     + ("its runs are set aside and taken again" if retaken else "kept, marked (no retake left)"))
            if retaken:
                for name in ran:
                    _set_aside(rows[name], phase_runs[name], ran[name])
                    partial(name)
                state_now(r)                # the retake's own probe before it (the last one strayed)
                continue
        if after:
            state = state_of(probe.ref, [before, after])
            for name in ran:
                rows[name].runs_state[-1] = {"bandwidth_Bps": state.bandwidth_Bps, "clock_hz": state.clock_hz}
                if name not in finished:
                    partial(name)       # the repetition again, with its state
        r += 1
        log.rounds = r
        spent = all(r >= runner.available(name) for name in alive)    # a replay's stored runs
        if race:
            kept = sum(len(rows[name].runs_s) for name in ready)     # a set-aside round's runs are the noise's
            st = step(_by_round(rows, alive + list(gone)), alive, gone, r, kept, log.run_s + log.probe_s, race)
            if spent and not st.stop:
                st = replace(st, stop="the stored runs are spent")
            for name in set(st.verdicts) - set(gone):
                v = st.verdicts[name]
                rows[name].race = {"rounds": r, "out": v.out, "ratio": v.ratio, "low": v.low, "high": v.high,
                                      "against": st.leader}
                progress.say(f"race: {name} leaves after {r} rounds ({v.out}: {v.ratio:.3f} x {st.leader}, "
                         f"{race.confidence:g} bounds {v.low:.3f} .. {v.high:.3f})")
                finished.add(name)
                done(name)
            alive, gone, log.race = st.alive, dict(st.verdicts), st
            if st.stop:
                progress.say(f"race ends after {r} rounds: {st.stop}; best {st.leader}")
                break
        elif r >= plan.reps or spent:
            break
    for name in alive:
        if name not in finished:
            done(name)
    return log


def _retakes(log: RoundLog) -> int:
    return sum(1 for n in log.noisy if n["retaken"])


def _run_once(runner, name: str, r: int, row: TuneRow, phases: dict, log: RoundLog, limit: int,
              progress: Progress) -> dict | None:
    """One run of a variant in round r, recorded in its row; a run that lost more of the host's
    CPU time to steal than model.state.STEAL_MAX_PCT is set aside and run again at once, within the
    run's limit of retakes (its steal is the run's own: the other variants' runs of the round stand).
    None: the run failed (row.error says why)."""
    while True:
        t0 = time.perf_counter()
        try:
            out = runner.run(name, r)
        except (InputError, ToolError) as e:
            row.error = str(e)
            return None
        finally:
            log.run_s += time.perf_counter() - t0
            log.runs += 1
        _record(row, phases, out, r)
        why = steal_why([out.get("steal_pct")])
        if why is None:
            return out
        retaken = _retakes(log) < limit
        log.noisy.append({"round": r, "why": why, "retaken": retaken, "variant": name})
        progress.say(f"run {r + 1}: {name}: {why}: " + ("set aside and taken again" if retaken
                                                         else "kept, marked (no retake left)"))
        if not retaken:
            return out
        _set_aside(row, phases, out)


def _probe(probe: Probe, log: RoundLog, after_round: int) -> dict:
    got = dict(probe.measure(), round=after_round)
    log.probes.append(got)
    log.probe_s += got["seconds"]
    return got


def added_run(summary: dict | None, run: dict) -> dict:
    """A controlled run's steps (the solver's "control") added to its variant's summary: accepted and
    rejected steps, those of the timed steps (after the warm-up, while the controller still finds
    its step size), the timed ones' rejected per accepted step, and the median over the runs of the
    timed steps' seconds per unit of simulated time."""
    s = dict(summary or {"accepted": 0, "rejected": 0, "timed_accepted": 0, "timed_rejected": 0,
                         "runs_s_per_time": []})
    s["accepted"] += run["accepted"]
    s["rejected"] += run["rejected"]
    s["timed_accepted"] += run["timed_steps"]
    s["timed_rejected"] += run["timed_rejected"]
    s["rejected_per_step"] = s["timed_rejected"] / s["timed_accepted"] if s["timed_accepted"] else None
    if run.get("timed_t"):
        s["runs_s_per_time"] = s["runs_s_per_time"] + [run["timed_s"] / run["timed_t"]]
    s["s_per_time"] = statistics.median(s["runs_s_per_time"]) if s["runs_s_per_time"] else None
    return s


def _record(row: TuneRow, phases: dict, out: dict, r: int) -> None:
    """One run into its row (its state: a replay's stored one, else set when the round's probe is in)."""
    row.runs_s.append(out["median_step_s"])
    row.runs_round.append(r)
    row.runs_state.append(out.get("state"))
    row.runs_steal_pct.append(out.get("steal_pct"))
    row.runs_wall_over_cpu.append(out.get("wall_over_cpu"))
    if out.get("control"):
        row.control = added_run(row.control, out["control"])
    for phase, sec in out.get("phases_s", {}).items():
        phases.setdefault(phase, []).append(sec)


def _set_aside(row: TuneRow, phases: dict, out: dict) -> None:
    """The run just recorded, out of its row again: its round was noisy."""
    row.noisy_runs_s.append(row.runs_s.pop())
    row.runs_round.pop()
    row.runs_state.pop()
    row.runs_steal_pct.pop()
    row.runs_wall_over_cpu.pop()
    for phase in out.get("phases_s", {}):
        phases[phase].pop()

"""What `tune` measures a variant with: a runner builds (prepares) and runs one repetition of
it.  Three kinds, found by name in RUNNERS:

    local    build here, run with the launcher on this host (mpiexec -n {procs}, or a template)
    srun     build here, run with srun on the allocation's nodes (a login node may lack the
             CPU extensions the build flags use: a warning there, an error inside the job)
    replay   the repetitions the store holds of the same scenario, variant and flags, in order:
             no build, no run, nothing stored again (tune --replay; the tests of tune's logic)

The edge: builds and launches happen here, tune's selection and summary are elsewhere.
"""
from __future__ import annotations

import hashlib
import json
import os
import time
from typing import Protocol

from autotune.progress import Progress
from autotune.errors import InputError, ToolError
from autotune.pipeline.tunerecord import row_of_stored
from autotune.request.run import RunPlan
from autotune.results.tune import TuneRow
from autotune.specs.scenario import Scenario
from autotune.specs.variants import Variant
from autotune.storage.store import Store
from autotune.tools.slurm import controller_unreachable


class Runner(Protocol):
    kind: str
    stores: bool                  # its measurements go to the store (a replay's are there already)
    compiler: str | None          # the compiler that built the solvers (None: none built)

    def check(self, names: list[str]) -> None:
        """Before anything is built: InputError for what it cannot run at all."""

    def prepare(self, variant: Variant) -> None:
        """Build the variant (InputError / ToolError: it cannot be run); run() names it by its name."""

    def run(self, name: str, rep: int) -> dict:
        """One repetition: {"median_step_s": s, "phases_s": {phase: s}} (InputError / ToolError)."""

    def available(self, name: str) -> int:
        """How many repetitions of the variant it can give (a replay: those stored)."""

    def probe_prefix(self) -> list[str] | None:
        """The argv prefix that runs a reference kernel where the solvers run (None: none can be run)."""


def run_key(sc: Scenario, name: str, flags) -> str:
    """Store key of one variant's measurement in one scenario (a resumed plan skips it); a
    controlled one's names its tolerances (a fixed step's key is as it was)."""
    return run_key_of(sc.machine.name, sc.ivp.name, sc.method.name, sc.n, sc.nodes, sc.threads, name, flags,
                      sc.control.tolerances() if sc.control else None)


def run_key_of(machine: str, ivp: str, method: str, n: int, nodes: int, threads: int, name: str, flags,
               control: dict | None = None) -> str:
    """control: step-size control's tolerances ({rtol, atol}; None: a fixed step, whose key is as it was)."""
    key = hashlib.sha256(json.dumps([machine, ivp, method, n, nodes, threads, name,
                                     list(flags)]).encode()).hexdigest()[:24]
    if control is None:
        return key
    return hashlib.sha256(json.dumps([key, control["rtol"], control["atol"]]).encode()).hexdigest()[:24]


UNLIMITED = 1 << 30     # repetitions a runner that runs for real can give


class LaunchRunner:
    """Build with mpicc and the plan's flags; run with the plan's launcher."""
    kind = "local"
    stores = True

    def __init__(self, sc: Scenario, plan: RunPlan, store: Store, progress: Progress):
        self.sc, self.plan, self.progress = sc, plan, progress
        self.compiler: str | None = None
        self._exes: dict = {}

    def _runs_here(self) -> bool:
        return True

    def available(self, name: str) -> int:
        return UNLIMITED

    def probe_prefix(self) -> list[str] | None:
        """The reference kernels run on this host, where the local launcher runs the solvers."""
        return []

    def check(self, names: list[str]) -> None:
        """The solvers are built here with the plan's flags; a CPU that lacks an extension they
        use would die of an illegal instruction: an error where the runs happen on this host,
        elsewhere (srun from a login node) a warning."""
        from autotune.specs.isa import isa_part
        from autotune.tools.cpuprobe import host_cpu, missing_on_host
        missing = missing_on_host(self.plan.flags) if names else []
        if not missing:
            return
        msg = (f"the build flags {' '.join(isa_part(self.plan.flags))} (machine {self.sc.machine.name}) use "
               f"{', '.join(missing)}, which this host's CPU ({host_cpu().describe()}) lacks: make a machine "
               f"file of this host with `autotune calibrate --node --name NAME`, or give --flags")
        if self._runs_here():
            raise InputError(msg, field="flags")
        self.progress.say(f"warning: {msg}")

    def prepare(self, variant: Variant) -> None:
        from autotune.codegen.solver import solver_source
        from autotune.tools import build as buildmod
        sc = self.sc
        self.compiler = self.compiler or buildmod.find_mpicc()
        self._exes[variant.name] = buildmod.build(solver_source(sc.ivp, sc.method, variant, sc.n, sc.machine,
                                                                control=sc.control),
                                                  self.plan.flags, self.compiler)

    def run(self, name: str, rep: int) -> dict:
        """One run; where its processes are this host's children (the local launcher), with the
        steal share of the host's CPU time and the wall over CPU time it had (tools.cpustat)."""
        from autotune.tools import build as buildmod
        from autotune.tools import cpustat
        sc, plan = self.sc, self.plan
        before = cpustat.sample() if self.kind == "local" else None
        out = buildmod.run(self._exes[name], plan.launcher, sc.nodes, sc.threads, sc.n, sc.ivp.size_value(sc.n),
                           plan.steps, plan.h, plan.warmup, timeout=plan.timeout,
                           pin=sc.ranks_per_node == 1, nodes=sc.nodes // sc.ranks_per_node)
        if before is not None:
            out.update(cpustat.between(before, cpustat.sample(), sc.nodes * sc.threads))
        return out


class SrunRunner(LaunchRunner):
    """LaunchRunner through srun.  A launch that failed because the controller could not be
    reached (restarted mid-plan) never started: it is tried again for up to RETRY_S seconds before
    the run counts as failed (which would cost the scenario a new job)."""
    kind = "srun"
    RETRY_S = 180.0
    PAUSES_S = (2.0, 5.0, 10.0, 20.0)

    def _runs_here(self) -> bool:
        return "SLURM_JOB_ID" in os.environ

    def probe_prefix(self) -> list[str] | None:
        """One task on the allocation's first node, with the cores of the node's threads (the
        reference kernels set their own OpenMP threads)."""
        cores = self.sc.node_threads
        return ["srun", "--nodes=1", "--ntasks=1", f"--cpus-per-task={cores}"] if self._runs_here() else None

    def run(self, name: str, rep: int) -> dict:
        waited, attempt = 0.0, 0
        while True:
            try:
                return super().run(name, rep)
            except ToolError as e:
                pause = self.PAUSES_S[min(attempt, len(self.PAUSES_S) - 1)]
                if not controller_unreachable(str(e)) or waited + pause > self.RETRY_S:
                    raise
                self.progress.say(f"srun could not reach the Slurm controller; trying again in {pause:g} s")
                time.sleep(pause)
                waited, attempt = waited + pause, attempt + 1


class ReplayRunner:
    """The store's repetitions of each variant, as they were measured."""
    kind = "replay"
    stores = False
    compiler = None

    def __init__(self, sc: Scenario, plan: RunPlan, store: Store, progress: Progress):
        self.sc, self.plan, self.store = sc, plan, store
        self._runs: dict[str, TuneRow] = {}

    def check(self, names: list[str]) -> None:
        for name in names:
            held = [row for row, _ in (row_of_stored(r, f"the store's run of {name}") for r in
                                       self.store.get_runs(run_key(self.sc, name, self.plan.flags)))
                    if row.measured_s is not None]
            sc = self.sc
            where = f"{sc.ivp.name}, n = {sc.n}, {sc.nodes} x {sc.threads}, flags {' '.join(self.plan.flags)}"
            if not held:
                raise InputError(f"{name}: the store holds no measurement of it ({where}): run tune without "
                                 f"--replay", field="replay")
            need = self.plan.race.min_rounds if self.plan.race else self.plan.reps
            if len(held[-1].runs_s) < need:
                raise InputError(f"{name}: the store holds {len(held[-1].runs_s)} repetitions of it "
                                 f"({where}), " + (f"racing needs {need}" if self.plan.race else
                                                   f"--reps asks for {need}"), field="replay")
            self._runs[name] = held[-1]

    def prepare(self, variant: Variant) -> None:
        """Nothing to build: check() has found every variant's measurement."""

    def run(self, name: str, rep: int) -> dict:
        held = self._runs[name]
        phases = {ph: v["measured_s"] for ph, v in (held.phases or {}).items() if v.get("measured_s")}
        states = held.runs_state or []
        return {"median_step_s": held.runs_s[rep], "phases_s": phases,
                "state": states[rep] if rep < len(states) else None}

    def available(self, name: str) -> int:
        return len(self._runs[name].runs_s)

    def probe_prefix(self) -> list[str] | None:
        """Nothing runs: the stored runs carry the states they were measured in."""
        return None


RUNNERS: dict[str, type] = {"local": LaunchRunner, "srun": SrunRunner, "replay": ReplayRunner}


def runner_for(plan: RunPlan) -> str:
    """The runner kind a plan asks for: replay, else srun where its launcher is srun, else local."""
    if plan.replay:
        return "replay"
    return "srun" if plan.launcher.template.lstrip().startswith("srun") else "local"


def make_runner(kind: str, sc: Scenario, plan: RunPlan, store: Store, progress: Progress) -> Runner:
    return RUNNERS[kind](sc, plan, store, progress)

"""The machine's state during a tune run, the edges: the reference kernels run between the
rounds (the memory triad at the node's busy cores, with the machine file's working set, and the
chain of dependent adds on those cores: the same binaries calibrate --node measured the file
with), and the predictions priced again at a state (model.state through the ranking's own
pricing, from the store's analyses: nothing is analysed again).  docs/tuning.md#the-machines-state-measured-in-the-same-run.
"""
from __future__ import annotations

import dataclasses
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Callable

from autotune.errors import ToolError
from autotune.results.rank import RankResult
from autotune.specs.loading import parse_yaml
from autotune.specs.runstate import Reference, RunState, memory_reference
from autotune.storage.store import Store

PROBE_SECONDS = 0.05      # each reference kernel's run: short beside a round of solver runs


LLC_TIMES = 16           # the probe's triad works on at most this many times the last-level cache


def reference_of(ranked: RankResult) -> Reference | None:
    """The machine file's reference at the scenario's busy cores (None: the file has none).  The
    probe's working set is the file's (a smaller one measured 8 % faster on a 2-core guest, 128
    MiB against 512 MiB beside a 32 MiB L3: a bias of every state-adjusted prediction), but at
    most LLC_TIMES the node's last-level cache in all, so that a large node's probe stays short
    (its first touch is most of a probe's time: 0.45 s for 512 MiB there)."""
    sc = ranked.scenario
    try:
        data = parse_yaml(Path(sc.machine.path).read_text(), sc.machine.path)
    except (OSError, ValueError):
        return None
    ref = memory_reference(data, sc.node_threads, sc.machine.clock_hz)
    if ref is None or not sc.machine.caches:
        return ref
    llc = sc.machine.caches[-1]
    node_llc = llc.bytes_per_group * max(1, -(-sc.machine.cores // max(1, llc.cores_per_group)))
    cap = max(LLC_TIMES * node_llc // ref.cores, 8 * 2**20)
    return dataclasses.replace(ref, bytes_per_thread=min(ref.bytes_per_thread, cap))


class Probe:
    """The reference kernels, built once, run on this host (prefix: a launcher's argv that puts
    them on the node the solvers run on, such as srun's for one task)."""

    def __init__(self, ref: Reference, prefix: list[str] | None = None, cc: str = "gcc"):
        from autotune.tools.hostprobe import build_chain, build_stream
        self.ref, self.prefix = ref, prefix or []
        self._tmp = tempfile.TemporaryDirectory(prefix="autotune-probe-")
        folder = Path(self._tmp.name)
        self.stream, self.chain = build_stream(folder, cc), build_chain(folder, cc)
        self.seconds = 0.0          # spent probing, in all

    def _run(self, argv: list[str]) -> str:
        from autotune.tools.hostprobe import _omp_env
        out = subprocess.run(self.prefix + argv, env=_omp_env(self.ref.cores), capture_output=True, text=True,
                             timeout=120)
        if out.returncode != 0:
            raise ToolError(f"reference kernel {Path(argv[0]).name} failed: {out.stderr.strip()[-300:]}")
        return out.stdout

    def measure(self) -> dict:
        """One probe: {"bandwidth_Bps", "clock_hz", "seconds"}."""
        t0 = time.perf_counter()
        bw = float(self._run([str(self.stream), "triad", str(self.ref.bytes_per_thread), str(PROBE_SECONDS)]).split()[1])
        lines = [ln for ln in self._run([str(self.chain), str(PROBE_SECONDS / 2), "1"]).splitlines() if ln.strip()]
        ghz = statistics.median(float(v) for v in lines[-1].split())
        spent = time.perf_counter() - t0
        self.seconds += spent
        return {"bandwidth_Bps": bw * 1e9, "clock_hz": ghz * 1e9, "seconds": spent}

    def close(self) -> None:
        self._tmp.cleanup()


def state_of(ref: Reference, probes: list[dict]) -> RunState | None:
    """The state over some probes: the median bandwidth and clock (None: no probe)."""
    if not probes:
        return None
    return ref.state(statistics.median(p["bandwidth_Bps"] for p in probes),
                     statistics.median(p["clock_hz"] for p in probes))


def priced_at(ranked: RankResult, states: dict[str, RunState], store: Store) -> dict[str, RankResult]:
    """Each named variant priced again at its state (a ranking of that variant alone on the
    machine carrying the state; the store holds every analysis already)."""
    from autotune.pipeline.predict import rank_scenario
    by_name = {r.variant.name: r.variant for r in ranked.ordered}
    out = {}
    for name, st in states.items():
        if name in by_name and st is not None:
            sc = dataclasses.replace(ranked.scenario, machine=dataclasses.replace(ranked.scenario.machine, state=st))
            out[name] = rank_scenario(sc, [by_name[name]], ranked.rule, store)
    return out


def bound_at(ranked: RankResult, state: RunState, store: Store):
    """The scenario's floor at a state: the whole pool priced at it (the floor takes the pool's
    cheapest RHS form), its bound."""
    from autotune.pipeline.predict import rank_scenario
    sc = dataclasses.replace(ranked.scenario, machine=dataclasses.replace(ranked.scenario.machine, state=state))
    return rank_scenario(sc, [r.variant for r in ranked.ordered], ranked.rule, store).bound


def progress_line(state: RunState) -> str:
    return f"machine state: {state.describe()}"


ProbeFactory = Callable[[Reference], Probe]

"""The machine's state during a tune run, the edges: the reference kernels run between the
rounds (the memory triad at the node's busy cores, with the machine file's working set, and the
chain of dependent adds on those cores: the same binaries calibrate --node measured the file
with), and the predictions priced again at a state (model.state through the ranking's own
pricing, from the store's analyses: nothing is analysed again).  docs/tuning.md#the-machines-state-measured-in-the-same-run.
"""
from __future__ import annotations

import dataclasses
import select
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
ANSWER_S = 120.0          # a reference kernel that takes longer has hung


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
    """The reference kernels, built once, run where the solvers run (prefix: a launcher's argv
    that puts them there, such as srun's for one task; empty: this host).  The triad is one
    process for the whole tune (stream.c's serve mode: its arrays allocated and first touched
    once, one measurement per request), so a probe costs its measurement, not the first touch of
    the file's working set (0.45 s of 0.5 s per probe on a 2-core guest)."""

    def __init__(self, ref: Reference, prefix: list[str] | None = None, cc: str = "gcc"):
        from autotune.tools.hostprobe import _omp_env, build_chain, build_stream
        self.ref, self.prefix = ref, prefix or []
        self._tmp = tempfile.TemporaryDirectory(prefix="autotune-probe-")
        folder = Path(self._tmp.name)
        stream, self.chain = build_stream(folder, cc), build_chain(folder, cc)
        self._env = _omp_env(ref.cores)
        self._triad = subprocess.Popen(self.prefix + [str(stream), "triad", str(ref.bytes_per_thread),
                                                      str(PROBE_SECONDS), "serve"],
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       env=self._env, text=True)
        self.seconds = 0.0          # spent probing, in all

    def _gbs(self) -> float:
        """One triad measurement from the serving process."""
        proc = self._triad
        try:
            proc.stdin.write("\n")
            proc.stdin.flush()
            ready, _, _ = select.select([proc.stdout], [], [], ANSWER_S)
            line = proc.stdout.readline() if ready else ""
        except (BrokenPipeError, OSError):
            line = ""
        if not line:
            proc.kill()
            err = proc.stderr.read().strip()[-300:] if proc.poll() is not None else ""
            raise ToolError(f"reference kernel stream (triad) gave no answer{': ' + err if err else ''}")
        return float(line.split()[1])

    def _clock_ghz(self) -> float:
        out = subprocess.run(self.prefix + [str(self.chain), str(PROBE_SECONDS / 2), "1"], env=self._env,
                             capture_output=True, text=True, timeout=ANSWER_S)
        lines = [ln for ln in out.stdout.splitlines() if ln.strip()]
        if out.returncode != 0 or not lines:
            raise ToolError(f"reference kernel clockchain failed: {out.stderr.strip()[-300:]}")
        return statistics.median(float(v) for v in lines[-1].split())

    def measure(self) -> dict:
        """One probe: {"bandwidth_Bps", "clock_hz", "seconds"}."""
        t0 = time.perf_counter()
        bw, ghz = self._gbs(), self._clock_ghz()
        spent = time.perf_counter() - t0
        self.seconds += spent
        return {"bandwidth_Bps": bw * 1e9, "clock_hz": ghz * 1e9, "seconds": spent}

    def close(self) -> None:
        proc = self._triad
        try:
            proc.stdin.close()
            proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            proc.kill()
            proc.wait()
        for f in (proc.stdout, proc.stderr):
            f.close()
        self._tmp.cleanup()


def state_of(ref: Reference | None, probes: list[dict | None]) -> RunState | None:
    """The state over some probes, or runs' states ({"bandwidth_Bps", "clock_hz"}; None entries
    skipped): the median bandwidth and clock (None: no reference, or nothing measured)."""
    got = [p for p in probes if p]
    if ref is None or not got:
        return None
    return ref.state(statistics.median(p["bandwidth_Bps"] for p in got), statistics.median(p["clock_hz"] for p in got))


def priced_at(ranked: RankResult, states: dict[str, RunState], store: Store) -> dict[str, RankResult]:
    """Each named variant priced again at its state (a ranking of that variant alone on the
    machine carrying the state; the store holds every analysis already)."""
    from autotune.pipeline.predict import rank_scenario
    by_name = {r.variant.name: r.variant for r in ranked.ordered}
    return {name: rank_scenario(_at(ranked, st), [by_name[name]], ranked.rule, store)
            for name, st in states.items() if name in by_name and st is not None}


def _at(ranked: RankResult, state: RunState):
    """The ranking's scenario on its machine carrying the state."""
    return dataclasses.replace(ranked.scenario, machine=dataclasses.replace(ranked.scenario.machine, state=state))


def bound_at(ranked: RankResult, state: RunState, store: Store):
    """The scenario's floor at a state: the whole pool priced at it (the floor takes the pool's
    cheapest RHS form), its bound."""
    from autotune.pipeline.predict import rank_scenario
    return rank_scenario(_at(ranked, state), [r.variant for r in ranked.ordered], ranked.rule, store).bound


def progress_line(state: RunState) -> str:
    return f"machine state: {state.describe()}"


ProbeFactory = Callable[[Reference], Probe]

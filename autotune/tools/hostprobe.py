"""`calibrate --node`, the edges: what the OS tells of this host (CPU model, vendor, cores,
clock, cache geometry), the clock a chain of dependent adds measures under load (one core, all
cores), and what a streaming benchmark measures (bandwidth of the load, copy, update, triad and
daxpy kernels in every cache level and memory, of copy and triad with non-temporal stores in
memory, and of the reference stencils below the levels that hold their rows, for 1..cores
threads), and what a barrier event of the solver's step costs.  The machine file is made from
them by specs/hostmachine.py (pure)."""
from __future__ import annotations

import os
import re
import subprocess
import tempfile
from contextlib import ExitStack, contextmanager
from importlib import resources
from pathlib import Path

from autotune.progress import Progress
from autotune.errors import ToolError
from autotune.specs import capacity, stencils
from autotune.specs.capacity import CapacityScan
from autotune.specs.hostmachine import (CLOCK_RUNS, KERNELS, NT_KERNELS, NT_LEVELS, Cache, ClockMeasure, HostInfo,
                                        Point, clock_under_load, percent, thread_share)
from autotune.specs.runstats import MAX_REPEATS, REPEATS, attainable, attainable_spread, interval, settled

FILL = 0.5


def _cpu_list_len(text: str) -> int:
    n = 0
    for part in text.strip().split(","):
        if "-" in part:
            a, b = part.split("-")
            n += int(b) - int(a) + 1
        elif part:
            n += 1
    return n


def _size(text: str) -> int:
    m = re.match(r"(\d+)([KMG]?)", text.strip())
    return int(m.group(1)) * {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}[m.group(2)]


def detect(sysfs: Path = Path("/sys/devices/system/cpu"), cpuinfo: Path = Path("/proc/cpuinfo")) -> HostInfo:
    info: dict[str, str] = {}
    for line in cpuinfo.read_text().splitlines():
        key, _, value = line.partition(":")
        info.setdefault(key.strip(), value.strip())
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    clock = float(info.get("cpu MHz", "0")) * 1e6
    source = "/proc/cpuinfo's cpu MHz" if clock else "no cpu MHz in /proc/cpuinfo, no cpufreq"
    max_freq = sysfs / "cpu0" / "cpufreq" / "cpuinfo_max_freq"
    if max_freq.exists():
        clock = int(max_freq.read_text()) * 1e3
        source = "cpufreq's cpuinfo_max_freq"
    caches = []
    for idx in sorted((sysfs / "cpu0" / "cache").glob("index*")):
        kind = (idx / "type").read_text().strip()
        if kind == "Instruction":
            continue
        caches.append(Cache(int((idx / "level").read_text()), _size((idx / "size").read_text()),
                            int((idx / "ways_of_associativity").read_text()),
                            int((idx / "coherency_line_size").read_text()),
                            _cpu_list_len((idx / "shared_cpu_list").read_text())))
    return HostInfo(info.get("model name", "unknown CPU"), info.get("vendor_id", "unknown"),
                    info.get("cpu family", "?"), info.get("model", "?"), cores, clock, tuple(caches), source)


def working_sets(host: HostInfo) -> dict[str, int]:
    """Bytes per thread that put a streaming kernel's data in each level (one thread)."""
    out, prev = {}, 0
    for c in host.caches:
        out[f"L{c.level}"] = int(max(FILL * c.size, prev * 2))
        prev = out[f"L{c.level}"]
    last = host.caches[-1].size if host.caches else 32 * 2**20
    out["MEM"] = int(max(8 * last, 256 * 2**20))
    return out


def _build(source: str, folder: Path, cc: str, what: str) -> Path:
    src = Path(str(resources.files("autotune.tools") / source))
    exe = folder / Path(source).stem
    try:
        subprocess.run([cc, "-O3", "-march=native", "-fopenmp", str(src), "-o", str(exe)],
                       check=True, capture_output=True, text=True)
    except (OSError, subprocess.CalledProcessError) as e:
        raise ToolError(f"building the {what} with {cc} failed: {getattr(e, 'stderr', e)}") from None
    return exe


def build_stream(folder: Path, cc: str = "gcc") -> Path:
    """The built-in streaming benchmark (stream.c, beside this module), built in `folder`."""
    return _build("stream.c", folder, cc, "streaming benchmark")


def build_chain(folder: Path, cc: str = "gcc") -> Path:
    """The chain of dependent adds that measures the clock (clockchain.c, beside this module)."""
    return _build("clockchain.c", folder, cc, "clock benchmark")


def _omp_env(threads: int) -> dict:
    """One thread per CPU, bound close: threads 1..t on the first t CPUs this process may use."""
    return dict(os.environ, OMP_NUM_THREADS=str(threads), OMP_PROC_BIND="close", OMP_PLACES="threads")


def chain_runs(exe: Path, threads: int, runs: int, min_seconds: float) -> list[list[float]]:
    """Each run's GHz per thread: the chain on `threads` cores at once, `runs` runs of min_seconds."""
    out = subprocess.run([str(exe), str(min_seconds), str(runs)], env=_omp_env(threads),
                         capture_output=True, text=True, timeout=60 + 4 * runs * min_seconds)
    if out.returncode != 0:
        raise ToolError(f"clock benchmark failed: {out.stderr.strip()}")
    return [[float(v) for v in line.split()] for line in out.stdout.splitlines() if line.strip()]


def measure_clock(host: HostInfo, progress: Progress, min_seconds: float = 0.1,
                  runs: int = CLOCK_RUNS, cc: str = "gcc") -> ClockMeasure:
    """The clock under load: a chain of dependent adds on one core, then on every core at once
    (one thread bound per core), `runs` runs each; the medians and spreads (specs.hostmachine)."""
    with tempfile.TemporaryDirectory(prefix="autotune-clock-") as tmp:
        exe = build_chain(Path(tmp), cc)
        one = chain_runs(exe, 1, runs, min_seconds)
        every = chain_runs(exe, host.cores, runs, min_seconds)
    clock = clock_under_load(host.clock_hz, host.clock_source, one, every)
    progress.say(clock.describe())
    return clock


def measure_barrier(host: HostInfo, progress: Progress, cc: str = "gcc") -> dict[int, float]:
    """Seconds of one barrier event of the solver's step (a parallel region's end and the next
    one's start: benchmarks_mpi/barrier.c), the median of its runs, at each thread count of
    specs.hostmachine.barrier_thread_counts, the threads bound one a CPU."""
    from benchmarks_mpi import barrier as bench
    from autotune.specs.hostmachine import barrier_thread_counts
    out = {}
    with tempfile.TemporaryDirectory(prefix="autotune-barrier-") as tmp:
        try:
            exe = bench.build(cc, Path(tmp))
            for t in barrier_thread_counts(host.cores):
                out[t] = float(bench.run(exe, t)["median"])
        except (OSError, subprocess.SubprocessError, ValueError, KeyError) as e:
            raise ToolError(f"barrier benchmark failed: {' '.join(str(getattr(e, 'stderr', '') or e).split())[:300]}") from None
    progress.say("barrier events (a parallel region's end and the next one's start): "
                 + ", ".join(f"{1e6 * s:.2f} us on {t} thread(s)" for t, s in out.items()))
    return out


def stream_gbps(exe: Path, kernel: str, bytes_per_thread: int, threads: int, min_seconds: float,
                row: int | None = None) -> float:
    """GB/s of one run of the streaming benchmark (bytes the kernel names, threads bound close);
    row: the stencil's row length."""
    extra = [f"row={row}"] if row else []
    out = subprocess.run([str(exe), kernel, str(bytes_per_thread), str(min_seconds), *extra], env=_omp_env(threads),
                         capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        raise ToolError(f"streaming benchmark {kernel} failed: {out.stderr.strip()}")
    return float(out.stdout.split()[1])


def stream_has_nt(exe: Path) -> bool:
    """Whether the streaming benchmark was built with non-temporal stores (exit status 3: the
    target has none it can write)."""
    out = subprocess.run([str(exe), NT_KERNELS[0], "65536", "0.0001"], env=dict(os.environ, OMP_NUM_THREADS="1"),
                         capture_output=True, text=True, timeout=60)
    if out.returncode not in (0, 3):
        raise ToolError(f"streaming benchmark {NT_KERNELS[0]} failed: {out.stderr.strip()}")
    return out.returncode == 0


@contextmanager
def stream_exe(cc: str = "gcc"):
    """The streaming benchmark built once in a folder of its own, for the scan and the levels."""
    with tempfile.TemporaryDirectory(prefix="autotune-stream-") as tmp:
        yield build_stream(Path(tmp), cc)


def measure_capacity(host: HostInfo, progress: Progress, min_seconds: float = 0.1,
                     cc: str = "gcc", exe: Path | None = None) -> CapacityScan | None:
    """The last cache level's capacity as the node's data get it: the streaming benchmark's
    capacity.KERNEL on every core at capacity.scan_sizes, capacity.ROUNDS rounds round-robin (a
    slow spell of a shared machine touches every size alike); specs.capacity finds the fall.
    None where the OS gives no cache level; exe: the benchmark already built (else built here)."""
    if capacity.last_level(host) is None:
        return None
    sizes = capacity.scan_sizes(host)
    runs: list[list[float]] = [[] for _ in sizes]
    if sizes:
        with ExitStack() as stack:
            exe = exe or stack.enter_context(stream_exe(cc))
            for r in range(capacity.ROUNDS):
                progress.say(f"last-level cache: round {r + 1} of {capacity.ROUNDS} over {len(sizes)} sizes, "
                         f"{sizes[0] / 2**20:.0f}-{sizes[-1] / 2**20:.0f} MiB")
                for i, size in enumerate(sizes):
                    runs[i].append(stream_gbps(exe, capacity.KERNEL, max(size // host.cores, 4096), host.cores,
                                               min_seconds))
    scan = capacity.effective(host, sizes, runs)
    progress.say(scan.describe())
    return scan


def measure(host: HostInfo, progress: Progress, min_seconds: float = 0.1,
            cc: str = "gcc", exe: Path | None = None, found: tuple[stencils.Stencil, ...] = ()) -> dict:
    """Per level and kernel, a Point per thread count (1, 2, ...): the GB/s of the built-in
    streaming benchmark, the upper quartile of its runs (specs.runstats.attainable), their spread
    ((max - min) / median), the 95 % interval of that figure and the runs; in NT_LEVELS also of
    the kernels with non-temporal stores (NT_KERNELS), where the target has them, and in their
    levels of the reference stencils `found`.  The kernels of a level and thread count are run
    round-robin, REPEATS rounds, more (up to MAX_REPEATS) until every kernel's figure is settled,
    so that a slow or fast spell of a shared machine touches every kernel alike (back to back, one
    kernel's runs could all fall in one: on a shared guest the memory bandwidth moved by 1.7 x
    between minutes)."""
    results: dict = {}
    with ExitStack() as stack:
        exe = exe or stack.enter_context(stream_exe(cc))
        nt = NT_KERNELS if stream_has_nt(exe) else ()
        if not nt:
            progress.say("the streaming benchmark has no non-temporal stores on this target: streamed "
                     "stores are priced as assumed (no write-allocate read, the same bandwidth)")
        sizes = working_sets(host)
        rows = {s.name: s.row for s in found}
        for level, per_thread in sizes.items():
            kernels = (KERNELS + (nt if level in NT_LEVELS else ())
                       + tuple(s.name for s in found if level in s.levels))
            results[level] = {kernel: [] for kernel in kernels}
            for t in range(1, host.cores + 1):
                ws = thread_share(host, level, per_thread, t)
                runs: dict[str, list[float]] = {kernel: [] for kernel in kernels}
                done = 0
                while done < REPEATS or (done < MAX_REPEATS and not settled(runs, statistic=attainable)):
                    for kernel in kernels:
                        runs[kernel].append(stream_gbps(exe, stencils.KERNEL if kernel in rows else kernel, ws, t,
                                                        min_seconds, row=rows.get(kernel)))
                    done += 1
                for kernel in kernels:
                    results[level][kernel].append(Point(t, ws, *attainable_spread(runs[kernel]),
                                                        interval(runs[kernel], attainable), done,
                                                        tuple(runs[kernel])))
            widest = max((p.spread, k, p.threads) for k in kernels for p in results[level][k])
            loosest = max(((p.interval[1] - p.interval[0]) / p.gbps if p.gbps else 0.0, k, p.threads, p.runs)
                          for k in kernels for p in results[level][k])
            progress.say(f"bandwidth {level}: " + ", ".join(f"{k} {results[level][k][0].gbps:.1f}" for k in kernels)
                     + f" GB/s on 1 thread; runs spread up to {percent(widest[0])} ({widest[1]}, "
                     f"{widest[2]} thread(s)); the upper quartiles' 95 % intervals within {percent(loosest[0])} of them "
                     f"(widest: {loosest[1]}, {loosest[2]} thread(s), {loosest[3]} runs)")
    return results

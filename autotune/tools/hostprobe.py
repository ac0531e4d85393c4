"""`calibrate --node`, the edges: what the OS tells of this host (CPU model, vendor, cores,
clock, cache geometry) and what a streaming benchmark measures (bandwidth of the load, copy,
update, triad and daxpy kernels in every cache level and memory, for 1..cores threads).
The machine file is made from them by specs/hostmachine.py (pure)."""
from __future__ import annotations

import os
import re
import statistics
import subprocess
import tempfile
from importlib import resources
from pathlib import Path
from typing import Callable

from autotune.errors import ToolError
from autotune.specs.hostmachine import KERNELS, REPEATS, Cache, HostInfo

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
    max_freq = sysfs / "cpu0" / "cpufreq" / "cpuinfo_max_freq"
    if max_freq.exists():
        clock = int(max_freq.read_text()) * 1e3
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
                    info.get("cpu family", "?"), info.get("model", "?"), cores, clock, tuple(caches))


def working_sets(host: HostInfo) -> dict[str, int]:
    """Bytes per thread that put a streaming kernel's data in each level (one thread)."""
    out, prev = {}, 0
    for c in host.caches:
        out[f"L{c.level}"] = int(max(FILL * c.size, prev * 2))
        prev = out[f"L{c.level}"]
    last = host.caches[-1].size if host.caches else 32 * 2**20
    out["MEM"] = int(max(8 * last, 256 * 2**20))
    return out


def build_stream(folder: Path, cc: str = "gcc") -> Path:
    """The built-in streaming benchmark (benchmarks_mpi/stream.c), built in `folder`."""
    src = Path(str(resources.files("benchmarks_mpi") / "stream.c"))
    exe = folder / "stream"
    try:
        subprocess.run([cc, "-O3", "-march=native", "-fopenmp", str(src), "-o", str(exe)],
                       check=True, capture_output=True, text=True)
    except (OSError, subprocess.CalledProcessError) as e:
        raise ToolError(f"building the streaming benchmark with {cc} failed: {getattr(e, 'stderr', e)}") from None
    return exe


def stream_gbps(exe: Path, kernel: str, bytes_per_thread: int, threads: int, min_seconds: float) -> float:
    """GB/s of one run of the streaming benchmark (bytes the kernel names, threads bound close)."""
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OMP_PROC_BIND="close")
    out = subprocess.run([str(exe), kernel, str(bytes_per_thread), str(min_seconds)], env=env,
                         capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        raise ToolError(f"streaming benchmark {kernel} failed: {out.stderr.strip()}")
    return float(out.stdout.split()[1])


def measure(host: HostInfo, progress: Callable[[str], None], min_seconds: float = 0.1,
            cc: str = "gcc") -> dict:
    """GB/s per level, kernel and thread count (the median of REPEATS runs), from the built-in
    streaming benchmark.  The kernels of a level and thread count are run round-robin, REPEATS
    rounds, so that a slow or fast spell of a shared machine touches every kernel alike (back to
    back, one kernel's runs could all fall in one: on a shared guest the memory bandwidth moved
    by 1.7 x between minutes)."""
    results: dict = {}
    with tempfile.TemporaryDirectory(prefix="autotune-stream-") as tmp:
        exe = build_stream(Path(tmp), cc)
        sizes = working_sets(host)
        for level, per_thread in sizes.items():
            shared = next((c.shared_by for c in host.caches if f"L{c.level}" == level), host.cores)
            results[level] = {kernel: [] for kernel in KERNELS}
            for t in range(1, host.cores + 1):
                # a shared level holds every thread's share: split its working set
                ws = per_thread if shared == 1 or level == "MEM" else max(per_thread // t, 4096)
                runs: dict[str, list[float]] = {kernel: [] for kernel in KERNELS}
                for _ in range(REPEATS):
                    for kernel in KERNELS:
                        runs[kernel].append(stream_gbps(exe, kernel, ws, t, min_seconds))
                for kernel in KERNELS:
                    results[level][kernel].append((t, ws, statistics.median(runs[kernel])))
            progress(f"bandwidth {level}: " + ", ".join(f"{k} {results[level][k][0][2]:.1f}" for k in KERNELS)
                     + " GB/s on 1 thread")
    return results

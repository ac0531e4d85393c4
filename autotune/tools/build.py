"""Build and run generated solvers (edge: compiler, launcher, files).  Builds are cached by source and flags."""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from autotune.errors import ToolError
from autotune.tools.launcher import Launcher
from autotune.storage.paths import build_dir
from autotune.tools.mpiinfo import launch_argv, placement, placement_error, world_size_error
from autotune.tools.toolchain import compiler_version, find_executable



def find_mpicc() -> str:
    exe = find_executable("mpicc")
    if exe is None:
        raise ToolError("mpicc not found: install MPI (pip install mpich) or put mpicc on PATH")
    return exe


def _cpu() -> str:
    """This host's CPU model: a solver built with -march=native runs only on its kind."""
    try:
        with open("/proc/cpuinfo") as f:
            return next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), "")
    except OSError:
        return ""


def build(source: str, flags: tuple[str, ...], cc: str | None = None, parts: int = 0) -> Path:
    """Compile once per (source, compiler, flags, and the CPU where the flags tune for the host);
    return the executable.  Batch jobs on several nodes may share the build directory and build
    the same solver at once: each writes files of its own and moves the result into place.
    parts: a source of that many parts (codegen.online), each compiled on its own (-DAUTOTUNE_PART=k,
    as many at once as there are CPUs), then linked; 0: one unit."""
    cc = cc or find_mpicc()
    native = _cpu() if any(f.startswith(("-march=native", "-mtune=native", "-mcpu=native")) for f in flags) else ""
    key = hashlib.sha256(json.dumps([source, cc, compiler_version(cc), list(flags)] + ([native] if native else [])
                                    + ([parts] if parts else [])).encode()).hexdigest()[:20]
    out_dir = build_dir() / key
    exe = out_dir / "solver"
    if exe.exists():
        return exe
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        fd, src_tmp = tempfile.mkstemp(prefix="solver.", suffix=".c", dir=out_dir)
        with os.fdopen(fd, "w") as f:
            f.write(source)
        tmp = Path(src_tmp).with_suffix(".tmp")
        proc = _compile(cc, flags, src_tmp, tmp, parts)
        if proc.returncode != 0:
            log = out_dir / "build.log"
            log.write_text(proc.stdout + proc.stderr)
            os.replace(src_tmp, out_dir / "solver.c")      # the source the log is about
            raise ToolError(f"compiling {out_dir / 'solver.c'} with {cc} failed (log: {log})")
        os.replace(src_tmp, out_dir / "solver.c")
        os.replace(tmp, exe)
    except OSError as e:
        raise ToolError(f"building in {out_dir}: {e.strerror}: {e.filename}") from None
    return exe


def _compile(cc: str, flags, src: str, exe: Path, parts: int) -> subprocess.CompletedProcess:
    if not parts:
        return subprocess.run([cc, *flags, src, "-o", str(exe), "-lm"], capture_output=True, text=True)
    objs = [exe.with_suffix(f".{k}.o") for k in range(parts)]

    def one(k: int) -> subprocess.CompletedProcess:
        return subprocess.run([cc, *flags, f"-DAUTOTUNE_PART={k}", "-c", src, "-o", str(objs[k])],
                              capture_output=True, text=True)
    try:
        with ThreadPoolExecutor(max_workers=max(1, min(parts, os.cpu_count() or 1))) as pool:
            done = list(pool.map(one, range(parts)))
        failed = next((p for p in done if p.returncode != 0), None)
        return failed or subprocess.run([cc, *flags, *map(str, objs), "-o", str(exe), "-lm"],
                                        capture_output=True, text=True)
    finally:
        for o in objs:
            o.unlink(missing_ok=True)


def launch(argv: list[str], env: dict, timeout: float) -> subprocess.CompletedProcess:
    """A solver's launch run to its end; ToolError where the launcher is missing, the run times
    out or exits non-zero (the end of its stderr in the message)."""
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env)
    except FileNotFoundError:
        raise ToolError(f"launcher '{argv[0]}' not found: {' '.join(argv)}") from None
    except subprocess.TimeoutExpired:
        raise ToolError(f"solver timed out after {timeout:g} s: {' '.join(argv)}") from None
    if proc.returncode != 0:
        raise ToolError(f"solver failed (exit {proc.returncode}): {' '.join(argv)}: {proc.stderr.strip()[-500:]}")
    return proc


def run(exe: Path, launcher: Launcher, procs: int, threads: int, n: int, size: int, steps: int,
        h: float, warmup: int, output: Path | None = None, timeout: float = 600.0,
        pin: bool = False, nodes: int | None = None, t_end: float | None = None) -> dict:
    """Run the solver on `procs` ranks (over `nodes` nodes; the launcher decides where not given); its JSON
    result line.
    pin: bind each OpenMP thread to its own core (only where one rank has a node to itself; ranks
    sharing a host would all bind to its first cores).  OMP_PROC_BIND / OMP_PLACES set by the user
    win.  A run whose MPI world is not `procs` ranks, or that a launcher told the nodes (srun) ran
    on fewer than `nodes` nodes, is an error, never a result; its "placement" is mpiinfo.placement's
    (packed where a launcher that cannot be told them, such as a local mpiexec, ran it on fewer).
    t_end: a solver with step control (specs.control) stops there, or after `steps` accepted steps
    (h: the first step's proposal)."""
    tail = [str(output) if output else "-", repr(float(t_end))] if t_end is not None else \
        ([str(output)] if output else [])
    argv = launch_argv(launcher, procs, [str(exe), str(n), str(size), str(steps), repr(h), str(warmup)] + tail, nodes)
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    if pin:
        env.setdefault("OMP_PROC_BIND", "close")
        env.setdefault("OMP_PLACES", "cores")
    proc = launch(argv, env, timeout)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        raise ToolError(f"solver printed no result: {' '.join(argv)}")
    result = json.loads(lines[-1])
    result["log"] = [ln for ln in proc.stdout.splitlines() if ln.startswith("online: ")]   # an online run's trial
    if len(lines) > 1 or result.get("ranks") != procs:
        raise ToolError(world_size_error("solver", len(lines), result.get("ranks", "?"), procs, argv))
    result["placement"] = placement(result.get("placement"), nodes)
    wrong = placement_error("solver", result["placement"], nodes, argv) if nodes and launcher.places_nodes else None
    if wrong:
        raise ToolError(wrong)
    return result

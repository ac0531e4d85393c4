"""Timing method shared by the MPI micro-benchmarks.

Follows the practice of the established MPI benchmark suites: warm-up calls,
a barrier before every timed call (synchronised start), each rank's time
reduced to the maximum over ranks, and repetitions until the median is stable
(or a repetition/time budget is spent).  min/median/max and every repetition
are kept.
"""
from __future__ import annotations

import json
import statistics
import sys


def geometric_sizes(min_bytes: int, max_bytes: int, factor: float = 2.0, align: int = 8) -> list[int]:
    sizes, b = [], float(min_bytes)
    while b <= max_bytes * (1 + 1e-9):
        v = max(align, int(round(b / align)) * align)
        if not sizes or v != sizes[-1]:
            sizes.append(v)
        b *= factor
    return sizes


def stable(times: list[float], rel_tol: float) -> bool:
    """The median of the last half agrees with the median of all within rel_tol."""
    half = times[len(times) // 2:]
    m_all, m_half = statistics.median(times), statistics.median(half)
    return abs(m_half - m_all) <= rel_tol * m_all


def measure(comm, op, warmup: int = 3, min_reps: int = 10, max_reps: int = 200,
            max_seconds: float = 2.0, rel_tol: float = 0.02) -> list[float]:
    """Per-repetition times (max over ranks) of op(); every rank gets the same list."""
    from mpi4py import MPI

    for _ in range(warmup):
        op()
    times: list[float] = []
    while len(times) < max_reps:
        comm.Barrier()
        t0 = MPI.Wtime()
        op()
        local = MPI.Wtime() - t0
        times.append(comm.allreduce(local, op=MPI.MAX))
        if len(times) >= min_reps and (stable(times, rel_tol) or sum(times) > max_seconds):
            break
    return times


def record(callpath: str, params: dict, times: list[float]) -> dict:
    """One Extra-P JSON Lines record (params, value list, callpath, metric) plus summary statistics."""
    return {"params": params, "callpath": callpath, "metric": "time", "value": times,
            "min": min(times), "median": statistics.median(times), "max": max(times), "reps": len(times)}


def common_args(parser, default_max: int) -> None:
    parser.add_argument("--min-bytes", type=int, default=8)
    parser.add_argument("--max-bytes", type=int, default=default_max)
    parser.add_argument("--factor", type=float, default=2.0, help="size step factor")
    parser.add_argument("--max-reps", type=int, default=200)
    parser.add_argument("--max-seconds", type=float, default=1.0, help="time budget per size")
    parser.add_argument("--out", help="append JSON lines here (rank 0); default stdout")
    parser.add_argument("--ranks", type=int, help="the MPI world size asked for: any other size stops the "
                                                  "benchmark (exit 3) before it writes anything")


def emit(comm, rec: dict, out_path: str | None) -> None:
    if comm.rank != 0:
        return
    line = json.dumps(rec)
    if out_path:
        with open(out_path, "a") as f:
            f.write(line + "\n")
    else:
        print(line, flush=True)
    print(f"{rec['callpath']} {rec['params']} median {rec['median']:.3e} s ({rec['reps']} reps)",
          file=sys.stderr, flush=True)


def where_ranks_run(comm) -> dict:
    """Each rank's node (Slurm's node name, else the MPI processor name) and host, by rank: what
    a record reports so that a run asked to span nodes can be checked for doing so."""
    import os
    import socket

    from mpi4py import MPI

    node = os.environ.get("SLURMD_NODENAME") or MPI.Get_processor_name()
    pairs = comm.allgather((node, socket.gethostname()))
    return {"nodes": [n for n, _ in pairs], "hosts": [h for _, h in pairs]}


def sweep(argv, doc: str, default_max: int, callpath: str, make_op) -> int:
    """Parse the common options and time make_op(comm, nbytes) -> op at every message size."""
    import argparse

    from mpi4py import MPI

    ap = argparse.ArgumentParser(description=doc)
    common_args(ap, default_max)
    args = ap.parse_args(argv)
    comm = MPI.COMM_WORLD
    if args.ranks is not None and comm.size != args.ranks:
        if comm.rank == 0:
            print(f"{callpath}: MPI world of {comm.size} rank(s), {args.ranks} asked", file=sys.stderr, flush=True)
        return 3
    where = where_ranks_run(comm)
    for nbytes in geometric_sizes(args.min_bytes, args.max_bytes, args.factor):
        times = measure(comm, make_op(comm, nbytes), max_reps=args.max_reps, max_seconds=args.max_seconds)
        emit(comm, dict(record(callpath, {"p": comm.size, "bytes": nbytes}, times), placement=where), args.out)
    return 0

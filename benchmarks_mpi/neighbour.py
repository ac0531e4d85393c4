"""Neighbour exchange: Isend/Irecv with rank-1 and rank+1 (no wrap-around), then Waitall.

    mpiexec -n P python -m benchmarks_mpi.neighbour [--max-bytes 4194304] [--out f.jsonl]
"""
from __future__ import annotations

import argparse

from .harness import common_args, emit, geometric_sizes, measure, record


def exchange(comm, send, recv_lo, recv_hi):
    from mpi4py import MPI

    reqs = []
    if comm.rank > 0:
        reqs += [comm.Irecv(recv_lo, comm.rank - 1, 1), comm.Isend(send, comm.rank - 1, 2)]
    if comm.rank < comm.size - 1:
        reqs += [comm.Irecv(recv_hi, comm.rank + 1, 2), comm.Isend(send, comm.rank + 1, 1)]
    MPI.Request.Waitall(reqs)


def main(argv=None) -> int:
    from mpi4py import MPI
    import numpy as np

    ap = argparse.ArgumentParser(description=__doc__)
    common_args(ap, 4 * 2**20)
    args = ap.parse_args(argv)
    comm = MPI.COMM_WORLD
    for nbytes in geometric_sizes(args.min_bytes, args.max_bytes, args.factor):
        send, lo, hi = np.ones(nbytes // 8), np.empty(nbytes // 8), np.empty(nbytes // 8)
        times = measure(comm, lambda: exchange(comm, send, lo, hi), max_reps=args.max_reps,
                        max_seconds=args.max_seconds)
        emit(comm, record("neighbour", {"p": comm.size, "bytes": nbytes}, times), args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

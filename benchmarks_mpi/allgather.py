"""MPI_Allgather (the multi-broadcast of the PIRK solver) over per-rank message sizes.

    mpiexec -n P python -m benchmarks_mpi.allgather [--min-bytes 8] [--max-bytes 67108864] [--out f.jsonl]
"""
from __future__ import annotations

import argparse

from .harness import common_args, emit, geometric_sizes, measure, record


def main(argv=None) -> int:
    from mpi4py import MPI
    import numpy as np

    ap = argparse.ArgumentParser(description=__doc__)
    common_args(ap, 64 * 2**20)
    args = ap.parse_args(argv)
    comm = MPI.COMM_WORLD
    for nbytes in geometric_sizes(args.min_bytes, args.max_bytes, args.factor):
        send = np.ones(nbytes // 8)
        recv = np.empty(comm.size * (nbytes // 8))
        times = measure(comm, lambda: comm.Allgather(send, recv), max_reps=args.max_reps,
                        max_seconds=args.max_seconds)
        emit(comm, record("allgather", {"p": comm.size, "bytes": nbytes}, times), args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

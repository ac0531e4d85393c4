"""Sparse exchange: each rank swaps a block with one partner (rank + p/2, mod p), as a node
exchanges its block with the node holding the coupled components (Medakzo, String-Row).

    mpiexec -n P python -m benchmarks_mpi.sparse [--max-bytes 67108864] [--out f.jsonl]
"""
from __future__ import annotations

import argparse

from .harness import common_args, emit, geometric_sizes, measure, record


def partner(rank: int, size: int) -> int:
    return (rank + size // 2) % size if size > 1 else rank


def main(argv=None) -> int:
    from mpi4py import MPI
    import numpy as np

    ap = argparse.ArgumentParser(description=__doc__)
    common_args(ap, 64 * 2**20)
    args = ap.parse_args(argv)
    comm = MPI.COMM_WORLD
    other = partner(comm.rank, comm.size)
    for nbytes in geometric_sizes(args.min_bytes, args.max_bytes, args.factor):
        send, recv = np.ones(nbytes // 8), np.empty(nbytes // 8)

        def op():
            if other != comm.rank:
                comm.Sendrecv(send, other, 3, recv, MPI.ANY_SOURCE, 3)

        times = measure(comm, op, max_reps=args.max_reps, max_seconds=args.max_seconds)
        emit(comm, record("pairwise", {"p": comm.size, "bytes": nbytes}, times), args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

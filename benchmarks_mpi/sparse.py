"""Sparse exchange: each rank swaps a block with one partner (rank + p/2, mod p), as a node
exchanges its block with the node holding the coupled components (Medakzo, String-Row).

    mpiexec -n P python -m benchmarks_mpi.sparse [--max-bytes 67108864] [--out f.jsonl]
"""
from __future__ import annotations

from .harness import sweep


def partner(rank: int, size: int) -> int:
    return (rank + size // 2) % size if size > 1 else rank


def make_op(comm, nbytes):
    import numpy as np
    from mpi4py import MPI

    other = partner(comm.rank, comm.size)
    send, recv = np.ones(nbytes // 8), np.empty(nbytes // 8)

    def op():
        if other != comm.rank:
            comm.Sendrecv(send, other, 3, recv, MPI.ANY_SOURCE, 3)

    return op


def main(argv=None) -> int:
    return sweep(argv, __doc__, 64 * 2**20, "pairwise", make_op)


if __name__ == "__main__":
    raise SystemExit(main())

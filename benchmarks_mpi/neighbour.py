"""Neighbour exchange: Isend/Irecv with rank-1 and rank+1 (no wrap-around), then Waitall.

    mpiexec -n P python -m benchmarks_mpi.neighbour [--max-bytes 4194304] [--out f.jsonl]
"""
from __future__ import annotations

from .harness import sweep


def exchange(comm, send, recv_lo, recv_hi):
    from mpi4py import MPI

    reqs = []
    if comm.rank > 0:
        reqs += [comm.Irecv(recv_lo, comm.rank - 1, 1), comm.Isend(send, comm.rank - 1, 2)]
    if comm.rank < comm.size - 1:
        reqs += [comm.Irecv(recv_hi, comm.rank + 1, 2), comm.Isend(send, comm.rank + 1, 1)]
    MPI.Request.Waitall(reqs)


def make_op(comm, nbytes):
    import numpy as np

    send, lo, hi = np.ones(nbytes // 8), np.empty(nbytes // 8), np.empty(nbytes // 8)
    return lambda: exchange(comm, send, lo, hi)


def main(argv=None) -> int:
    return sweep(argv, __doc__, 4 * 2**20, "neighbour", make_op)


if __name__ == "__main__":
    raise SystemExit(main())

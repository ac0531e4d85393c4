"""MPI_Allreduce (sum; step-size control reduces its error norm, one double) over per-rank message sizes.

    mpiexec -n P python -m benchmarks_mpi.allreduce [--min-bytes 8] [--max-bytes 65536] [--out f.jsonl]
"""
from __future__ import annotations

from .harness import sweep


def make_op(comm, nbytes):
    import numpy as np
    from mpi4py import MPI

    send = np.ones(nbytes // 8)
    recv = np.empty(nbytes // 8)
    return lambda: comm.Allreduce(send, recv, op=MPI.SUM)


def main(argv=None) -> int:
    return sweep(argv, __doc__, 64 * 2**10, "allreduce", make_op)


if __name__ == "__main__":
    raise SystemExit(main())

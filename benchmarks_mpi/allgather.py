"""MPI_Allgather (the multi-broadcast of the PIRK solver) over per-rank message sizes.

    mpiexec -n P python -m benchmarks_mpi.allgather [--min-bytes 8] [--max-bytes 67108864] [--out f.jsonl]
"""
from __future__ import annotations

from .harness import sweep


def make_op(comm, nbytes):
    import numpy as np

    send = np.ones(nbytes // 8)
    recv = np.empty(comm.size * (nbytes // 8))
    return lambda: comm.Allgather(send, recv)


def main(argv=None) -> int:
    return sweep(argv, __doc__, 64 * 2**20, "allgather", make_op)


if __name__ == "__main__":
    raise SystemExit(main())

"""The edges that run processes or import third-party tools: kerncraft, compilers, launchers,
MPI benchmarks, host probing."""

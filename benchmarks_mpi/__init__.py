"""MPI micro-benchmarks for calibrating the communication model (run with mpiexec)."""

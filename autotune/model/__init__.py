"""Pure models: ECM arithmetic (eqs 8-11), memory regimes, reuse, ranking, scaling,
comparison, communication cost and its fitting.  No I/O, no subprocesses."""

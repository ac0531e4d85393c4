"""Pure models: ECM arithmetic (eqs 8-11), step schedule, memory regimes, ranking, scaling,
comparison, communication cost and its fitting.  No I/O, no subprocesses."""

"""ECM predictions through kerncraft: regime selection, the analysis worker, the parallel runner."""

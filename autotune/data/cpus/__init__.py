"""The CPU table: which microarchitecture a CPU is, and what the model needs to know of it."""

"""Shipped ODE method definitions (YAML)."""

"""Jinja rendering of kernel parts (what kerncraft analyses) and full solvers (what runs)."""

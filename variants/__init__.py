"""Jinja templates of the kernel parts and solvers; installed as the package autotune.data.variants."""

"""Shipped machine files (YAML); installed as the package autotune.data.machines."""

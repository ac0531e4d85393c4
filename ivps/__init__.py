"""Shipped IVP definitions (YAML); installed as the package autotune.data.ivps."""

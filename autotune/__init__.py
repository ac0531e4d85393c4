"""autotune: offline selection of PIRK solver implementation variants for clusters."""

__version__ = "0.1.0"

"""Shipped data: methods here; ivps/, machines/ and variants/ of the source tree are mapped
into this package by pyproject.toml."""

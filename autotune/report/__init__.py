"""Renderers of the typed results, registered by (result type, format)."""

"""Persistence: the SQLite store and the user directories."""

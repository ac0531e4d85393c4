"""Requests: what the command line, plan files and the Python API ask for, with the defaults
declared once."""

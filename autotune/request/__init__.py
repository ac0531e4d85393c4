"""Requests: what the command line, plan files and the Python API ask for, with the defaults
declared once; each request is built from the same flat keywords by its one builder, `of`
(request.keywords), whichever front end asks (docs/design.md#the-python-api)."""

"""Error types that the command line turns into one-line messages."""


class InputError(Exception):
    """Bad input from the user (a file, a field, an option): exit status 2."""


class ToolError(Exception):
    """An external tool (kerncraft, compiler, mpiexec) failed."""

"""Error types that the front ends turn into one-line messages."""
from __future__ import annotations


class InputError(Exception):
    """Bad input from the user (a file, a field, an option): exit status 2.

    field names the request field the message is about (`threads`, `n`, `variant`), or is
    None where the message names its file and field itself.  Each front end names the field
    its own way: the command line as its flag (--threads), a plan file as the entry's path
    (scenarios[3].threads), the Python API as the keyword (threads).
    """

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.message = message
        self.field = field

    def named(self, label: str | None = None) -> str:
        """The message with the field called `label` (default: the field's own name)."""
        if self.field is None:
            return self.message
        sep = "" if self.message.startswith(":") else " "
        return f"{label or self.field}{sep}{self.message}"

    def __str__(self) -> str:
        return self.named()


class CannotRun(InputError):
    """A variant the IVP (or the size, or the machine) cannot run at all, whatever the scenario:
    traversal=strips of an IVP that declares no grid.  Naming it is bad input; generating the
    whole pool leaves it out with this reason."""


class InputWarning(UserWarning):
    """Input that is read, but likely not as meant (a machine file's top-level key that nothing
    reads).  The command line prints it as one line, "autotune: warning: ..."."""


class ToolError(Exception):
    """An external tool (kerncraft, compiler, mpiexec) failed."""

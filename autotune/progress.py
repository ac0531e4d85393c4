"""What long work tells while it goes: one object, handed down to whatever reports progress
(docs/design.md#progress).

    step(done, total, name)   a batch of `total` steps named `name` (done 0 announces it): the
                              kerncraft analyses, the in-core and sweep measurements
    say(message)              one line about anything else: a run, a measurement, a file

Progress itself tells nothing: the default wherever one is not given (the Python API's).  The
command line's prints on stderr (cli.progress.ConsoleProgress); Callbacks adapts the API's two
callables."""
from __future__ import annotations

from typing import Callable


class Progress:
    """Tells nothing."""

    def step(self, done: int, total: int, name: str) -> None:
        pass

    def say(self, message: str) -> None:
        pass


SILENT = Progress()


class Callbacks(Progress):
    """The API's callables as a Progress: progress(done, total, name) and say(message), each
    optional."""

    def __init__(self, progress: Callable[[int, int, str], None] | None = None,
                 say: Callable[[str], None] | None = None) -> None:
        self._step, self._say = progress, say

    def step(self, done: int, total: int, name: str) -> None:
        if self._step is not None:
            self._step(done, total, name)

    def say(self, message: str) -> None:
        if self._say is not None:
            self._say(message)


def progress_of(progress=None, say=None) -> Progress:
    """A Progress from what an API caller gives: a Progress as it is (as either argument), or the
    two callables."""
    for given in (progress, say):
        if isinstance(given, Progress):
            return given
    return SILENT if progress is None and say is None else Callbacks(progress, say)

"""The command line's progress (autotune.progress.Progress) on stderr.  A batch's steps (the
kerncraft analyses, the measurements): on a terminal one line rewritten in place, with the time
left at the rate so far; elsewhere (a log, a pipe, a batch job's output) one plain line per
finished step, so that nothing is lost and every line reads alone.  Any other line is said as
`autotune: COMMAND: message`."""
from __future__ import annotations

import sys
import time
from typing import Callable, TextIO

from autotune.progress import Progress

INCORE = "in-core"      # the name prefix of the in-core measurement's progress (pipeline.incore)
SWEEPS = "sweeps"       # the name prefix of the fused sweeps' measurement (pipeline.sweeps)
# what the first line of a measurement's progress says, by its name prefix ({total}: its steps)
MEASURING = {INCORE: "measuring the in-core time of {total} kernel parts on this CPU (each built as "
                     "analysed, timed round-robin)",
             SWEEPS: "measuring the fused sweeps as the solver runs them on this CPU ({total} steps: "
                     "each form's solver built, then timed round-robin)"}


def time_left(elapsed_s: float, done: int, total: int) -> float | None:
    """Seconds left if the analyses still to run take as long as those done so far (None before
    the first one has finished).  Parallel workers are in the rate: it is wall time per result."""
    if done <= 0:
        return None
    return elapsed_s / done * max(total - done, 0)


def clock(seconds: float) -> str:
    """12 s, 1 min 05 s."""
    seconds = max(0, round(seconds))
    return f"{seconds} s" if seconds < 60 else f"{seconds // 60} min {seconds % 60:02d} s"


class ConsoleProgress(Progress):
    """step(done, total, name): done == 0 announces the batch; say(message): one line, prefixed
    with the command."""

    def __init__(self, command: str = "", stream: TextIO | None = None, interactive: bool | None = None,
                 now: Callable[[], float] = time.monotonic):
        self.command = command
        self.stream = stream if stream is not None else sys.stderr
        isatty = getattr(self.stream, "isatty", None)
        self.interactive = bool(isatty and isatty()) if interactive is None else interactive
        self.now = now
        self.start = now()

    def say(self, message: str) -> None:
        print(f"autotune: {self.command}: {message}", file=self.stream, flush=True)

    def step(self, done: int, total: int, name: str) -> None:
        measuring = next((text for prefix, text in MEASURING.items() if name.startswith(prefix)), None)
        if done == 0:
            if name in MEASURING or measuring is None:     # a measurement's first line names it alone
                self.start = self.now()
                self.stream.write(f"autotune: {measuring.format(total=total)}\n" if measuring else
                                  f"autotune: running {total} kerncraft analyses (ECM, OSACA, layer conditions or "
                                  f"cache simulation)\n")
            else:
                self._line(f"autotune: {name}", False)
            self.stream.flush()
            return
        left = time_left(self.now() - self.start, done, total)
        text = f"autotune: {name} [{done}/{total}], {total - done} left" if measuring else \
            f"autotune: kerncraft [{done}/{total}] {name} done, {total - done} left"
        if done < total and left is not None:
            text += f", about {clock(left)} to go"
        self._line(text, done >= total)

    def _line(self, text: str, last: bool) -> None:
        if self.interactive:   # rewrite the line in place; the last one stays
            self.stream.write("\r" + text + "\x1b[K" + ("\n" if last else ""))
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

"""Progress of the analyses: one line rewritten in place on a terminal, with the time left;
a plain line per event elsewhere."""
import io

from autotune.cli.progress import ConsoleProgress, clock, time_left


class Clock:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


def test_time_left_is_the_rate_so_far():
    assert time_left(10.0, 0, 5) is None
    assert time_left(10.0, 2, 5) == 15.0
    assert time_left(10.0, 5, 5) == 0.0
    assert clock(12.4) == "12 s" and clock(65) == "1 min 05 s" and clock(-3) == "0 s"


def run(interactive: bool) -> str:
    out, now = io.StringIO(), Clock()
    progress = ConsoleProgress("rank", out, interactive=interactive, now=now)
    progress.step(0, 4, "")
    for i, name in enumerate(("a@MEM", "b@MEM", "c@L3", "d@L2"), start=1):
        now.t += 6.0
        progress.step(i, 4, name)
    return out.getvalue()


def test_terminal_rewrites_one_line_with_the_time_left():
    text = run(interactive=True)
    lines = text.split("\n")
    assert lines[0] == "autotune: running 4 kerncraft analyses (ECM, OSACA, layer conditions or cache simulation)"
    # every update returns to the start of the same line and clears what a longer one left
    updates = lines[1].split("\r")[1:]
    assert len(updates) == 4 and all(u.endswith("\x1b[K") for u in updates)
    assert "[1/4] a@MEM done, 3 left, about 18 s to go" in updates[0]
    assert "[3/4] c@L3 done, 1 left, about 6 s to go" in updates[2]
    assert "[4/4] d@L2 done, 0 left" in updates[3] and "to go" not in updates[3]
    assert text.endswith("\n") and text.count("\n") == 2      # the finished line stays


def test_not_a_terminal_prints_a_plain_line_per_event():
    lines = run(interactive=False).splitlines()
    assert len(lines) == 5 and not any("\r" in ln or "\x1b" in ln for ln in lines)
    assert lines[2] == "autotune: kerncraft [2/4] b@MEM done, 2 left, about 12 s to go"


def test_a_stream_that_is_no_terminal_is_detected():
    assert ConsoleProgress("rank", io.StringIO()).interactive is False


def test_one_progress_object_tells_steps_and_lines():
    """The command line's says a line prefixed with its command; the default tells nothing; the
    API's two callables become one object (autotune.progress)."""
    from autotune.progress import SILENT, Callbacks, Progress, progress_of
    out = io.StringIO()
    ConsoleProgress("tune", out, interactive=False).say("[1/2] lc=jli: build")
    assert out.getvalue() == "autotune: tune: [1/2] lc=jli: build\n"
    SILENT.step(0, 3, "")
    SILENT.say("nothing")
    steps, lines = [], []
    p = progress_of(lambda *a: steps.append(a), lines.append)
    p.step(1, 2, "x@L1")
    p.say("hello")
    assert isinstance(p, Callbacks) and steps == [(1, 2, "x@L1")] and lines == ["hello"]
    assert progress_of() is SILENT and progress_of(p) is p and isinstance(progress_of(None, print), Progress)
    assert progress_of(None, p) is p          # a Progress given where a say callable goes (ingest, learn, ...)
    progress_of(lines.append).say("to no one")       # only the step callable: lines go nowhere
    assert lines == ["hello"]

"""report.sweep.sweep_csv writes what csv.writer writes for every row of a sweep (its fast path
formats a scenario's first fields once and a column of seconds at a time): rows of one
scenario that share a value, 0.0 beside -0.0, a failed prediction, and a name that needs quoting."""
import csv
import io

import pytest

from autotune.report import sweep as rendering
from autotune.report.sweep import sweep_csv
from autotune.results.frames import configuration
from autotune.results.rank import Columns
from autotune.results.sweep import FIELDS, Block


class _Variant:
    def __init__(self, name):
        self.name, self.comm = name, configuration(name)["comm"]

    def fields(self):
        return configuration(self.name)


class _Sweep:
    """A sweep's blocks as SweepResult.column_blocks gives them: a scenario's rows as columns
    where every row has a prediction and the pre-selected rows come first."""

    def __init__(self, blocks):
        self._blocks = blocks
        self.columned = 0
        self._variants = {}       # one object per variant, as a sweep's layouts hold them

    def _variant(self, name):
        return self._variants.setdefault(name, _Variant(name))

    def column_blocks(self):
        for head, tails in self._blocks:
            cols = None
            pre = [t[7] for t in tails]
            if all(t[3] is not None for t in tails) and pre == sorted(pre, reverse=True):
                cols = Columns([self._variant(t[1]) for t in tails], *([t[k] for t in tails] for k in range(3, 7)), sum(pre))
                self.columned += 1
            yield Block(head, cols, lambda scheme: "datasheet", tails[0][11], False, lambda tails=tails: tails)


def _dims(name):
    return tuple(configuration(name).values())


def _row(rank, name, total, comm, barrier=1.5e-06, bound=0.00125, pre=True):
    return (rank, name, _dims(name), total, total - comm, comm, barrier, pre,
            "datasheet", False, "", bound, total / bound if bound else None)


def test_the_csv_is_what_csv_writer_writes(monkeypatch):
    a = ("heat2d", "radauIIA7", "haswell", 1000000, 999999, 2, 8)
    b = ("wave1d", "radauIIA7", "a machine, mine", 4000, 4000, 1, 2)     # quoted by csv.writer
    blocks = [
        (a, [_row(1, "lc=jli,comm=neighbour", 0.004, 0.001), _row(2, "lc=jl,comm=allgather", 0.005, 0.001),
             _row(3, "lc=ij,comm=neighbour,pipe=wavefront", 0.006, 0.0, barrier=0.0),
             _row(4, "lc=lj,comm=neighbour", 0.007, -0.0, barrier=-0.0, pre=False),
             (5, "lc=ji,comm=allgather", _dims("lc=ji,comm=allgather"), None, None, None, None, False, "datasheet",
              False, "rhs.x;lc.y", 0.00125, None)]),
        (a[:3] + (2000000, 2000000, 2, 8), [_row(1, 'lc=jl,comm="odd"', 0.004, 0.0),      # quoted, in a plain block
                                            _row(2, "lc=jli,comm=neighbour", float("nan"), 0.0),
                                            _row(3, "lc=lj,comm=neighbour", float("inf"), 0.0, barrier=float("-inf"))]),
        (b, [_row(1, "lc=jli,comm=neighbour", 0.004, 0.0), _row(2, 'lc=jl,comm="odd"', 0.004, 0.0)]),
        (a[:3] + (4000000, 4000000, 1, 8), [_row(1, "lc=jli,comm=neighbour", 0.25, 0.0, bound=0.0)]),
        (a[:3] + (8000000, 8000000, 1, 8), [_row(1, "lc=jli,comm=neighbour", 0.5, 0.0, barrier=-0.0),
                                            _row(2, "lc=jl,comm=allgather", 0.5, -0.0, barrier=0.0),
                                            _row(3, "lc=ij,comm=neighbour", 0.75, 0.0, pre=False),
                                            _row(4, "lc=lj,comm=neighbour", 1.0 / 3, 0.1, pre=False)]),
    ]
    expected = io.StringIO()
    w = csv.writer(expected, lineterminator="\n")
    w.writerow(FIELDS)
    for head, tails in blocks:
        for t in tails:
            w.writerow((*head, *t[:2], *t[2], *t[3:]))      # a row: the variant's dimensions after its name
    fast = []
    lines = rendering._csv_lines
    monkeypatch.setattr(rendering, "_csv_lines", lambda *a: fast.append(lines(*a)) or fast[-1])
    sweep = _Sweep(blocks)
    assert "".join(sweep_csv(sweep)) == expected.getvalue()
    # four scenarios come as columns; one of them is written a column at a time, the others
    # (quoting, no bound) and the one with a failed row through csv.writer
    assert sweep.columned == 4 and sum(x is not None for x in fast) == 1
    assert "-0.0" in expected.getvalue() and '"lc=jl,comm=""odd"""' in expected.getvalue()
    assert ",nan," in expected.getvalue() and ",-inf," in expected.getvalue()
    assert ',"lc=jl,comm=""odd""",jl,"""odd""",' in expected.getvalue()      # a dimension value quoted too


def test_a_renderer_that_yields_pieces_is_written_as_it_makes_them(capsys):
    """A renderer registered with chunks=True (a sweep's CSV) is joined by render() and streamed by
    render_chunks(); the command line writes each piece as it comes and ends on one newline."""
    from autotune.cli.commands import emit, emit_chunks
    from autotune.report.registry import CHUNKED, RENDERERS, renderer
    from autotune.report.render import render, render_chunks

    class Pieces:
        pass

    made = []

    def pieces(result):
        for text in ("a,b\n", "", "1,2"):
            made.append(text)
            yield text

    try:
        renderer(Pieces, "csv", chunks=True)(pieces)
        stream = render_chunks(Pieces(), "csv")
        assert next(stream) == "a,b\n" and made == ["a,b\n"]          # the rest not made yet
        assert list(stream) == ["", "1,2"]
        assert render(Pieces(), "csv") == "a,b\n1,2"
        emit_chunks(render_chunks(Pieces(), "csv"))
        emit(render(Pieces(), "csv"))
        assert capsys.readouterr().out == "a,b\n1,2\n" * 2
    finally:               # the registry is the process's: no other test may see this type
        RENDERERS.pop((Pieces, "csv"), None)
        CHUNKED.discard((Pieces, "csv"))


@pytest.mark.parametrize("selected_only", [False, True])
def test_a_real_sweeps_csv_is_what_csv_writer_writes_of_its_rows(replay_store, selected_only):
    """SweepResult.column_blocks, RankResult.columns and ScenarioRows.columns on a real sweep:
    the CSV is csv.writer's of blocks(), row for row."""
    import autotune
    res = autotune.sweep("heat2d", n="1e5:3.6e7:3log", nodes="1,8", store=replay_store,
                         selected_only=selected_only)
    expected = io.StringIO()
    w = csv.writer(expected, lineterminator="\n")
    w.writerow(FIELDS)
    for head, tails in res.blocks():
        for t in tails:
            w.writerow((*head, *t[:2], *t[2], *t[3:]))
    assert "".join(sweep_csv(res)) == expected.getvalue()
    assert len(expected.getvalue().splitlines()) > 6 * (1 if selected_only else 100)

"""report.sweep.sweep_csv writes what csv.writer writes for every row of a sweep (its fast path
formats a scenario's first fields once and each float's repr once per scenario): rows of one
scenario that share a value, 0.0 beside -0.0, a failed prediction, and a name that needs quoting."""
import csv
import io

from autotune.report.sweep import sweep_csv
from autotune.results.frames import configuration
from autotune.results.sweep import FIELDS


class _Sweep:
    def __init__(self, blocks):
        self._blocks = blocks

    def blocks(self):
        return iter(self._blocks)


def _dims(name):
    return tuple(configuration(name).values())


def _row(rank, name, total, comm, barrier=1.5e-06, bound=0.00125, pre=True):
    return (rank, name, _dims(name), total, total - comm, comm, barrier, pre,
            "datasheet", False, "", bound, total / bound if bound else None)


def test_the_csv_is_what_csv_writer_writes():
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
    ]
    expected = io.StringIO()
    w = csv.writer(expected, lineterminator="\n")
    w.writerow(FIELDS)
    for head, tails in blocks:
        for t in tails:
            w.writerow((*head, *t[:2], *t[2], *t[3:]))      # a row: the variant's dimensions after its name
    assert sweep_csv(_Sweep(blocks)) == expected.getvalue()
    assert "-0.0" in expected.getvalue() and '"lc=jl,comm=""odd"""' in expected.getvalue()
    assert ",nan," in expected.getvalue() and ",-inf," in expected.getvalue()
    assert ',"lc=jl,comm=""odd""",jl,"""odd""",' in expected.getvalue()      # a dimension value quoted too

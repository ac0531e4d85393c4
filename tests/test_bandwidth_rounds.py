"""calibrate --node measures each bandwidth until its figure, the upper quartile of the runs,
settles (specs.hostmachine, tools.hostprobe): more rounds while its 95 % interval is wide, and the
interval and the runs kept."""
from __future__ import annotations

from pathlib import Path

import pytest

from autotune.progress import Callbacks
from autotune.specs import hostmachine as hm
from autotune.specs import runstats as rs


def test_the_interval_of_a_median_is_narrow_for_quiet_runs_and_wide_for_a_busy_spell():
    quiet = [30.0, 30.4, 29.9, 30.2, 30.1]
    lo, hi = rs.interval(quiet)
    assert 29.9 <= lo <= 30.1 <= hi <= 30.4 and rs.settled({"copy": quiet})
    busy = [30.0, 30.5, 29.8, 31.0, 90.0, 45.0]       # one fast and one slow spell among six
    assert not rs.settled({"copy": quiet, "load": busy})
    assert not rs.settled({"load": busy}, statistic=rs.attainable)
    assert rs.interval(busy) == rs.interval(busy)       # a fixed seed
    lo, hi = rs.interval(quiet, rs.attainable)         # the interval of the statistic given
    assert lo <= rs.attainable(quiet) == 30.2 <= hi


def test_the_figure_written_is_the_upper_quartile_which_a_busy_minute_moves_least():
    quiet = [30.0, 30.4, 29.9, 30.2, 30.1]
    assert rs.attainable(quiet) == 30.2 and rs.attainable([7.0]) == 7.0
    assert rs.attainable([1.0, 2.0, 3.0, 4.0]) == 3.25          # linear between the sorted runs
    # the same minute with a neighbour that slowed three runs of five: the median falls 6 %, the
    # figure written does not move
    busy = [28.2, 30.4, 28.4, 30.2, 28.3]
    assert rs.median_spread(busy)[0] / rs.median_spread(quiet)[0] < 0.95
    assert rs.attainable(busy) == rs.attainable(quiet)
    # a single fast spell does not set it (the best run would)
    assert rs.attainable([30.0, 30.5, 29.8, 31.0, 90.0]) == 31.0
    assert rs.attainable_spread([30.0, 30.5, 29.8, 31.0, 90.0]) == (31.0, (90.0 - 29.8) / 30.5)
    with pytest.raises(ValueError):
        rs.attainable([])


def test_a_point_gets_more_rounds_until_its_median_settles(monkeypatch):
    from autotune.tools import hostprobe
    rounds = {"copy": iter([30.0, 31.0, 30.5, 30.2, 30.8] + [30.4] * 20),
              "load": iter([20.0, 40.0, 21.0, 39.0, 30.0] + [30.0] * 20)}
    monkeypatch.setattr(hostprobe, "build_stream", lambda folder, cc="gcc": Path("stream"))
    monkeypatch.setattr(hostprobe, "stream_has_nt", lambda exe: True)
    monkeypatch.setattr(hostprobe, "working_sets", lambda host: {"L1": 16384})
    monkeypatch.setattr(hostprobe, "KERNELS", ("copy", "load"))
    monkeypatch.setattr(hostprobe, "stream_gbps", lambda exe, kernel, ws, t, s, row=None: next(rounds[kernel]))
    host = hm.HostInfo("cpu", "GenuineIntel", "6", "1", 1, 2e9, (hm.Cache(1, 32768, 8, 64, 1),))
    seen = []
    got = hostprobe.measure(host, Callbacks(say=seen.append))["L1"]
    copy, load = got["copy"][0], got["load"][0]
    assert copy.runs == load.runs > rs.REPEATS           # load's first five did not settle
    assert copy.runs <= rs.MAX_REPEATS
    assert load.interval[0] <= load.gbps <= load.interval[1]
    assert load.values[:5] == (20.0, 40.0, 21.0, 39.0, 30.0) and len(load.values) == load.runs
    assert load.gbps == rs.attainable(list(load.values))
    assert (load.interval[1] - load.interval[0]) / load.gbps <= rs.STABLE or load.runs == rs.MAX_REPEATS
    assert "95 % intervals" in seen[-1]

"""calibrate --node measures each bandwidth until its median settles (specs.hostmachine,
tools.hostprobe): more rounds while a median's 95 % interval is wide, and the interval kept."""
from __future__ import annotations

from pathlib import Path

from autotune.progress import Callbacks
from autotune.specs import hostmachine as hm


def test_the_interval_of_a_median_is_narrow_for_quiet_runs_and_wide_for_a_busy_spell():
    quiet = [30.0, 30.4, 29.9, 30.2, 30.1]
    lo, hi = hm.median_interval(quiet)
    assert 29.9 <= lo <= 30.1 <= hi <= 30.4 and hm.settled({"copy": quiet})
    busy = [30.0, 30.5, 29.8, 31.0, 90.0, 45.0]       # one fast and one slow spell among six
    assert not hm.settled({"copy": quiet, "load": busy})
    assert hm.median_interval(busy) == hm.median_interval(busy)       # a fixed seed


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
    assert copy.runs == load.runs > hm.REPEATS           # load's first five did not settle
    assert copy.runs <= hm.MAX_REPEATS
    assert load.interval[0] <= load.gbps <= load.interval[1]
    assert (load.interval[1] - load.interval[0]) / load.gbps <= hm.STABLE or load.runs == hm.MAX_REPEATS
    assert "95 % intervals" in seen[-1]

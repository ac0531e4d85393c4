"""calibrate --raw is read by Extra-P's own JSON Lines reader (its parameters from a file's first
line, on every line: the operations' p and bytes and the barrier's threads go to two files).
Extra-P pins numpy below 2, so it cannot be an extra beside ours: the fixture installs the
reader's package and the four it imports beyond ours, without their dependencies, into a folder of the
test run (from the package index), and the test imports it from there."""
import json
import subprocess
import sys
import warnings

import pytest

from autotune.pipeline.calibrate import raw_files

# Extra-P and what its JSON Lines reader imports beyond our own packages (their own pins); 4.2.5:
# 4.2.1 does not import on Python 3.13 (an enum of its string formats)
READER = ["extrap==4.2.5", "tqdm>=4.47,<5", "marshmallow>=3.7,<4", "pycubexr>=1.2.3,<3,!=2.0.0", "packaging>=20"]


@pytest.fixture(scope="session")
def extrap_reader(tmp_path_factory):
    target = tmp_path_factory.mktemp("extrap")
    done = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target),
                           *READER], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"installing Extra-P's reader: {done.stderr[-2000:]}"
    sys.path.insert(0, str(target))

    def read(path: str):
        # Extra-P's own deprecation warnings are not ours to report, and their classes live in a
        # package that only this folder holds (a parallel run's controller could not load them)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return read_jsonlines_file(path)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from extrap.fileio.file_reader.jsonlines_file_reader import read_jsonlines_file
        yield read
    finally:
        sys.path.remove(str(target))


def _record(callpath: str, params: dict, times: list[float]) -> dict:
    # what benchmarks_mpi/harness.py writes for one point (its record), with a placement
    return {"params": params, "callpath": callpath, "metric": "time", "value": times, "median": times[1],
            "reps": len(times), "placement": {"nodes": ["n1"], "packed": True}}


@pytest.mark.install
def test_extrap_reads_what_calibrate_raw_writes(extrap_reader, tmp_path):
    raw = {op: [_record(op, {"p": p, "bytes": b}, [1e-6 * p + 1e-9 * b * k for k in (1.0, 1.1, 1.2)])
                for p in (2, 4, 8, 16, 32) for b in (8, 64, 512, 4096, 32768)]
           for op in ("allgather", "neighbour")}
    raw["barrier"] = [_record("barrier", {"threads": t}, [2e-7 * t, 2.1e-7 * t, 2.2e-7 * t]) for t in (1, 2, 4, 8, 16)]
    files = raw_files(raw, tmp_path / "raw.jsonl")
    assert list(files) == [tmp_path / "raw.jsonl", tmp_path / "raw.barrier.jsonl"]
    for path, records in files.items():
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
    ops = extrap_reader(str(tmp_path / "raw.jsonl"))
    assert [p.name for p in ops.parameters] == ["p", "bytes"]
    assert sorted(c.name for c in ops.callpaths) == ["allgather", "neighbour"]
    assert len(ops.coordinates) == 25 and [m.name for m in ops.metrics] == ["time"]
    barrier = extrap_reader(str(tmp_path / "raw.barrier.jsonl"))
    assert [p.name for p in barrier.parameters] == ["threads"] and len(barrier.coordinates) == 5
    # what the file used to be: the operations and the barrier in one, which Extra-P refuses
    both = tmp_path / "both.jsonl"
    both.write_text("".join(json.dumps(r) + "\n" for records in raw.values() for r in records))
    with pytest.raises(Exception, match="Missing property"):
        extrap_reader(str(both))

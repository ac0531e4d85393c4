"""Build and run the barrier-event benchmark for each thread count: a barrier event of the
solver's step is the end of one parallel region and the start of the next (barrier.c).

    python -m benchmarks_mpi.barrier --threads 1,2,4,8 [--cc gcc] [--out f.jsonl]

The C program (barrier.c beside this file) is compiled into a temporary
directory; every thread count is one run with OMP_NUM_THREADS set.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

SOURCE = Path(__file__).with_name("barrier.c")


def build(cc: str, workdir: Path) -> Path:
    exe = workdir / "barrier"
    subprocess.run([cc, "-O2", "-fopenmp", str(SOURCE), "-o", str(exe)], check=True,
                   capture_output=True, text=True)
    return exe


def run(exe: Path, threads: int, reps: int = 21, inner: int = 2000) -> dict:
    """One run's record: `threads` threads, one bound to each CPU (as calibrate --node binds its
    benchmarks), so calibrate --node and --threads measure alike."""
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OMP_PROC_BIND="close", OMP_PLACES="threads")
    out = subprocess.run([str(exe), str(reps), str(inner)], check=True, capture_output=True,
                         text=True, env=env, timeout=120)
    return json.loads(out.stdout)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--cc", default="gcc")
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        exe = build(args.cc, Path(tmp))
        for t in (int(x) for x in args.threads.split(",")):
            rec = run(exe, t)
            line = json.dumps(rec)
            if args.out:
                with open(args.out, "a") as f:
                    f.write(line + "\n")
            else:
                print(line, flush=True)
            print(f"barrier threads={t} median {rec['median']:.3e} s", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

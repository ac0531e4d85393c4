"""The in-core time of a kernel part measured on this host: the edge that builds and runs it.

A part is compiled exactly as kerncraft analyses it: kerncraft's own kernel function of the
part's code (the analysis' `restrict` pointers, the stage count a literal), compiled by the
machine file's compiler with the file's flags.  A harness of ours calls it on arrays of the
sizes the constants give (a working set in L1: the part's L1 regime), after kerncraft's own
declarations and initialisation of those arrays, and times calls until a batch lasts long
enough.  `build` runs in the analysis workers (kerncraft set up once per process); `time_all`
runs the built harnesses round-robin in this process, so that a slow spell of a shared machine
touches every part alike, and keeps the median per part.  What the seconds mean for the model
is model.incore's (pure).
"""
from __future__ import annotations

import os
import subprocess
import textwrap
from importlib import resources
from pathlib import Path
from typing import Callable

from autotune.errors import ToolError

HARNESS_VERSION = 3     # 2: timed by the thread's CPU time; 3: later rounds start at the calls found
# kerncraft's main-program template with its benchmark markers replaced by our timer: the same
# declarations, initialisation and dummy calls (which keep the compiler from dropping the work),
# calls doubled until a batch lasts MIN_S, one warm-up batch first; given the calls a batch took
# before ($AUTOTUNE_CALLS: the harness's previous round), a quarter of them warm up and the batch
# starts there (doubled while shorter than MIN_S): 1.25-2.5 MIN_S a run instead of 3-6
_TEMPLATE = textwrap.dedent("""
    #include <stdlib.h>
    #include <stdio.h>
    #include "kerncraft.h"
    #include "kernel.h"

    void dummy(void *);
    extern int var_false;
    double at_now(void);

    int main(int argc, char **argv) {
      DECLARE_CONSTS;
      DECLARE_ARRAYS;
      DECLARE_INIT_SCALARS;
      INIT_ARRAYS;
      DUMMY_CALLS;
      double min_s = atof(argv[1]);
      const char *hint = getenv("AUTOTUNE_CALLS");
      long calls = hint ? atol(hint) : 1;
      if (calls < 1) calls = 1;
      double t = 0.0;
      if (hint) {
        for (long r = 0; r < calls / 4 + 1; ++r) {
          KERNEL_CALL;
          DUMMY_CALLS;
        }
      }
      for (int warm = hint ? 0 : 1; warm >= 0; --warm) {
        for (;;) {
          double t0 = at_now();
          for (long r = 0; r < calls; ++r) {
            KERNEL_CALL;
            DUMMY_CALLS;
          }
          t = at_now() - t0;
          if (t >= min_s || calls > 1000000000) break;
          calls = calls * 2;
        }
      }
      printf("%.9e %ld\\n", t / calls, calls);
      return 0;
    }
    """)
_TIMER = textwrap.dedent("""
    #define _POSIX_C_SOURCE 199309L   /* clock_gettime under -std=c99 (else only -fopenmp brought it) */
    #include <time.h>
    double at_now(void) {
        struct timespec t;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
        return t.tv_sec + 1e-9 * t.tv_nsec;
    }
    """)


def build(task: dict) -> dict:
    """Build one part's harness in task["folder"].  task: name, code, machine_path, constants
    {name: int}.  Returns {"ok": True, "exe", "iterations", "elements_per_cacheline"} (the loop
    nest's iterations at these constants, and kerncraft's iterations per cache line of work) or
    {"ok": False, "error"}.  Runs where kerncraft is set up (kerncraft_backend.init_worker)."""
    import contextlib
    import io

    from autotune.tools import kerncraft_backend
    if not kerncraft_backend._STATE:
        kerncraft_backend.init_worker()
    folder = Path(task["folder"])
    folder.mkdir(parents=True, exist_ok=True)
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            return _build(task, folder)
    except (SystemExit, Exception) as e:       # kerncraft reports failures with sys.exit
        text = " ".join((out.getvalue() or str(e) or type(e).__name__).split())
        return {"ok": False, "error": f"{type(e).__name__}: {text}"[:400]}


def _build(task: dict, folder: Path) -> dict:
    from autotune.tools import kerncraft_backend
    state = kerncraft_backend._STATE
    kernel_file = folder / "kernel.c"
    kernel_file.write_text(task["code"])
    argv = ["-p", "ECM", "-m", task["machine_path"], str(kernel_file)]
    args = state["parser"].parse_args(argv)
    args.code_file.close()
    args.machine.close()
    machine = state["MachineModel"](task["machine_path"], args=args)

    class Timed(state["Kernel"]):
        CODE_TEMPLATE = _TEMPLATE

    kernel = Timed(task["code"], filename=str(kernel_file), machine=machine, keep_intermediates=True)
    for name, value in task["constants"].items():
        kernel.set_constant(name, value)
    function, _ = kernel.get_kernel_code(openmp=False)
    kernel.get_kernel_header()                 # kernel.h, beside the function's file
    main, _ = kernel.get_main_code()
    timer = folder / "at_timer.c"
    timer.write_text(_TIMER)
    headers = str(Path(str(resources.files("kerncraft") / "headers")))
    compiler, flags = machine.get_compiler()
    exe = folder / "incore"
    common = [compiler, *flags, "-std=c99", "-I" + headers, "-I" + os.path.dirname(os.path.abspath(function))]
    for src, obj in ((function, "kernel.o"), (main, "main.o"), (str(timer), "timer.o"),
                     (os.path.join(headers, "dummy.c"), "dummy.o")):
        _run([*common, "-c", src, "-o", str(folder / obj)])
    _run([compiler, *flags, *(str(folder / o) for o in ("kernel.o", "main.o", "timer.o", "dummy.o")),
          "-o", str(exe)])
    consts = [str(task["constants"][c.name]) for c in kernel.constants]
    iterations = int(kernel.subs_consts(kernel.iteration_length()))
    per_line = int(float(machine["cacheline size"])) // kernel.datatypes_size[kernel.datatype]
    return {"ok": True, "exe": str(exe), "args": consts, "iterations": iterations, "elements_per_cacheline": per_line}


def _run(cmd: list[str]) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise ToolError(f"{' '.join(cmd[:2])} ...: {proc.stderr.strip()[:300]}")


def run_once(built: dict, min_s: float, calls: int | None = None) -> tuple[float, int]:
    """(seconds per call, calls) of one harness run: the last batch, which lasted min_s; calls:
    what a batch took in an earlier run (the batch starts there, after a short warm-up)."""
    env = dict(os.environ, OMP_NUM_THREADS="1")
    env.pop("AUTOTUNE_CALLS", None)           # only ours: a value left in the environment is not a hint
    if calls:
        env["AUTOTUNE_CALLS"] = str(int(calls))
    proc = subprocess.run([built["exe"], repr(min_s), *built["args"]], capture_output=True, text=True,
                          timeout=120, env=env)
    if proc.returncode != 0:
        raise ToolError(f"in-core harness {built['exe']} failed: {proc.stderr.strip()[:300]}")
    seconds, took = proc.stdout.split()[:2]
    return float(seconds), int(took)


def time_all(built: dict[str, dict], rounds: int, min_s: float,
             on_round: Callable[[int], None] | None = None, max_rounds: int | None = None,
             settled: Callable[[dict[str, list[float]]], bool] | None = None
             ) -> tuple[dict[str, list[float]], dict[str, str]]:
    """Seconds per call of each harness, `rounds` runs each, round-robin over the harnesses, then
    more rounds (up to max_rounds) while settled(runs) says some median is not yet known; and why
    each harness that failed a run failed (it runs no more; the others go on); on_round(round)
    after each round."""
    runs: dict[str, list[float]] = {k: [] for k in built}
    calls: dict[str, int] = {}
    failed: dict[str, str] = {}
    def more(done: int) -> bool:
        if done < rounds:
            return True
        live = {k: v for k, v in runs.items() if k not in failed and v}
        return done < (max_rounds or rounds) and settled is not None and not settled(live)

    done = 0
    while more(done):
        done += 1
        for key, b in built.items():
            if key in failed:
                continue
            try:
                seconds, calls[key] = run_once(b, min_s, calls.get(key))
                runs[key].append(seconds)
            except (ToolError, subprocess.SubprocessError, OSError, ValueError, IndexError) as e:
                failed[key] = f"the harness failed: {' '.join(str(e).split())[:300]}"
        if on_round:
            on_round(done)
    return runs, failed

"""The one place that talks to kerncraft: an ECM analysis of one kernel part.

Runs inside long-lived worker processes (see runner.py): kerncraft and OSACA
are imported and set up once per process by `init_worker`, then `analyse` is
called once per kernel part, each in its own scratch directory (kerncraft's
on-disk cache does not key on -D constants).

What we change in kerncraft's behaviour, and why:
- The generated kernel function gets `restrict` pointers, as the solver has:
  without them gcc reloads coefficients and does not vectorise, and the
  analysed code would not be the code that runs.
- The store-pointer increment is ours: kerncraft's detector fails on
  base+index stores ("pointer_increment could not be detected"), and it
  assumes the assembly loop is the innermost source loop.  With the stage
  count a literal, gcc unrolls the short stage/summand loops completely and
  the assembly loop is the component loop j; one of its iterations then covers
  `unroll` source iterations per component, so the increment is scaled by it.
- OSACA's assembly parsers are built once per process instead of per call.
- kerncraft's ECM model and in-core model and OSACA's port model add floats with
  sum(), which compensates since Python 3.12: the same analysis would end in other
  last bits on 3.11 than on 3.12 (and a store shared between them would hold
  whichever ran first).  Their modules get autotune.arith's left-to-right sum, the
  one sum() was up to 3.11, so results are the same on every Python.
"""
from __future__ import annotations

import contextlib
import functools
import io
import os
import shutil
import tempfile
import traceback

_STATE: dict = {}


def init_worker() -> None:
    from kerncraft import incore_model, models
    from kerncraft.kerncraft import create_parser
    from kerncraft.kernel import KernelCode
    from kerncraft.machinemodel import MachineModel
    from kerncraft.models import ecm
    from osaca.semantics import arch_semantics

    from autotune.arith import ordered_sum
    from autotune.tools.asm import store_increment

    incore_model.get_parser = functools.lru_cache(maxsize=None)(incore_model.get_parser)
    for module in (ecm, incore_model, arch_semantics):
        module.sum = ordered_sum     # a module's global shadows the built-in sum()

    def make_increment(original):
        def pointer_increment(block):
            found = original(block)
            if found is None:
                found = store_increment([line.line for line in block])
            if found is None:
                return None
            return found * _STATE.get("unroll", 1)
        return staticmethod(pointer_increment)

    for isa_cls in (incore_model.x86, incore_model.AArch64):
        isa_cls.get_pointer_increment = make_increment(isa_cls.__dict__["get_pointer_increment"].__func__)
    # our increment replaces the user-level cache lookup as the last resort
    incore_model.find_increment_in_cache = lambda block, cache_file=None: None

    class RestrictKernel(KernelCode):
        def get_kernel_code(self, openmp=False, name="kernel"):
            path, lock = super().get_kernel_code(openmp=openmp, name=name)
            with open(path) as f:
                code = f.read()
            head, brace, body = code.partition("{")
            head = head.replace("double *", "double * restrict ")
            with open(path, "w") as f:
                f.write(head + brace + body)
            return path, lock

    _STATE.update(parser=create_parser(), models=models, MachineModel=MachineModel,
                  Kernel=RestrictKernel)


def _scalar(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return str(x)


def analyse(task: dict) -> dict:
    """Run kerncraft's ECM model (SIM cache predictor, OSACA) on one kernel part.

    task: name, code, machine_path, constants {name: int}, unroll, scratch.
    Returns a plain dict: {"ok": True, ...figures} or {"ok": False, "error", "log"}.
    """
    if not _STATE:
        init_worker()
    scratch = tempfile.mkdtemp(prefix=task["name"].replace("/", "_") + ".", dir=task["scratch"])
    kernel_file = os.path.join(scratch, "kernel.c")
    with open(kernel_file, "w") as f:
        f.write(task["code"])
    argv = ["-p", "ECM", "-m", task["machine_path"], kernel_file, "--cache-predictor", "SIM",
            "--incore", "OSACA", "--pointer-increment", "auto"]
    for k, v in task["constants"].items():
        argv += ["-D", k, str(v)]
    out = io.StringIO()
    _STATE["unroll"] = int(task.get("unroll", 1))
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            args = _STATE["parser"].parse_args(argv)
            machine = _STATE["MachineModel"](task["machine_path"], args=args)
            kernel = _STATE["Kernel"](task["code"], filename=kernel_file, machine=machine,
                                      keep_intermediates=True)
            for k, v in task["constants"].items():
                kernel.set_constant(k, v)
            model = _STATE["models"].ECM(kernel, machine, args, _STATE["parser"])
            model.analyze()
            res = model.results
    except (SystemExit, Exception) as e:  # kerncraft reports many failures with sys.exit
        log = os.path.join(scratch, "kerncraft.log")
        text = out.getvalue()
        if not isinstance(e, SystemExit):
            text += "\n" + traceback.format_exc()
        with open(log, "w") as f:
            f.write(text)
        lines = [ln for ln in text.strip().splitlines() if ln.strip()]
        reason = lines[-1] if lines else type(e).__name__
        for ln in lines:
            if "failed" in ln.lower() or "error" in ln.lower():
                reason = ln
                break
        return {"ok": False, "error": reason[:500], "log": log}
    finally:
        _STATE["unroll"] = 1
    # ECM = (overlapping terms..., (non-overlapping terms...)), names alike
    names, values = res["ECM Model Construction"], res["ECM"]
    terms = {f"{n} (overlapping)": float(v) for n, v in zip(names[:-1], values[:-1])}
    terms.update({n: float(v) for n, v in zip(names[-1], values[-1])})
    result = {
        "ok": True,
        "cy_per_cl": float(res["total cycles"]["cy/CL"]),
        "terms": terms,
        "t_comp": float(res["T_comp"]),
        "t_regl1": float(res["T_RegL1"]),
        "saturation_cores": _scalar(res.get("scaling cores")),
        "scaling_cy_per_cl": [float(p["performance"]["cy/CL"]) for p in res.get("scaling prediction", [])],
        "pointer_increment": int(res["pointer_increment"]),
        "unroll": int(task.get("unroll", 1)),
        "memory_bandwidth_kernel": str(res.get("memory bandwidth kernel", "")),
        "port_cycles": {str(k): float(v) for k, v in res["port cycles"].items()},
    }
    shutil.rmtree(scratch, ignore_errors=True)
    return result

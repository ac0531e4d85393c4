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
- What we change in kerncraft's assembly parsing and layer-condition predictor is in
  kerncraft_patches.
- kerncraft's ECM model and in-core model and OSACA's port model add floats with
  sum(), which compensates since Python 3.12: the same analysis would end in other
  last bits on 3.11 than on 3.12 (and a store shared between them would hold
  whichever ran first).  Their modules get autotune.arith's left-to-right sum, the
  one sum() was up to 3.11, so results are the same on every Python.
"""
from __future__ import annotations

import contextlib
import io
import inspect
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
    from autotune.tools import kerncraft_patches
    from autotune.tools.asm import store_increment

    missing = kerncraft_patches.missing_targets()
    if missing:
        raise RuntimeError(missing)
    kerncraft_patches.apply()
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

    for isa_cls in (incore_model.x86, incore_model.AArch64):    # a staticmethod, here or on a base class
        own = inspect.getattr_static(isa_cls, "get_pointer_increment")
        isa_cls.get_pointer_increment = make_increment(getattr(own, "__func__", own))
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


def analyse_part(task: dict) -> list[dict]:
    """kerncraft's ECM model (OSACA in-core, the cache predictor each regime names) of one kernel
    part in every regime asked for: the in-core half (compile, OSACA) once, the cache half per
    regime, each combined by kerncraft's own ECM rule.

    task: name, code, machine_path, unroll, scratch, regimes: [{label, constants {name: int},
    cache_predictor "SIM" | "LC", view (LC: codegen.dataview's text), view_constants (the view's
    own kerncraft constants, beside the part's)}].  Returns one plain dict per
    regime, in order: {"ok": True, ...figures, "cache_predictor": the one that ran} or
    {"ok": False, "error", "log"}.  Where kerncraft's layer-condition predictor refuses a view,
    the regime is simulated instead and says why (lc_refused).
    """
    if not _STATE:
        init_worker()
    scratch = tempfile.mkdtemp(prefix=task["name"].replace("/", "_") + ".", dir=task["scratch"])
    out = io.StringIO()
    _STATE["unroll"] = int(task.get("unroll", 1))
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            cpu = _incore(task, scratch)
    except (SystemExit, Exception) as e:  # kerncraft reports many failures with sys.exit
        return [_failed(out.getvalue(), e, scratch)] * len(task["regimes"])
    finally:
        _STATE["unroll"] = 1
    results = []
    for index, regime in enumerate(task["regimes"]):
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
                results.append(_regime(task, regime, cpu, os.path.join(scratch, f"r{index}")))
        except (SystemExit, Exception) as e:
            results.append(_failed(out.getvalue(), e, scratch))
    if all(r["ok"] for r in results):
        shutil.rmtree(scratch, ignore_errors=True)
    return results


def _kernel(code: str, folder: str, task: dict, predictor: str, constants: dict):
    """(kernel, machine model, options) of `code` analysed with `predictor`, the kernel file in
    its own folder: kerncraft keeps its intermediate files beside the kernel file and does not key
    them on the code."""
    os.makedirs(folder, exist_ok=True)
    kernel_file = os.path.join(folder, "kernel.c")
    with open(kernel_file, "w") as f:
        f.write(code)
    argv = ["-p", "ECM", "-m", task["machine_path"], kernel_file, "--cache-predictor", predictor,
            "--incore", "OSACA", "--pointer-increment", "auto"]
    for k, v in constants.items():
        argv += ["-D", k, str(v)]
    args = _STATE["parser"].parse_args(argv)
    args.code_file.close()          # argparse opened both; kerncraft reads them by name here
    args.machine.close()
    machine = _STATE["MachineModel"](task["machine_path"], args=args)
    kernel = _STATE["Kernel"](code, filename=kernel_file, machine=machine, keep_intermediates=True)
    for k, v in constants.items():
        kernel.set_constant(k, v)
    return kernel, machine, args


def _incore(task: dict, scratch: str):
    """The part's in-core analysis (its own code: what the solver runs)."""
    from kerncraft.models.ecm import ECMCPU
    kernel, machine, args = _kernel(task["code"], os.path.join(scratch, "code"), task, "SIM",
                                    task["regimes"][0]["constants"])
    cpu = ECMCPU(kernel, machine, args, _STATE["parser"])
    cpu.analyze()
    return cpu


class _Analysed:
    """An analysed half of the ECM model: kerncraft's ECM calls analyze() on both halves; this
    one has its results already."""

    def __init__(self, half, results=None):
        self._half = half
        self.results = half.results if results is None else results

    def analyze(self):
        return self.results

    def conv_cy(self, cy_cl):
        return self._half.conv_cy(cy_cl)


def _per_part_line(results: dict, unroll: int) -> dict:
    """The data half's cycles of a view (per cache line of the view's iterations, each `unroll`
    iterations of the part) per cache line of the part's own iterations."""
    out = dict(results)
    out["cycles"] = [(level, c / unroll) for level, c in results["cycles"]]
    for level, c in out["cycles"]:
        out[level] = c
    out["penalty"] = results.get("penalty", 0.0) / unroll
    return out


def _lines(predictor, machine, per: int) -> dict[str, float]:
    """The cache lines kerncraft's cache predictor moves across each interface below L1 ("L1-L2",
    ..., "L3-MEM"), loaded and stored together, per cache line of the part's work (`per`: the
    analysed loop's lines of work per one of the part's), as its ECM model counts them."""
    loads, stores = predictor.get_loads(), predictor.get_stores()
    names = [str(c["level"]) for c in machine["memory hierarchy"]]
    return {f"{names[i - 1]}-{names[i]}": (float(loads[i]) + float(stores[i])) / per for i in range(1, len(names))}


def _regime(task: dict, regime: dict, cpu, folder: str) -> dict:
    from kerncraft.models.ecm import ECM, ECMData
    constants, refused, predictor = regime["constants"], None, regime["cache_predictor"]
    data = lines = None
    if predictor == "LC":
        try:
            kernel, machine, args = _kernel(regime["view"], os.path.join(folder, "view"), task, "LC",
                                            {**constants, **regime.get("view_constants", {})})
            half = ECMData(kernel, machine, args, _STATE["parser"])
            half.analyze()
            data = _Analysed(half, _per_part_line(half.results, int(task.get("unroll", 1))))
            lines = _lines(half.predictor, machine, int(task.get("unroll", 1)))
        except ValueError as e:         # kerncraft: the layer conditions do not apply here
            refused, predictor = " ".join(str(e).split())[:300], "SIM"
    kernel, machine, args = _kernel(task["code"], os.path.join(folder, "code"), task, "SIM", constants)
    if data is None:
        data = ECMData(kernel, machine, args, _STATE["parser"])      # simulates the caches
    model = ECM.__new__(ECM)
    model.kernel, model.machine, model._args, model.verbose, model.results = kernel, machine, args, 0, None
    model._CPU, model._data = _Analysed(cpu), data
    model.analyze()
    result = _result(model.results, task)
    result["lines"] = lines if lines is not None else _lines(data.predictor, machine, 1)
    result["cache_predictor"] = predictor
    if refused:
        result["lc_refused"] = refused
    return result


def _result(res: dict, task: dict) -> dict:
    # ECM = (overlapping terms..., (non-overlapping terms...)), names alike
    names, values = res["ECM Model Construction"], res["ECM"]
    terms = {f"{n} (overlapping)": float(v) for n, v in zip(names[:-1], values[:-1])}
    terms.update({n: float(v) for n, v in zip(names[-1], values[-1])})
    return {
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


def _failed(text: str, e: BaseException, scratch: str) -> dict:
    log = os.path.join(scratch, "kerncraft.log")
    if not isinstance(e, SystemExit):
        text += "\n" + traceback.format_exc()
    with open(log, "a") as f:
        f.write(text)
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    reason = lines[-1] if lines else type(e).__name__
    for ln in lines:
        if "failed" in ln.lower() or "error" in ln.lower():
            reason = ln
            break
    return {"ok": False, "error": reason[:500], "log": log}

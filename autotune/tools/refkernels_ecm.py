"""The reference kernels analysed by kerncraft (the edge of model/refkernels.py): each streaming
kernel's ECM model against a machine file, at the working set the file's benchmark measured
each level with, on one core, combined by kerncraft under the file as written and under the
same file with its cache levels' `transfers overlap` flipped.

kerncraft is set up as for the kernel parts (kerncraft_backend.init_worker, once per worker
process of a small pool): per kernel, its in-core half (compile, OSACA) is made once, the data
half (the layer-condition predictor) once per level, and kerncraft's ECM combines them with
each file's memory hierarchy.
"""
from __future__ import annotations

import contextlib
import io
import os
import shutil
import tempfile
from pathlib import Path

from autotune.errors import ToolError
from autotune.model.refkernels import REFERENCE_KERNELS, RefKernel, Rule, flipped, rule_of, with_rule

_INCORE_FAILED = "incore"


def _load(path: Path):
    from autotune.storage.yamlfile import round_trip_yaml
    with open(path) as f:
        return round_trip_yaml().load(f)


def _combine(kernel, machine, args, cpu, data) -> tuple[float, dict]:
    """kerncraft's ECM of analysed halves under `machine`'s memory hierarchy: (cy/CL, results)."""
    from kerncraft.models.ecm import ECM

    from autotune.tools.kerncraft_backend import _Analysed
    model = ECM.__new__(ECM)
    model.kernel, model.machine, model._args, model.verbose, model.results = kernel, machine, args, 0, None
    model._CPU, model._data = _Analysed(cpu), _Analysed(data)
    model.analyze()
    return float(model.results["total cycles"]["cy/CL"]), model.results


def _terms(cpu_results: dict, data_results: dict) -> dict:
    return {"t_comp": float(cpu_results["T_comp"]), "t_regl1": float(cpu_results["T_RegL1"]),
            "transfers": [[str(lv), float(c)] for lv, c in data_results["cycles"]],
            "penalty": float(data_results.get("penalty", 0.0))}


def _reason(text: str, e: BaseException) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    said = next((ln for ln in lines if "error" in ln.lower() or "failed" in ln.lower()), None)
    return (said or str(e) or type(e).__name__)[:300]


def analyse_kernel(task: dict) -> dict:
    """One reference kernel in every level of the task: {level: {"terms", "as_written",
    "flipped"} or {"error"}}, or {_INCORE_FAILED: why} where its in-core analysis failed."""
    from kerncraft.models.ecm import ECMCPU, ECMData

    from autotune.tools import ecm_runner, kerncraft_backend as kb
    ecm_runner.init_worker_once()
    if ecm_runner._init_error is not None:
        return {_INCORE_FAILED: f"kerncraft cannot start: {ecm_runner._init_error}"}
    parser, spec = kb._STATE["parser"], {"machine_path": task["machine"]}
    folder = tempfile.mkdtemp(prefix=task["name"] + ".", dir=task["scratch"])
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            kernel, machine, args = kb._kernel(task["code"], os.path.join(folder, "code"), spec, "LC",
                                               task["incore_constants"])
            if task["pointer_increment"]:
                args.pointer_increment = task["pointer_increment"]
            cpu = ECMCPU(kernel, machine, args, parser)
            cpu.analyze()
    except (SystemExit, Exception) as e:   # kerncraft reports many failures with sys.exit
        return {_INCORE_FAILED: _reason(out.getvalue(), e)}
    other = None
    results = {}
    for level, constants in task["levels"]:
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
                kernel, machine, args = kb._kernel(task["view"], os.path.join(folder, level), spec, "LC", constants)
                data = ECMData(kernel, machine, args, parser)
                data.analyze()
                written, _ = _combine(kernel, machine, args, cpu, data)
                if other is None:
                    other = kb._STATE["MachineModel"](task["flipped"], args=args)
                flip, _ = _combine(kernel, other, args, cpu, data)
            results[level] = {"terms": _terms(cpu.results, data.results), "as_written": written, "flipped": flip}
        except (SystemExit, Exception) as e:
            results[level] = {"error": _reason(out.getvalue(), e)}
    shutil.rmtree(folder, ignore_errors=True)
    return results


def analyse(machine_file: Path, working_sets: dict[str, int], jobs: int | None = None,
            kernels: tuple[RefKernel, ...] = REFERENCE_KERNELS) -> tuple[dict, Rule]:
    """Every reference kernel at each level's working set (bytes, one thread) it was measured in,
    against the machine file: ({kernel: {level: {"terms", "as_written", "flipped"} | {"error"}}}, the file's rule).
    The analyses run in a pool of `jobs` processes (default: the available cores, at most one
    per kernel), so kerncraft's patches stay out of this process."""
    from concurrent.futures import BrokenExecutor, ProcessPoolExecutor

    from autotune.storage.yamlfile import dump_text, round_trip_yaml
    from autotune.tools.ecm_runner import local_workers
    data = _load(machine_file)
    rule = rule_of(data)
    scratch = tempfile.mkdtemp(prefix="autotune-refkernels-")
    try:
        other = Path(scratch) / "flipped" / machine_file.name    # the file's own name: kerncraft keys on it
        other.parent.mkdir()
        other.write_text(dump_text(round_trip_yaml(), with_rule(data, flipped(rule))))
        tasks = [{"name": k.name, "code": k.incore_code, "view": k.view, "pointer_increment": k.pointer_increment,
                  "incore_constants": k.incore_constants(), "machine": str(machine_file), "flipped": str(other),
                  "scratch": scratch,
                  "levels": [(lv, k.constants(ws)) for lv, ws in working_sets.items() if k.measured_in(lv)]}
                 for k in kernels]
        workers = local_workers(jobs, len(tasks))
        try:
            with ProcessPoolExecutor(max_workers=workers) as pool:
                found = dict(zip([k.name for k in kernels], pool.map(analyse_kernel, tasks)))
        except BrokenExecutor as e:
            raise ToolError(f"the reference kernels' analysis worker died ({e})") from None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    out = {}
    for name, levels in found.items():
        if _INCORE_FAILED in levels:
            kernel = next(k for k in kernels if k.name == name)
            out[name] = {lv: {"error": f"in-core analysis: {levels[_INCORE_FAILED]}"}
                         for lv in working_sets if kernel.measured_in(lv)}
        else:
            out[name] = levels
    return out, rule

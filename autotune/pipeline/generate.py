"""`generate`: every variant's kernel parts (the code kerncraft analyses), its full solver (the C
file `tune` builds) with the command that builds it, and a manifest, on disk."""
from __future__ import annotations

import shlex
from pathlib import Path

from autotune.codegen.parts import method_parts, step_rhs_parts
from autotune.codegen.solver import LIKWID_FLAGS, LIKWID_LIBS, generated_schemes, solver_source
from autotune.errors import CannotRun
from autotune.request.run import DEFAULT_FLAGS
from autotune.results.generate import GenerateResult
from autotune.specs.control import Control, estimate_order
from autotune.specs.ivp import load_ivp
from autotune.specs.machine import load_machine
from autotune.specs.method import load_method
from autotune.specs.stepvalues import step_form
from autotune.specs.variants import Variant, enumerate_variants, ivp_for, spaces
from autotune.storage.atomic import make_folder, write_json, write_text


def file_stem(name: str) -> str:
    """A variant name as a file name: lc=jli,comm=neighbour -> lc-jli_comm-neighbour."""
    return name.replace("=", "-").replace(",", "_")


def generate(ivp_name: str, method_name: str, out: Path, n: int | None = None,
             machine: str | None = None, likwid: bool = False, control: Control | None = None) -> GenerateResult:
    """Write every variant's kernel parts and solver (for system size n: the halo width is a literal;
    for the machine's caches: the tiles of fused sweeps, defaults without one).  likwid: each
    sweep of a solver is a LIKWID marker region, and its build command links LIKWID.  control:
    every solver chooses its steps within these tolerances (specs.control; None: a fixed step)."""
    ivp = load_ivp(ivp_name)
    method = load_method(method_name)
    if control is not None:
        estimate_order(method)
    target = load_machine(machine) if machine else None
    n = ivp.default_n if n is None else n
    ivp.size_value(n)
    extra, libs = (LIKWID_FLAGS, LIKWID_LIBS) if likwid else ((), ())
    for sub in ("kernels", "solvers"):
        make_folder(out / sub, "out")
    written, solvers = set(), 0
    paper = step_form(method, Variant("jli", "neighbour")).counts
    manifest = {"ivp": ivp.name, "method": method.name, "n": n,
                "note": "M is the number of components a node sweeps in the part's loop",
                "comm_phases_per_step": paper.comm_phases, "barriers_per_step": paper.barriers,
                "build": " ".join(["mpicc", DEFAULT_FLAGS, *extra, "solvers/<variant>.c -o <variant> -lm", *libs]),
                "run": "mpiexec -n <ranks> ./<variant> n size_parameter steps h warmup [output-file]",
                "variants": {}, "solvers": {}, "barriers": {}, "not_generated": {}}
    if control is not None:     # steps: accepted ones at most; h: the first step's proposal
        manifest["control"] = control.tolerances()
        manifest["run"] = "mpiexec -n <ranks> ./<variant> n size_parameter steps h warmup [output-file|- [t-end]]"
    if likwid:
        manifest["likwid"] = ("each sweep is a LIKWID marker region, named as the solver's JSON names the sweeps "
                              "(rhs, lc, au, copy, wavefront, sweep.*); measure one rank with: likwid-perfctr "
                              "-C 0-<threads - 1> -g MEM -m ./<variant> n size_parameter steps h warmup")
    can_build = set(generated_schemes())
    for v in enumerate_variants(spaces(ivp, control is not None)):
        step = step_form(method, v)
        counts = step.counts
        executions = dict(counts.executions, PACK=counts.comm_phases)
        parts = method_parts(step) + step_rhs_parts(ivp_for(ivp, v), method, step)   # the IVP as v stores it
        for p in parts:
            if p.name not in written:
                write_text(out / "kernels" / f"{p.name}.c", p.code, "out")
                written.add(p.name)
        manifest["variants"][v.name] = [{
            "part": p.name, "kernel": p.kernel, "file": f"kernels/{p.name}.c",
            "iterations_per_execution": f"{p.iterations_per_m:g} * M",
            "executions_per_step": executions[p.kernel],
        } for p in parts]
        manifest["barriers"][v.name] = counts.barriers
        if v.comm in can_build:
            try:
                source = solver_source(ivp, method, v, n, target, likwid, control)
            except CannotRun as e:       # no solver of it for this IVP: the manifest says why
                manifest["not_generated"][v.name] = str(e)
                continue
            stem = file_stem(v.name)
            write_text(out / "solvers" / f"{stem}.c", source, "out")
            manifest["solvers"][v.name] = {
                "file": f"solvers/{stem}.c",
                "build": " ".join(["mpicc", *shlex.split(DEFAULT_FLAGS), *extra, f"solvers/{stem}.c", "-o", stem,
                                   "-lm", *libs])}
            solvers += 1
    write_json(out / "variants.json", manifest, "out")
    return GenerateResult(ivp.name, method.name, str(out), n, len(written), solvers, list(manifest["variants"]),
                          dict(manifest["not_generated"]))

"""`generate`: every variant's kernel parts (the code kerncraft analyses) and a manifest, on disk."""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from autotune.codegen.parts import approx_update_parts, copy_part, lc_parts, pack_part, rhs_parts
from autotune.errors import InputError
from autotune.model.schedule import step_counts
from autotune.specs.ivp import load_ivp
from autotune.specs.method import load_method
from autotune.specs.variants import enumerate_variants


@dataclass
class GenerateResult:
    ivp: str
    method: str
    out: str
    parts: int
    variants: list[str]

    def to_dict(self) -> dict:
        return asdict(self)


def generate(ivp_name: str, method_name: str, out: Path) -> GenerateResult:
    """Write every variant's kernel parts (the code kerncraft analyses) and a manifest."""
    ivp = load_ivp(ivp_name)
    method = load_method(method_name)
    try:
        (out / "kernels").mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError(f"{out}: cannot create ({e.strerror})", field="out") from None
    counts = step_counts(method)
    shared = rhs_parts(ivp) + approx_update_parts(method) + [pack_part(method)]
    if "COPY" in counts.executions:
        shared.append(copy_part(method))
    executions = dict(counts.executions, PACK=counts.comm_phases)
    written = set()
    manifest = {"ivp": ivp.name, "method": method.name,
                "note": "M is the number of components a node sweeps in the part's loop",
                "comm_phases_per_step": counts.comm_phases, "barriers_per_step": counts.barriers,
                "variants": {}}
    for v in enumerate_variants(ivp.comm):
        parts = lc_parts(method, v.lc) + shared
        for p in parts:
            if p.name not in written:
                (out / "kernels" / f"{p.name}.c").write_text(p.code)
                written.add(p.name)
        manifest["variants"][v.name] = [{
            "part": p.name, "kernel": p.kernel, "file": f"kernels/{p.name}.c",
            "iterations_per_execution": f"{p.iterations_per_m:g} * M",
            "executions_per_step": executions[p.kernel],
        } for p in parts]
    (out / "variants.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return GenerateResult(ivp.name, method.name, str(out), len(written), list(manifest["variants"]))

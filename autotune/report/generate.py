"""Renderers of a GenerateResult: the line `generate` prints, and its JSON."""
from __future__ import annotations

from autotune.report.registry import renderer
from autotune.report.text import json_text
from autotune.results.generate import GenerateResult


@renderer(GenerateResult, "table")
def generate_table(res: GenerateResult) -> str:
    cannot = f"; {len(res.not_generated)} the IVP cannot run, without a solver (variants.json: not_generated)" \
        if res.not_generated else ""
    return (f"wrote {res.parts} kernel parts and {res.solvers} solvers (n = {res.n:,}) for {len(res.variants)} "
            f"variants of {res.ivp} to {res.out} (variants.json: parts, executions, build commands){cannot}\n")


@renderer(GenerateResult, "json")
def generate_json(res: GenerateResult) -> str:
    return json_text(res)

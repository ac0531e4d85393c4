"""The `in-core measured` section of a machine file (pure): on which CPU the kernel parts' in-core
times are measured, and when the measurement replaces the port model's figure (model.incore)."""
from __future__ import annotations

from autotune.specs.cpus import CpuId

# the measurement replaces a native port model's figure where the two differ by more than this
TOLERANCE = 0.15


def cpu_key(cpu: CpuId) -> str:
    """The CPU a measurement holds for: vendor, family and model on x86, implementer and part on
    ARM (not the stepping, nor the OS's model name)."""
    if cpu.isa == "aarch64":
        return f"ARM implementer {cpu.vendor} part {cpu.model}"
    return f"{cpu.vendor} family {cpu.family} model {cpu.model}"


def section(cpu: CpuId, borrowed: bool, port_model: str, one_core_hz: float | None = None) -> dict:
    """The section calibrate --node writes: measured always where the port model is borrowed from
    another core, else where it disagrees with the measurement by more than TOLERANCE;
    one_core_hz: the clock of one busy core, measured, at which a harness's seconds are cycles."""
    when = "always" if borrowed else "disagree"
    note = ("each kernel part's in-core time is measured on this CPU at the first analysis and used "
            + ("in place of the port model's (" + port_model + ", borrowed: its structure only)" if borrowed
               else f"where it differs from the port model's ({port_model}) by more than {100 * TOLERANCE:.0f} %"))
    out = {"cpu": cpu_key(cpu), "when": when, "tolerance": TOLERANCE}
    if one_core_hz:
        out["clock"] = f"{one_core_hz / 1e9:.2f} GHz"
    out["note"] = note
    return out

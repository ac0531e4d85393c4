"""An IVP of two coupled blocks stored interleaved: its twin.  Pure.

A blocked IVP of two parts of equal size (string-row, medakzo) stores u_0 .. u_(N-1) and then
v_0 .. v_(N-1); part b reads its own block as y[j + d] and the other as w[j + d], with j the
index inside the block.  Its coupled components are N apart: the pipelined step's window holds
N rows, and a rank's block needs the partner rank's components.  Stored interleaved (u_0, v_0,
u_1, v_1, ...; string-mix by hand) the same system reads at most 2 h + 1 away (h: the parts'
reach), and a rank's block holds both halves of each point.

`twin_data(ivp)` is that system as an IVP file's data (specs.ivp.interleaved parses it: an IVP
of its own, docs/method.md "Coupled blocks stored interleaved"; `--ivp string-row.interleaved`),
whose solvers compute the blocked IVP's numbers in the other order:

- part b runs over j = b, b + 2, ... (start b, step 2), and j is now the global index;
- y[j + d] becomes y[j + 2d], w[j + d] becomes y[j + 2d + 1 - 2b];
- a bare coordinate j (medakzo's j*dz) becomes the block index (j - b)/2, exact in C's
  integer division and in any arithmetic;
- the initial condition, written in the blocked global index J, is evaluated at
  J = (j % 2) N + j / 2 (C's integer division: the driver's j is a long);
- the halo of each part and the access distance follow from the offsets; `sparse` (the
  partner's block) becomes `neighbour` (a rank's block holds both halves of its points).
"""
from __future__ import annotations

import re

from autotune.errors import CannotRun, InputError
from autotune.specs.formula import evaluate, to_c

SUFFIX = ".interleaved"    # after the twin's name (its kernel parts and store keys are its own) and path
_REF = re.compile(r"\b([A-Za-z_]\w*)\s*\[([^\]]*)\]")
_OFFSET = re.compile(r"^\s*j\s*(?:([+-])\s*(\d+)\s*)?$")
_COORD = re.compile(r"\bj\b")
_SAMPLES = (1, 2, 7, 1000)


def is_twin(ivp) -> bool:
    """Whether `ivp` is a twin made here (its name and path end in SUFFIX: a file of the user's
    whose name only does is not)."""
    return ivp.name.endswith(SUFFIX) and ivp.path.endswith(SUFFIX)


def unfit(ivp) -> str | None:
    """Why `ivp` (a specs.ivp.IVP) has no interleaved twin (None: it has one)."""
    if is_twin(ivp):
        return None
    blocked = len(ivp.rhs) > 1 and all(p.step == 1 and p.start == 0 for p in ivp.rhs)
    if not blocked or len(ivp.rhs) != 2 or not any("w" in p.arrays for p in ivp.rhs):
        return "the IVP declares no two coupled blocks (two RHS parts, one reading the other as w)"
    if ivp.grid is not None:
        return "the IVP's components form a grid"
    first, second = ivp.rhs
    if any(ivp.n_of(s) != 2 * _count(ivp, first.components, s) or
           _count(ivp, first.components, s) != _count(ivp, second.components, s) for s in _SAMPLES):
        return "its two blocks differ in size (or do not make up n)"
    for part in ivp.rhs:
        if set(part.arrays) - {"y", "w"}:
            return f"part {part.name} reads arrays other than y and w"
        for _, sub in _REF.findall(part.expr):
            if not _OFFSET.match(sub):
                return f"part {part.name} reads [{sub.strip()}], not j plus or minus a number"
    return None


def twin_data(ivp) -> dict:
    """The twin of a blocked IVP of two coupled blocks, as the data of an IVP file (CannotRun
    where unfit says why)."""
    why = unfit(ivp)
    if why:
        raise CannotRun(f"{ivp.path}: cannot store {ivp.name}'s blocks interleaved: {why}")
    parts, reach = [], 1
    for b, part in enumerate(ivp.rhs):
        offsets = []

        def moved(m, b=b, offsets=offsets):
            name, sub = m.group(1), _OFFSET.match(m.group(2))
            d = int(sub.group(2) or 0) * (-1 if sub.group(1) == "-" else 1)
            o = 2 * d + (1 - 2 * b if name == "w" else 0)
            offsets.append(abs(o))
            return "\0[j]" if o == 0 else f"\0[j{'+' if o > 0 else '-'}{abs(o)}]"

        expr = _REF.sub(moved, part.expr)          # subscripts out of the way ("\0": no name)
        expr = _COORD.sub("(j/2)" if b == 0 else "((j-1)/2)", expr)
        expr = expr.replace("\0[(j/2)", "\0[j").replace("\0[((j-1)/2)", "\0[j").replace("\0", "y")
        halo = max(offsets, default=0)
        reach = max(reach, halo)
        parts.append({"name": part.name, "components": part.components, "halo": str(halo), "start": b,
                      "step": 2, "expr": expr})
    try:
        block = to_c(ivp.rhs[0].components)
    except Exception as e:      # a components formula to_c cannot write (checked at loading: not expected)
        raise InputError(f"{ivp.path}: field 'rhs[0].components': {e}") from None
    initial = _COORD.sub(f"((j % 2) * (long)({block}) + j / 2)", ivp.initial) if ivp.initial else ""
    comm = list(dict.fromkeys("neighbour" if c == "sparse" else c for c in ivp.comm))
    data = {"name": ivp.name + SUFFIX,
            "description": f"{ivp.description} Stored interleaved (autotune's twin of {ivp.name}).",
            "size_parameter": ivp.size_parameter, "n": ivp.n_formula, "access_distance": str(reach),
            "default_n": ivp.default_n, "comm": comm, "constants": dict(ivp.constants), "rhs": parts}
    if initial:
        data["initial"] = initial
    if ivp.step_size:
        data["step_size"] = ivp.step_size
    return data


def _count(ivp, formula: str, size: int) -> int:
    return int(evaluate(formula, {ivp.size_parameter: size}))

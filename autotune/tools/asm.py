"""Store-pointer increment of an x86 (AT&T syntax) loop body, from its text.

kerncraft normalises the in-core cycles of the marked assembly block by the
bytes its store pointer advances per block iteration.  Its own detector gives
up when the stores use base+index addressing with different registers; this
one handles that case: for every store it sums the per-iteration increments
of the registers in its address (index scaled), and requires all stores to
agree.  Pure function of the block's lines.
"""
from __future__ import annotations

import re

_MEM = re.compile(r"(-?\w*)\((%\w+)?(?:,(%\w+)(?:,(\d+))?)?\)")
_IMM_OP = re.compile(r"^\s*(add|sub)[bwlq]?\s+\$(-?(?:0x)?[0-9a-fA-F]+),\s*(%\w+)\s*$")
_INCDEC = re.compile(r"^\s*(inc|dec)[bwlq]?\s+(%\w+)\s*$")
_LEA_SELF = re.compile(r"^\s*lea[lq]?\s+(-?(?:0x)?[0-9a-fA-F]+)\((%\w+)\),\s*(%\w+)\s*$")
_STORE_MNEMONIC = re.compile(r"^\s*v?mov\w*\s|^\s*v?(?:masked)?mov|^\s*vmovnt|^\s*movnt")


def _operands(code: str) -> list[str]:
    """Operands of an AT&T instruction, split at the commas outside parentheses."""
    parts = code.split(None, 1)
    if len(parts) < 2:
        return []
    ops, depth, cur = [], 0, ""
    for ch in parts[1]:
        if ch == "," and depth == 0:
            ops.append(cur.strip())
            cur = ""
            continue
        depth += (ch == "(") - (ch == ")")
        cur += ch
    ops.append(cur.strip())
    return ops


def _int(text: str) -> int:
    return int(text, 16) if text.lower().lstrip("-").startswith("0x") else int(text)


def _step_of(code: str) -> tuple[str, int] | None:
    """(register, bytes) if the instruction adds a constant to a register."""
    m = _IMM_OP.match(code)
    if m:
        by = _int(m.group(2))
        return m.group(3), (by if m.group(1) == "add" else -by)
    m = _INCDEC.match(code)
    if m:
        return m.group(2), (1 if m.group(1) == "inc" else -1)
    m = _LEA_SELF.match(code)
    if m and m.group(2) == m.group(3):
        return m.group(3), _int(m.group(1))
    return None


def _register_increments(lines: list[str]) -> dict[str, int | None]:
    """Per-iteration increment of each stepped register; None if it is also written otherwise."""
    inc: dict[str, int | None] = {}
    others: list[str] = []
    for line in lines:
        code = line.split("#")[0].strip()
        step = _step_of(code)
        if step:
            reg, by = step
            inc[reg] = inc.get(reg, 0) + by  # several steps in one body add up
        elif code:
            others.append(code)
    for code in others:
        ops = _operands(code)
        if ops and not code.startswith(("cmp", "test", "j", "prefetch")) and ops[-1] in inc:
            inc[ops[-1]] = None
    return inc


def store_increment(lines: list[str]) -> int | None:
    """Bytes the stores of the loop body advance per iteration, or None if undecidable."""
    inc = _register_increments(lines)
    found: set[int] = set()
    for line in lines:
        code = line.split("#")[0].strip()
        ops = _operands(code)
        if not code or not _STORE_MNEMONIC.match(code) or len(ops) < 2:
            continue
        m = _MEM.fullmatch(ops[-1])
        if not m:
            continue  # not a store
        base, index, scale = m.group(2), m.group(3), int(m.group(4) or 1)
        step = 0
        for reg, factor in ((base, 1), (index, scale)):
            if reg is None or reg not in inc:
                continue
            if inc[reg] is None:
                return None
            step += inc[reg] * factor
        found.add(step)
    found.discard(0)
    if len(found) != 1:
        return None
    return abs(found.pop())

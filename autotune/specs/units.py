"""Quantities with units as kerncraft's machine files write them ('2.4 GHz', '32.00 kB',
'12.5 GB/s', '64 B/cy'): a number, a space, an optional decimal prefix (k M G T P) and the
unit.  Pure.

A plain YAML number is taken as it stands, in the base unit (64 for 'cacheline size').
quantity() also reads a sign, an exponent or a missing space, so that a message can say what
is wrong with '-2.3 GHz' or '2.4GHz'; kerncraft_form() says whether kerncraft reads it (its
PrefixedUnit takes neither: such a value reaches its arithmetic as a string).
"""
from __future__ import annotations

import math
import re
from typing import NamedTuple

PREFIXES = {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}


class Quantity(NamedTuple):
    unit: str          # what follows the prefix
    what: str          # the word a message uses
    example: str       # how a machine file writes one


# the kinds the machine schema names; a new kind is a row here
QUANTITIES = {
    "frequency": Quantity("Hz", "frequency", "2.4 GHz"),
    "size": Quantity("B", "size", "32 kB"),
    "bandwidth": Quantity("B/s", "bandwidth", "12 GB/s"),
    "throughput": Quantity("B/cy", "throughput", "64 B/cy"),
}

_LOOSE = re.compile(r"^\s*([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|[+-]?inf)\s*([kMGTP]?)(\S+)\s*$")
_KERNCRAFT = re.compile(r"^(?:\d+(?:\.\d+)?|inf) [kMGTP]?\S+$")


def quantity(value, kind: str) -> float:
    """The value in the kind's base unit (Hz, B, B/s, B/cy); ValueError if it is not one."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number = float(value)
    else:
        m = _LOOSE.match(value) if isinstance(value, str) else None
        if not m or m.group(3) != QUANTITIES[kind].unit:
            raise ValueError(f"not a {QUANTITIES[kind].what}: {value!r}")
        number = float(m.group(1)) * PREFIXES[m.group(2)]
    if math.isnan(number):
        raise ValueError(f"not a {QUANTITIES[kind].what}: {value!r}")
    return number


def kerncraft_form(value) -> bool:
    """A plain number, or text kerncraft reads as a quantity ('2.4 GHz', not '2.4GHz' or '1e9 Hz')."""
    return not isinstance(value, str) or bool(_KERNCRAFT.match(value))

"""The sweep grammar of --ivp, --nodes, --threads and --n.  Pure.

A value list is comma-separated items; each item is one value or a range:

    8                  one value (1e6 and 35808256 alike)
    1:64               every integer from 1 to 64
    1:9:2              1, 3, 5, 7, 9 (an arithmetic step)
    1:64:x2            1, 2, 4, ..., 64 (a geometric factor)
    1e6:1e8:20log      20 values spaced evenly in log between the ends (both included)
    1e6:1e8:20lin      20 values spaced evenly between the ends

Values are integers: a single value and the ends and step of a range must be
integers; the values of a geometric, log or lin range are rounded (duplicates
after rounding are dropped, order is kept).  A list longer than MAX_VALUES is
refused: a typo should not start a run of a million scenarios.
"""
from __future__ import annotations

import math
import re

from autotune.errors import InputError

MAX_VALUES = 10_000
_COUNT = re.compile(r"^(\d+)(log|lin)$")


def _number(text: str, option: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise InputError(f"{text}: expected a number (such as 8, 1e6 or 35808256)", field=option) from None
    if not math.isfinite(value):
        raise InputError(f"{text}: expected a finite number", field=option)
    return value


def _range(start: float, stop: float, spec: str | None, item: str, option: str) -> list[float]:
    if stop < start:
        raise InputError(f"{item}: the range runs backwards ({start:g} > {stop:g})", field=option)
    if spec is None:
        spec = "1"
    m = _COUNT.match(spec)
    if m:
        count = int(m.group(1))
        if count < 1:
            raise InputError(f"{item}: expected at least 1 value", field=option)
        if count > MAX_VALUES:
            raise InputError(f"{item}: more than {MAX_VALUES} values", field=option)
        if count == 1:
            return [start]
        if m.group(2) == "log":
            if start <= 0:
                raise InputError(f"{item}: a log range needs a start > 0", field=option)
            ratio = math.log(stop / start) / (count - 1)
            return [start * math.exp(k * ratio) for k in range(count)]
        return [start + k * (stop - start) / (count - 1) for k in range(count)]
    if spec.startswith("x"):
        factor = _number(spec[1:], option)
        if factor <= 1 or start <= 0:
            raise InputError(f"{item}: a geometric range needs a factor > 1 and a start > 0", field=option)
        values, v = [], start
        while v <= stop * (1 + 1e-12):
            values.append(v)
            v *= factor
            if len(values) > MAX_VALUES:
                raise InputError(f"{item}: more than {MAX_VALUES} values", field=option)
        return values
    step = _number(spec, option)
    if step <= 0 or step != int(step):
        raise InputError(f"{item}: expected an integer step > 0, 'x<factor>', '<count>log' or '<count>lin'",
                         field=option)
    count = int(math.floor((stop - start) / step + 1e-9)) + 1
    if count > MAX_VALUES:
        raise InputError(f"{item}: more than {MAX_VALUES} values (give a count: "
                         f"{start:g}:{stop:g}:20log)", field=option)
    return [start + k * step for k in range(count)]


def parse_values(text: str, option: str, minimum: int = 1) -> list[int]:
    """Integer values of a list/range expression; InputError names the option and the item."""
    out: list[int] = []
    seen: set[int] = set()
    items = [t.strip() for t in str(text).split(",")]
    if not any(items):
        raise InputError(": expected a value or a range such as 1:64:x2", field=option)
    for item in items:
        if not item:
            raise InputError(f"{text}: empty item", field=option)
        fields = item.split(":")
        if len(fields) == 1:
            raw = [_number(fields[0], option)]
            if raw[0] != int(raw[0]):
                raise InputError(f"{item}: expected an integer", field=option)
        elif len(fields) in (2, 3):
            start, stop = _number(fields[0], option), _number(fields[1], option)
            for end, value in zip(fields, (start, stop)):
                if value != int(value):
                    raise InputError(f"{item}: expected integer ends, got {end}", field=option)
            raw = _range(start, stop, fields[2] if len(fields) == 3 else None, item, option)
        else:
            raise InputError(f"{item}: expected start:stop or start:stop:spec", field=option)
        for v in raw:
            iv = int(round(v))
            if iv < minimum:
                raise InputError(f"{item}: expected values >= {minimum}", field=option)
            if iv not in seen:
                seen.add(iv)
                out.append(iv)
        if len(out) > MAX_VALUES:
            raise InputError(f"{text}: more than {MAX_VALUES} values", field=option)
    return out


def name_list(value: str | list | tuple | None, sep: str = ",") -> tuple[str, ...] | None:
    """Names given as text separated by `sep` or as a list, blanks dropped (None: none given)."""
    if value is None:
        return None
    items = value.split(sep) if isinstance(value, str) else list(value)
    names = tuple(str(x).strip() for x in items if str(x).strip())
    return names or None


def asks_every(text: str) -> bool:
    """Whether a names option asks for every known name (it is 'all')."""
    return [t.strip() for t in str(text).split(",") if t.strip()] == ["all"]


def parse_names(text: str, option: str, known) -> list[str]:
    """Comma-separated names; 'all' is every known one (known: a function listing them, called
    only then).  Unknown names are left for the loader
    (it may be a path), duplicates are dropped."""
    names = [t.strip() for t in str(text).split(",") if t.strip()]
    if not names:
        raise InputError(": expected a name", field=option)
    if asks_every(text):
        return list(known())
    return list(dict.fromkeys(names))

"""The variant space: LC loop permutation x applicable communication scheme.

Pure enumeration; names are stable and parseable: "lc=jli,comm=neighbour".
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache
from itertools import permutations

from autotune.specs.schemes import SCHEMES
from autotune.errors import InputError

LC_LOOPS = ("i", "j", "l")   # summand, component, argument vector
DIMENSIONS = ("lc", "comm")


ONE_PASS_SUFFIX = "-onepass"


def lc_orders() -> list[str]:
    """Every order of the LC loop set, outermost first (6 for three loops): the paper's forms,
    which accumulate the stage sum over separate sweeps."""
    return sorted("".join(p) for p in permutations(LC_LOOPS))


def one_pass_orders() -> list[str]:
    """The one-pass forms: the orders of the argument-vector and component loops with the stage
    sum rendered inside (s is a literal), each F_i and y read and each Y_l written in one sweep."""
    return [f"{a}{b}{ONE_PASS_SUFFIX}" for a, b in (("j", "l"), ("l", "j"))]


def lc_values() -> list[str]:
    """Every value of the lc dimension: the paper's six orders, then the one-pass forms."""
    return lc_orders() + one_pass_orders()


@dataclass(frozen=True, order=True)
class Variant:
    lc: str
    comm: str

    @property
    def is_paper_form(self) -> bool:
        """One of the paper's variants (its six LC loop orders), the baseline of the fast forms."""
        return self.lc in lc_orders()

    @cached_property
    def name(self) -> str:
        return f"lc={self.lc},comm={self.comm}"


def enumerate_variants(allowed_comm, comm_filter=None) -> list[Variant]:
    return list(_variants(tuple(allowed_comm), None if comm_filter is None else tuple(comm_filter)))


@lru_cache(maxsize=256)
def _variants(allowed_comm: tuple, comm_filter: tuple | None) -> tuple[Variant, ...]:
    schemes = [c for c in allowed_comm if comm_filter is None or c in comm_filter]
    if comm_filter is not None:
        bad = [c for c in comm_filter if c not in allowed_comm]
        if bad:
            raise InputError(f"{','.join(bad)}: not applicable (this IVP allows {', '.join(allowed_comm)})", field="comm")
    return tuple(Variant(lc, c) for c in schemes for lc in lc_values())


def parse_variant(text: str, allowed_comm, field: str = "variant") -> Variant:
    """Parse "lc=jil,comm=neighbour" (either order); unknown or missing parts are InputError."""
    fields = {}
    for item in text.split(","):
        key, sep, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or key not in DIMENSIONS or key in fields:
            raise InputError(f"{text!r}: expected lc=<order>,comm=<scheme>, e.g. lc=jli,comm=neighbour", field=field)
        fields[key] = value
    missing = [d for d in DIMENSIONS if d not in fields]
    if missing:
        raise InputError(f"{text!r}: missing {', '.join(missing)} (expected lc=<order>,comm=<scheme>)", field=field)
    if fields["lc"] not in lc_values():
        raise InputError(f"{text!r}: lc must be one of {', '.join(lc_values())}", field=field)
    if fields["comm"] not in SCHEMES:
        raise InputError(f"{text!r}: unknown comm scheme (known: {', '.join(SCHEMES)})", field=field)
    if fields["comm"] not in allowed_comm:
        raise InputError(f"{text!r}: comm={fields['comm']} not applicable (allowed: {', '.join(allowed_comm)})", field=field)
    return Variant(fields["lc"], fields["comm"])

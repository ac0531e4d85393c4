"""The variant space: the dimensions' product, and the names.  Pure.

The dimensions are found, one module each (autotune.dimensions); this module makes the Variant
type from them, enumerates the pool under their rules and parses names and filters.

Names are stable and parseable key=value lists, e.g. "lc=jli,comm=neighbour".  A dimension
with a default (the paper's form) is written only where a variant departs from it, so the
paper's 12 variants keep exactly their names and new forms add keys:
"lc=jl-onepass,comm=neighbour,au=fused,pred=direct,buf=ghost".
"""
from __future__ import annotations

from dataclasses import dataclass, field, make_dataclass, replace
from functools import cached_property, lru_cache
from typing import Iterator, Sequence

from autotune.dimensions import discover
from autotune.errors import CannotRun, InputError
from autotune.specs.dimension import Dimension
from autotune.specs.schemes import SCHEMES

# Every dimension, found (autotune.dimensions), by key in position order
DIMENSIONS: dict[str, Dimension] = discover()


class _VariantForms:
    """What a variant is besides its values (the fields: one per dimension, in position order)."""

    @property
    def is_paper_form(self) -> bool:
        """One of the paper's variants (every dimension at one of its paper values: the six LC loop
        orders, any scheme, every other dimension at its default): the baseline of the fast forms."""
        return all(getattr(self, k) in d.paper_values for k, d in DIMENSIONS.items())

    @cached_property
    def stored_as(self) -> tuple[tuple[str, str], ...]:
        """Its values of the dimensions with an `ivp` hook (how it stores the IVP: a Space's fixed)."""
        return tuple((k, getattr(self, k)) for k in _HOOKED_KEYS)

    @cached_property
    def stores_as_given(self) -> bool:
        """Whether it stores the IVP as its file says (every dimension with an `ivp` hook at its
        default)."""
        return all(v == DIMENSIONS[k].default for k, v in self.stored_as)

    @cached_property
    def name(self) -> str:
        return ",".join(f"{k}={getattr(self, k)}" for k, d in DIMENSIONS.items()
                        if d.default is None or getattr(self, k) != d.default)

    def fields(self) -> dict[str, str]:
        return {k: getattr(self, k) for k in DIMENSIONS}


# One field per dimension, in position order, with its default: a new dimension is a module of
# autotune.dimensions
Variant = make_dataclass("Variant", [(k, str) if d.default is None else (k, str, field(default=d.default))
                                     for k, d in DIMENSIONS.items()],
                         bases=(_VariantForms,), frozen=True, order=True,
                         namespace={"__hash__": lambda self: hash(self.name)})   # the name is the variant
Variant.__module__ = __name__
Variant.__doc__ = "One variant: a value of every dimension (Variant(lc='jli', comm='neighbour', au='fused'))."


def fixed_twin(v):
    """The fixed-step variant of a controlled one (every step-control dimension at its default,
    specs.dimension: control): the same sweeps, without the control's code."""
    return replace(v, **{k: d.default for k, d in DIMENSIONS.items() if d.control})


def configuration(name: str) -> dict[str, str]:
    """Every dimension's value of the variant called `name` (the values at their defaults, which
    the name leaves out, filled in), in position order."""
    return dict(zip(DIMENSIONS, _named_values(name)))


@lru_cache(maxsize=8192)
def _named_values(name: str) -> tuple[str, ...]:
    given = dict(item.split("=", 1) for item in name.split(",") if "=" in item)
    return tuple(given.get(k, d.default) for k, d in DIMENSIONS.items())


@dataclass(frozen=True)
class Space:
    """The variants of an IVP stored one way: the values of the dimensions with an `ivp` hook
    (specs.dimension) that store it so, and the schemes the IVP stored that way allows."""
    fixed: tuple[tuple[str, str], ...]
    comm: tuple[str, ...]
    controlled: bool = False      # a step chosen by step-size control: the step-control dimensions' values


Allowed = Sequence[str] | tuple[Space, ...]    # an IVP's schemes (stored as its file says), or its spaces


def _hooked() -> list[tuple[str, object]]:
    return [(k, d) for k, d in DIMENSIONS.items() if d.ivp is not None]


_HOOKED_KEYS = tuple(k for k, _ in _hooked())


@lru_cache(maxsize=64)
def spaces(ivp, controlled: bool = False) -> tuple[Space, ...]:
    """Every way the IVP can be stored (its file's first), each with the schemes it allows there:
    the variant pool is their union (enumerate_variants, parse_variant and the rest take it).
    controlled: the variants of a step chosen by step-size control (specs.dimension: control)."""
    found = [((), ivp)]
    for k, d in _hooked():
        grown = []
        for fixed, stored in found:
            grown.append((fixed + ((k, d.default),), stored))
            for v in d.values:
                got = d.ivp(v, stored) if v != d.default else None
                if got is not None and got != stored:      # unchanged: the IVP already is stored so
                    grown.append((fixed + ((k, v),), got))
        found = grown
    return tuple(Space(fixed, tuple(stored.comm), controlled) for fixed, stored in found)


def ivp_for(ivp, variant):
    """The IVP a variant is priced, checked and generated with: the IVP as its values of the
    dimensions with an `ivp` hook store it (itself at their defaults; a stored one is its own)."""
    return ivp if variant.stores_as_given else stored(ivp, variant.stored_as)


@lru_cache(maxsize=256)
def stored(ivp, fixed: tuple[tuple[str, str], ...]):
    """The IVP stored as these values of the dimensions with an `ivp` hook say (ivp_for)."""
    for k, v in fixed:
        d = DIMENSIONS[k]
        if v == d.default:
            continue
        got = d.ivp(v, ivp)
        if got is None:
            raise CannotRun(f"{k}={v} cannot store {ivp.name}")
        ivp = got
    return ivp


def _spaces(allowed: Allowed) -> tuple[Space, ...]:
    """allowed as spaces: a list of schemes is the IVP stored as its file says (every dimension
    with an `ivp` hook at its default)."""
    allowed = tuple(allowed)
    if allowed and all(isinstance(a, Space) for a in allowed):
        return allowed
    return (Space(tuple((k, d.default) for k, d in _hooked()), allowed),)


def _schemes(spaces: tuple[Space, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(c for sp in spaces for c in sp.comm))


def broken_rule(fields: dict[str, str]) -> str | None:
    """Why a combination of values is not a variant ("fuse=rhs-lc needs lc=jl-onepass"), or None."""
    for key, dim in DIMENSIONS.items():
        value = dim.value(fields[key])
        for other, allowed in value.requires:
            if fields[other] not in allowed:
                return f"{key}={value.name} needs {other}={'|'.join(allowed)}"
    return None


def enumerate_variants(allowed: Allowed, comm_filter=None) -> list[Variant]:
    """The pool: every variant of the schemes allowed (an IVP's comm, or its spaces: each way it
    can be stored, in turn) that breaks no rule, of those comm_filter keeps."""
    return list(_variants(_spaces(allowed), None if comm_filter is None else tuple(comm_filter)))


@lru_cache(maxsize=256)
def _variants(spaces: tuple[Space, ...], comm_filter: tuple | None) -> tuple[Variant, ...]:
    allowed_comm = _schemes(spaces)
    if comm_filter is not None:
        bad = [c for c in comm_filter if c not in allowed_comm]
        if bad:
            raise InputError(f"{','.join(bad)}: not applicable (this IVP allows {', '.join(allowed_comm)})", field="comm")
    # the communication scheme outermost, the LC form innermost, the other dimensions between
    # (the highest position outermost); combinations that break a value's rule are left out
    keys = ["comm"] + [k for k in reversed(DIMENSIONS) if k not in ("comm", "lc")] + ["lc"]
    out: list[Variant] = []
    for sp in spaces:
        fixed = dict(sp.fixed)
        schemes = [c for c in sp.comm if comm_filter is None or c in comm_filter]
        values = [schemes if k == "comm" else (fixed[k],) if k in fixed else DIMENSIONS[k].values_for(sp.controlled)
                  for k in keys]
        out += [Variant(**f) for f in _unbroken(keys, values) if broken_rule(f) is None]
    return tuple(out)


def _unbroken(keys: list[str], values: list) -> Iterator[dict[str, str]]:
    """The combinations of product(*values) over keys, in its order, that break no rule: a rule is
    checked as soon as both keys it names have a value, so a broken prefix is never extended (the
    pool is a few hundred of the product's thousands)."""
    rules = [(key, dim.value(v).name, other, allowed) for key, dim in DIMENSIONS.items()
             for v in dim.values for other, allowed in dim.value(v).requires]
    depth = {k: i for i, k in enumerate(keys)}
    due: list[list] = [[] for _ in keys]          # rules decided once keys[:i + 1] have values
    for key, name, other, allowed in rules:
        due[max(depth[key], depth[other])].append((key, name, other, allowed))
    fields: dict[str, str] = {}

    def extend(i: int):
        if i == len(keys):
            yield dict(fields)
            return
        for value in values[i]:
            fields[keys[i]] = value
            if all(fields[key] != name or fields[other] in allowed for key, name, other, allowed in due[i]):
                yield from extend(i + 1)
        del fields[keys[i]]
    return extend(0)


def _example(allowed_comm: tuple[str, ...]) -> str:
    """A name of the paper's form: each always-named dimension at its first value of the paper's
    (the scheme: one the IVP allows)."""
    return ",".join(f"{k}={next(v for v in d.values if v in d.paper_values and (k != 'comm' or v in allowed_comm))}"
                    for k, d in DIMENSIONS.items() if d.default is None)


def _optional() -> list[str]:
    return [f"{k}=..." for k, d in DIMENSIONS.items() if d.default is not None]


def parse_variant(text: str, allowed: Allowed, field: str = "variant") -> Variant:
    """Parse "lc=jil,comm=neighbour[,au=fused][,pred=direct]" (any order) as a variant of the
    schemes allowed (an IVP's comm, or its spaces); unknown or missing parts, or a variant the
    IVP has not, are InputError."""
    spaces = _spaces(allowed)
    allowed_comm = _schemes(spaces)
    fields = {}
    for item in text.split(","):
        key, sep, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or key not in DIMENSIONS or key in fields:
            raise InputError(f"{text!r}: expected lc=<order>,comm=<scheme>[,{'][,'.join(_optional())}], "
                             f"e.g. {_example(allowed_comm)}", field=field)
        fields[key] = value
    missing = [k for k, d in DIMENSIONS.items() if d.default is None and k not in fields]
    if missing:
        raise InputError(f"{text!r}: missing {', '.join(missing)} (expected lc=<order>,comm=<scheme>)", field=field)
    if fields["comm"] not in SCHEMES:
        raise InputError(f"{text!r}: unknown comm scheme (known: {', '.join(SCHEMES)})", field=field)
    for key, value in fields.items():
        if value not in DIMENSIONS[key].values:
            raise InputError(f"{text!r}: {key} must be one of {', '.join(DIMENSIONS[key].values)}", field=field)
    full = _controlled_fill(fields, spaces[0].controlled, text, field)
    fields = {k: v for k, v in full.items() if k in fields or v != DIMENSIONS[k].default}
    space = next((sp for sp in spaces if all(full[k] == v for k, v in sp.fixed)), None)
    if space is None:
        stored = ", ".join(f"{k}={full[k]}" for k, _ in spaces[0].fixed if full[k] != DIMENSIONS[k].default)
        raise InputError(f"{text!r}: {stored}: the IVP cannot be stored so", field=field)
    if fields["comm"] not in space.comm:
        raise InputError(f"{text!r}: comm={fields['comm']} not applicable (allowed: {', '.join(space.comm)})", field=field)
    why = broken_rule(full)
    if why:
        raise InputError(f"{text!r}: not a variant: {why}", field=field)
    return Variant(**fields)


def _controlled_fill(fields: dict[str, str], controlled: bool, text: str, field: str) -> dict[str, str]:
    """Every dimension's value of a named variant: a step-control dimension the name leaves out
    takes, where the step is controlled, its first controlled value that breaks no rule (the
    paper's where it can); one named where the step is fixed, or at the fixed step's value where
    it is controlled, is InputError."""
    full = {k: fields.get(k, d.default) for k, d in DIMENSIONS.items()}
    for key, d in DIMENSIONS.items():
        allowed = d.values_for(controlled)
        if key in fields and fields[key] not in allowed:
            raise InputError(f"{text!r}: {key}={fields[key]} " + (
                f"is not a controlled step's (one of {', '.join(allowed)})" if controlled
                else "needs step-size control (--rtol/--atol)"), field=field)
        if key not in fields and full[key] not in allowed:
            order = sorted(allowed, key=lambda v: v not in d.paper_values)
            full[key] = next((v for v in order if broken_rule({**full, key: v}) is None), order[0])
    return full


def pairwise_cover(variants: list[Variant]) -> list[Variant]:
    """A subset of `variants` in which every pair of values of two dimensions that occurs together
    in `variants` occurs together at least once (greedy: each pick covers the most pairs not yet
    covered; ties go to the earlier variant).  Checks that run every variant's solver use it
    where running all of them costs too much: an error that needs two dimensions' code to meet
    still shows."""
    keys = list(DIMENSIONS)

    def pairs(v: Variant) -> set:
        vals = [getattr(v, k) for k in keys]
        return {(i, vals[i], j, vals[j]) for i in range(len(keys)) for j in range(i + 1, len(keys))}

    return _greedy_cover([(v, pairs(v)) for v in variants])


def _greedy_cover(table: list[tuple[Variant, set]]) -> list[Variant]:
    """Pick variants until every item of any variant's set is covered: each pick covers the most
    items not yet covered; ties go to the earlier variant."""
    todo = set().union(*(p for _, p in table)) if table else set()
    chosen: list[Variant] = []
    while todo:
        v, p = max(table, key=lambda vp: len(vp[1] & todo))
        chosen.append(v)
        todo -= p
    return chosen


def value_cover(variants: list[Variant]) -> list[Variant]:
    """A subset of `variants` in which every value of every dimension that occurs in `variants`
    occurs at least once (greedy, as pairwise_cover): one solver per value for checks too costly
    to run on pairs (the convergence order)."""
    return _greedy_cover([(v, set(v.fields().items())) for v in variants])


Filter = tuple[tuple[str, frozenset], ...]   # (dimension, allowed values); ("paper", {}) for the paper's forms


def parse_filter(text: str | None, field: str = "variant-filter") -> Filter | None:
    """A variant selector: comma-separated "key=value" items, a value may list alternatives with
    "|" ("lc=jl-onepass|lj-onepass,comm=neighbour"); the item "paper" keeps the paper's forms.
    A variant matches when it matches every item.  InputError names the bad item."""
    if text is None or not str(text).strip():
        return None
    out = []
    for item in str(text).split(","):
        item = item.strip()
        if item == "paper":
            out.append(("paper", frozenset()))
            continue
        key, sep, values = item.partition("=")
        key = key.strip()
        allowed = [v.strip() for v in values.split("|")]
        if not sep or key not in DIMENSIONS or not all(allowed):
            raise InputError(f"{text}: {item!r} is not key=value[|value...] or 'paper' "
                             f"(keys: {', '.join(DIMENSIONS)})", field=field)
        bad = [v for v in allowed if v not in DIMENSIONS[key].values]
        if bad:
            raise InputError(f"{text}: {key}={bad[0]} is not a value of {key} "
                             f"({', '.join(DIMENSIONS[key].values)})", field=field)
        out.append((key, frozenset(allowed)))
    return tuple(out)


def matches(v: Variant, flt: Filter | None) -> bool:
    if flt is None:
        return True
    return all(v.is_paper_form if key == "paper" else getattr(v, key) in allowed for key, allowed in flt)


def selected_variants(allowed: Allowed, comm_filter=None, select: Filter | None = None,
                      ivp_name: str = "this IVP") -> list[Variant]:
    """enumerate_variants narrowed to those `select` keeps (computed once per combination: a sweep
    asks for thousands of scenarios); InputError if it keeps none."""
    out = _selected(_spaces(allowed), None if comm_filter is None else tuple(comm_filter), select)
    if not out:
        raise InputError(f": no variant of {ivp_name} matches", field="variant-filter")
    return list(out)


@lru_cache(maxsize=256)
def _selected(spaces: tuple[Space, ...], comm_filter: tuple | None, select: Filter | None) -> tuple[Variant, ...]:
    return tuple(v for v in _variants(spaces, comm_filter) if matches(v, select))


def describe_space(allowed: Allowed) -> dict:
    """The variant space of an IVP as data: each dimension with its values (those the IVP allows
    for comm and the ways it can be stored), default, rules and description; the count; the
    names."""
    spaces = _spaces(allowed)
    pool = enumerate_variants(spaces)
    taken = {"comm": set(_schemes(spaces))}
    for sp in spaces if spaces == tuple(allowed) else ():    # schemes alone: every way of storing
        for k, v in sp.fixed:
            taken.setdefault(k, set()).add(v)
    dims = []
    for key, d in DIMENSIONS.items():
        values = [v for v in d.choices if key not in taken or v.name in taken[key]]
        dims.append({"key": key, "values": [v.name for v in values], "default": d.default,
                     "rules": {v.name: {k: list(a) for k, a in v.requires} for v in values if v.requires},
                     "description": d.description})
    return {"count": len(pool), "dimensions": dims, "variants": [v.name for v in pool]}

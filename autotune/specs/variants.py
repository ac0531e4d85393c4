"""The variant space: its dimensions as data, their product, and the names.  Pure.

Names are stable and parseable key=value lists, e.g. "lc=jli,comm=neighbour".  A dimension
with a default (the paper's form) is written only where a variant departs from it, so the
paper's 12 variants keep exactly their names and new forms add keys:
"lc=jl-onepass,comm=neighbour,au=fused,pred=direct,buf=ghost".
"""
from __future__ import annotations

from dataclasses import dataclass, field, make_dataclass
from functools import cached_property, lru_cache
from itertools import permutations
from typing import Iterator

from autotune.errors import InputError
from autotune.specs.schemes import SCHEMES

LC_LOOPS = ("i", "j", "l")   # summand, component, argument vector
ONE_PASS_SUFFIX = "-onepass"


def lc_orders() -> list[str]:
    """Every order of the LC loop set, outermost first (6 for three loops): the paper's forms,
    which accumulate the stage sum over separate sweeps."""
    return list(_LC_ORDERS)


_LC_ORDERS = tuple(sorted("".join(p) for p in permutations(LC_LOOPS)))


def one_pass_orders() -> list[str]:
    """The one-pass forms: the orders of the argument-vector and component loops with the stage
    sum rendered inside (s is a literal), each F_i and y read and each Y_l written in one sweep."""
    return [f"{a}{b}{ONE_PASS_SUFFIX}" for a, b in (("j", "l"), ("l", "j"))]


def lc_values() -> list[str]:
    """Every value of the lc dimension: the paper's six orders, then the one-pass forms."""
    return lc_orders() + one_pass_orders()


@dataclass(frozen=True)
class Value:
    """One value of a dimension: what it renders (a macro of variants/kernels.j2 or step.j2, or a
    template file under variants/) and where it applies (every other dimension's allowed values;
    a variant that breaks a rule is not in the pool)."""
    name: str
    renders: str
    requires: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def applies(self, fields: dict[str, str]) -> bool:
        return all(fields[key] in allowed for key, allowed in self.requires)


@dataclass(frozen=True)
class Dimension:
    key: str
    choices: tuple[Value, ...]
    default: str | None      # the paper's form (left out of names); None: always named
    description: str

    @property
    def values(self) -> tuple[str, ...]:
        return tuple(v.name for v in self.choices)

    def value(self, name: str) -> Value:
        return self._by_name[name]

    @cached_property
    def _by_name(self) -> dict[str, Value]:
        return {v.name: v for v in self.choices}


DIMENSIONS: dict[str, Dimension] = {}


def register(dim: Dimension) -> Dimension:
    if dim.key in DIMENSIONS:
        raise ValueError(f"duplicate variant dimension {dim.key!r}")
    if dim.default is not None and dim.default not in dim.values:
        raise ValueError(f"dimension {dim.key!r}: default {dim.default!r} is not one of its values")
    for v in dim.choices:
        for key, allowed in v.requires:
            if key == dim.key or (key in DIMENSIONS and set(allowed) - set(DIMENSIONS[key].values)):
                raise ValueError(f"dimension {dim.key!r}, value {v.name!r}: bad rule {key}={allowed}")
    DIMENSIONS[dim.key] = dim
    return dim


def _values(names, renders, **requires) -> tuple[Value, ...]:
    rules = tuple((k, tuple(v.split("|"))) for k, v in requires.items())
    return tuple(Value(n, renders.format(n), rules) for n in names)


register(Dimension("lc", _values(lc_orders(), "kernels.j2:lc_first,lc_acc,lc_fin (order {})")
                   + _values(one_pass_orders(), "kernels.j2:lc_onepass ({})"), None,
                   "linear combination: loop order, or a one-pass form"))
register(Dimension("comm", tuple(Value(n, SCHEMES[n].template) for n in SCHEMES), None,
                   "communication scheme (those the IVP allows)"))
register(Dimension("au", _values(["split"], "kernels.j2:approx_first,approx_acc,update")
                   + _values(["fused"], "kernels.j2:approx_update_fused"), "split",
                   "APPROX and UPDATE: dy = h sum b_i F_i then y += dy (split), or y += h sum b_i F_i in one pass"))
register(Dimension("pred", _values(["copy"], "step.j2:copy_first") + _values(["direct"], "kernels.j2:lc_direct"),
                   "copy",
                   "predictor: F_l = F_1 copied for the first corrector iteration (copy), or its argument "
                   "vectors y + h c_l F_1 computed from F_1 directly (direct)"))
register(Dimension("buf", _values(["pack"], "kernels.j2:pack") + _values(["ghost"], "solver.c.j2:ghost"), "pack",
                   "where the argument vectors live: copied into the communication buffer before every "
                   "exchange (pack), or in it, with room for the halos, written there by LC (ghost)"))
register(Dimension("rhs", _values(["stages"], "step.j2:rhs_all") + _values(["onepass"], "step.j2:rhs_onepass"),
                   "stages",
                   "RHS of the corrector's s argument vectors: one sweep per argument vector (stages), or "
                   "all of them in one sweep of the components, the stage loop inside (onepass)"))
register(Dimension("fuse", _values(["none"], "step.j2:lc")
                   + _values(["rhs-lc"], "step.j2:rhs_lc", lc="jl-onepass", rhs="onepass", pred="direct",
                             au="fused"), "none",
                   "RHS-LC fusion: separate sweeps (none), or each RHS sweep followed tile by tile by the "
                   "linear combination that consumes it (rhs-lc: the predictor's with the first LC, the "
                   "last with APPROX+UPDATE); F lives in a tile buffer, never in memory"))
register(Dimension("block", _values(["none"], "solver.c.j2:TILE", fuse="none")
                   + _values(["l1", "l2"], "solver.c.j2:TILE ({})", fuse="rhs-lc"), "none",
                   "cache blocking of the fused sweep: the component tile whose s stage derivatives stay in "
                   "this cache level between RHS and LC (its size from the machine file and the threads)"))
register(Dimension("overlap", _values(["none"], "step.j2:communicate_all")
                   + _values(["halo"], "step.j2:sweep", comm="|".join(n for n, s in SCHEMES.items()
                                                                         if s.halo_only)), "none",
                   "communication-computation overlap: wait for the exchange, then the RHS (none), or post "
                   "the halo exchange, evaluate the components that need no halo, wait, finish the boundary "
                   "(halo; schemes that exchange halos only)"))

register(Dimension("store", _values(["none"], "solver.c.j2:stores through the caches")
                   + _values(["nt"], "solver.c.j2:stream_row", fuse="rhs-lc"), "none",
                   "how a fused sweep writes the argument vectors it computes: through the caches (none: "
                   "the hardware reads every line first, write-allocate), or with non-temporal stores "
                   "that go to memory without that read (nt: where the step reads them again only after "
                   "the last-level cache would have evicted them)"))


class _VariantForms:
    """What a variant is besides its values (the fields: one per registered dimension)."""

    @property
    def is_paper_form(self) -> bool:
        """One of the paper's variants (its six LC loop orders, split APPROX/UPDATE, the predictor's
        copy): the baseline of the fast forms."""
        return self.lc in _LC_ORDERS and all(getattr(self, d.key) == d.default for d in DIMENSIONS.values()
                                              if d.default is not None)

    @cached_property
    def name(self) -> str:
        extra = "".join(f",{d.key}={getattr(self, d.key)}" for d in DIMENSIONS.values()
                        if d.default is not None and getattr(self, d.key) != d.default)
        return f"lc={self.lc},comm={self.comm}{extra}"

    def fields(self) -> dict[str, str]:
        return {k: getattr(self, k) for k in DIMENSIONS}


# One field per dimension, in registry order, with its default: a new dimension is its entry above
Variant = make_dataclass("Variant", [(k, str) if d.default is None else (k, str, field(default=d.default))
                                     for k, d in DIMENSIONS.items()],
                         bases=(_VariantForms,), frozen=True, order=True,
                         namespace={"__hash__": lambda self: hash(self.name)})   # the name is the variant
Variant.__module__ = __name__
Variant.__doc__ = "One variant: a value of every dimension (Variant(lc='jli', comm='neighbour', au='fused'))."


def broken_rule(fields: dict[str, str]) -> str | None:
    """Why a combination of values is not a variant ("fuse=rhs-lc needs lc=jl-onepass"), or None."""
    for key, dim in DIMENSIONS.items():
        value = dim.value(fields[key])
        for other, allowed in value.requires:
            if fields[other] not in allowed:
                return f"{key}={value.name} needs {other}={'|'.join(allowed)}"
    return None


def enumerate_variants(allowed_comm, comm_filter=None) -> list[Variant]:
    return list(_variants(tuple(allowed_comm), None if comm_filter is None else tuple(comm_filter)))


@lru_cache(maxsize=256)
def _variants(allowed_comm: tuple, comm_filter: tuple | None) -> tuple[Variant, ...]:
    schemes = [c for c in allowed_comm if comm_filter is None or c in comm_filter]
    if comm_filter is not None:
        bad = [c for c in comm_filter if c not in allowed_comm]
        if bad:
            raise InputError(f"{','.join(bad)}: not applicable (this IVP allows {', '.join(allowed_comm)})", field="comm")
    # the communication scheme outermost, the LC form innermost, the other dimensions between
    # (the last registered outermost); combinations that break a value's rule are left out
    keys = ["comm"] + [k for k in reversed(DIMENSIONS) if k not in ("comm", "lc")] + ["lc"]
    values = [schemes if k == "comm" else DIMENSIONS[k].values for k in keys]
    return tuple(Variant(**f) for f in _unbroken(keys, values) if broken_rule(f) is None)


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


def _optional() -> list[str]:
    return [f"{k}=..." for k, d in DIMENSIONS.items() if d.default is not None]


def parse_variant(text: str, allowed_comm, field: str = "variant") -> Variant:
    """Parse "lc=jil,comm=neighbour[,au=fused][,pred=direct]" (any order); unknown or missing
    parts are InputError."""
    fields = {}
    for item in text.split(","):
        key, sep, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or key not in DIMENSIONS or key in fields:
            raise InputError(f"{text!r}: expected lc=<order>,comm=<scheme>[,{'][,'.join(_optional())}], "
                             f"e.g. lc=jli,comm=neighbour", field=field)
        fields[key] = value
    missing = [k for k, d in DIMENSIONS.items() if d.default is None and k not in fields]
    if missing:
        raise InputError(f"{text!r}: missing {', '.join(missing)} (expected lc=<order>,comm=<scheme>)", field=field)
    if fields["comm"] not in SCHEMES:
        raise InputError(f"{text!r}: unknown comm scheme (known: {', '.join(SCHEMES)})", field=field)
    for key, value in fields.items():
        if value not in DIMENSIONS[key].values:
            raise InputError(f"{text!r}: {key} must be one of {', '.join(DIMENSIONS[key].values)}", field=field)
    if fields["comm"] not in allowed_comm:
        raise InputError(f"{text!r}: comm={fields['comm']} not applicable (allowed: {', '.join(allowed_comm)})", field=field)
    full = {k: fields.get(k, d.default) for k, d in DIMENSIONS.items()}
    why = broken_rule(full)
    if why:
        raise InputError(f"{text!r}: not a variant: {why}", field=field)
    return Variant(**fields)


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


def selected_variants(allowed_comm, comm_filter=None, select: Filter | None = None,
                      ivp_name: str = "this IVP") -> list[Variant]:
    """enumerate_variants narrowed to those `select` keeps (computed once per combination: a sweep
    asks for thousands of scenarios); InputError if it keeps none."""
    out = _selected(tuple(allowed_comm), None if comm_filter is None else tuple(comm_filter), select)
    if not out:
        raise InputError(f": no variant of {ivp_name} matches", field="variant-filter")
    return list(out)


@lru_cache(maxsize=256)
def _selected(allowed_comm: tuple, comm_filter: tuple | None, select: Filter | None) -> tuple[Variant, ...]:
    return tuple(v for v in _variants(allowed_comm, comm_filter) if matches(v, select))


def describe_space(allowed_comm) -> dict:
    """The variant space of an IVP as data: each dimension with its values (those the IVP allows
    for comm), default, rules and description; the count; the names."""
    pool = enumerate_variants(allowed_comm)
    dims = []
    for key, d in DIMENSIONS.items():
        values = [v for v in d.choices if key != "comm" or v.name in allowed_comm]
        dims.append({"key": key, "values": [v.name for v in values], "default": d.default,
                     "rules": {v.name: {k: list(a) for k, a in v.requires} for v in values if v.requires},
                     "description": d.description})
    return {"count": len(pool), "dimensions": dims, "variants": [v.name for v in pool]}

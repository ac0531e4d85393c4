"""A mixed allocation as asked: `--nodes big:4,small:2` (or {"big": 4, "small": 2} through the
API and in plan files), each name a partition of the cluster's machine file (its
cluster.partitions) or a machine of its own; resolved into kinds with their machine files
(docs/usage.md "Mixed allocations")."""
from __future__ import annotations

import re

from autotune.errors import InputError
from autotune.specs.machine import Machine, load_machine
from autotune.specs.mixed import Kind

_ITEM = re.compile(r"^([^\s,:]+):([^\s,:]+)$")


def is_mix(value) -> bool:
    """Whether a nodes value names kinds (big:4,small:2 or a mapping) rather than counts."""
    if isinstance(value, dict):
        return True
    if not isinstance(value, str):
        return False
    return any(_ITEM.match(item.strip()) and not _numeric(item.split(":")[0]) for item in value.split(","))


def _numeric(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def parse_mix(value, field: str = "nodes") -> tuple[tuple[str, int], ...]:
    """((kind, nodes), ...) in the order given; InputError naming the field for a malformed
    item, a count that is not a positive integer, or a kind named twice."""
    items = list(value.items()) if isinstance(value, dict) else []
    if isinstance(value, str):
        for item in value.split(","):
            m = _ITEM.match(item.strip())
            if not m:
                raise InputError(f"{item.strip()!r}: expected KIND:NODES (a partition or machine, a count), "
                                 f"as in big:4,small:2", field=field)
            items.append((m.group(1), m.group(2)))
    out: dict[str, int] = {}
    for name, count in items:
        try:
            nodes = int(str(count))
        except ValueError:
            raise InputError(f"{name}:{count}: expected a whole number of nodes", field=field) from None
        if nodes < 1:
            raise InputError(f"{name}:{nodes}: expected at least 1 node of each kind", field=field)
        if name in out:
            raise InputError(f"{name}: named twice", field=field)
        out[str(name)] = nodes
    if not out:
        raise InputError(": expected at least one KIND:NODES", field=field)
    return tuple(out.items())


def kind_machine(name: str, cluster: Machine | None, model: str | None) -> tuple[Machine, str]:
    """The machine of one kind, and where it was found: the cluster file's partition of that
    name (its machine file must load), else a machine of that name or path."""
    if cluster is not None and name in cluster.partitions:
        target = cluster.partitions[name]
        try:
            return load_machine(target, model), f"partition {name} of {cluster.name}"
        except InputError as e:
            raise InputError(f"{name}: partition of {cluster.name} without a usable machine file "
                             f"({target}: {e.message})", field="nodes") from None
    try:
        return load_machine(name, model), f"machine {name}"
    except InputError:
        known = f"partitions of {cluster.name}: {', '.join(sorted(cluster.partitions)) or 'none'}" if cluster \
            else "no --machine names partitions"
        raise InputError(f"{name}: unknown partition or machine ({known}; or a machine name or YAML path)",
                         field="nodes") from None


def resolve_kinds(mix: tuple[tuple[str, int], ...], machine: str | None, threads: int | dict | None,
                  model: str | None) -> tuple[tuple[Kind, ...], dict, str]:
    """The kinds of a mix, and the interconnect's model with whose figures they are: the cluster
    file's (machine, where given) or, without one, the first kind's.  threads: one count for
    every kind, a count per kind ({kind: threads}; a kind left out gets all its cores), or None
    (each kind all its cores)."""
    names = [name for name, _ in mix]
    if isinstance(threads, dict):
        stray = [k for k in threads if k not in names]
        if stray:
            raise InputError(f"{stray[0]}: not one of the kinds of --nodes ({', '.join(names)})", field="threads")
    cluster = load_machine(machine, model) if machine else None
    kinds = []
    for name, nodes in mix:
        m, _ = kind_machine(name, cluster, model)
        t = threads.get(name) if isinstance(threads, dict) else threads
        kinds.append(Kind(name, m, nodes, t if t is not None else m.cores))
    across = "+".join(sorted(names))
    if cluster is not None and across in cluster.networks:     # measured across these kinds (calibrate --kinds)
        return tuple(kinds), dict(cluster.networks[across]), f"{cluster.name}, measured across {across} " \
                                                             f"(cluster.networks)"
    source = cluster or kinds[0].machine
    why = "the cluster file's" if cluster else "the first kind's (no --machine gives the cluster's)"
    return tuple(kinds), dict(source.network), f"{source.name}, {why}"


def is_mix_sweep(value) -> bool:
    """Whether a nodes value names kinds, each with a count or a range of counts (scale's
    big:1:4,small:2)."""
    if not isinstance(value, str):
        return is_mix(value)
    return any(":" in item and not _numeric(item.split(":")[0].strip()) for item in value.split(","))


def parse_mix_sweep(value, field: str = "nodes") -> list[tuple[tuple[str, int], ...]]:
    """Every allocation a sweep of kinds asks for (KIND:COUNTS,..., COUNTS one count or a range
    such as 1:4 or 1:8:x2; request.values): the product of the kinds' counts, the first kind
    varying slowest."""
    from itertools import product

    from autotune.request.values import parse_values
    if isinstance(value, dict):
        value = ",".join(f"{k}:{v}" for k, v in value.items())
    kinds: list[tuple[str, list[int]]] = []
    for item in str(value).split(","):
        name, sep, counts = item.strip().partition(":")
        if not sep or not name or not counts:
            raise InputError(f"{item.strip()!r}: expected KIND:COUNTS (a count or a range), as in "
                             f"big:1:4,small:2", field=field)
        if name in dict(kinds):
            raise InputError(f"{name}: named twice", field=field)
        got = parse_values(counts, field)
        if min(got) < 1:
            raise InputError(f"{name}:{counts}: expected at least 1 node of each kind", field=field)
        kinds.append((name, got))
    return [tuple(zip((k for k, _ in kinds), combo)) for combo in product(*(c for _, c in kinds))]

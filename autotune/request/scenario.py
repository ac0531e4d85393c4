"""Scenario requests: what a front end asks for (names, values or sweeps), resolved into checked
scenarios.  Defaults are declared here once: the method, the machine's node count, all cores,
the IVP's default size.

A value field (n, nodes, threads) takes an integer, a list of integers, or a string in the
sweep grammar (autotune.request.values: "8,16", "1:64:x2", "1e6:1e8:20log").  Errors name
the field; the front end names it its way (--nodes, scenarios[3].nodes, nodes).
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass
from functools import cached_property

from autotune.errors import InputError
from autotune.request.defaults import DEFAULT_METHOD, MODELS
from autotune.request.keywords import Keywords
from autotune.request.mixed import is_mix, parse_mix, resolve_kinds
from autotune.request.values import asks_every, name_list, parse_names, parse_values
from autotune.specs.control import Control, control_of, estimate_order
from autotune.specs.ivp import ivp_names, load_ivp
from autotune.specs.machine import load_machine
from autotune.specs.method import load_method
from autotune.specs.mixed import MixedScenario, check_mixed, split_of
from autotune.specs.scenario import Scenario, check_scenario
from autotune.specs.variants import Filter, parse_filter


Values = int | str | list | tuple | dict | None


def values_of(value: Values, field: str) -> list[int] | None:
    """The integers a value field asks for (None: the default); InputError names the field."""
    if value is None:
        return None
    if isinstance(value, str):
        return parse_values(value, field)
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    if not items:
        raise InputError(": expected at least one value", field=field)
    out = []
    for v in items:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v != int(v):
            raise InputError(f"{v!r}: expected an integer", field=field)
        if v < 1:
            raise InputError(f"{int(v)}: expected at least 1", field=field)
        out.append(int(v))
    return list(dict.fromkeys(out))


def model_of(model: str | None) -> str | None:
    if model is not None and model not in MODELS:
        raise InputError(f"{model}: expected one of {', '.join(MODELS)}", field="model")
    return model


@dataclass(frozen=True)
class SweepSpec:
    """A batch of scenarios: every combination of the IVPs, sizes, node and thread counts."""
    ivps: list[str]
    ns: list[int] | None          # None: each IVP's default size
    nodes: list[int] | None       # None: the machine's node count
    threads: list[int] | None     # None: all cores
    machine: str | None
    method: str
    comm: list[str] | None = None
    variant_filter: Filter | None = None
    model: str | None = None      # "ecm": without the machine's learned factors
    every_ivp: bool = False       # ivps is 'all': every shipped IVP
    control: Control | None = None    # step-size control (None: a fixed step)
    mix: tuple | None = None          # a mixed allocation: ((kind, nodes), ...) (request.mixed)
    kind_threads: tuple | None = None     # and its threads per kind: ((kind, threads), ...)

    @property
    def is_sweep(self) -> bool:
        """More than one scenario asked for (a list or range of IVPs, sizes, nodes or threads)."""
        return len(self.ivps) > 1 or self._values_vary

    @property
    def each_ivp(self) -> bool:
        """'all' IVPs at one size, node and thread count each: one ranking per shipped IVP (rank),
        rather than a sweep's long format."""
        return self.every_ivp and not self._values_vary

    def one_each(self, *fields: str) -> None:
        """InputError where one of these fields (ivp, n, nodes, threads) asks for more than one value."""
        for field in fields:
            values = getattr(self, {"ivp": "ivps", "n": "ns"}.get(field, field))
            if values is not None and len(values) != 1:
                raise InputError(f"{','.join(map(str, values))}: expected one value here", field=field)

    @property
    def _values_vary(self) -> bool:
        return any(v is not None and len(v) > 1 for v in (self.ns, self.nodes, self.threads))


@dataclass(frozen=True)
class ScenarioRequest(Keywords):
    """One scenario or a sweep, as asked (names and raw values); ScenarioRequest.of builds it
    from keywords (request.keywords)."""
    PRIMARY = "ivp"

    ivp: str | list | tuple
    n: Values = None
    nodes: Values = None
    threads: Values = None
    machine: str | None = None
    method: str = DEFAULT_METHOD
    comm: str | list | tuple | None = None
    variant_filter: str | None = None
    model: str | None = None      # "learned" (default: where the machine has them) or "ecm"
    rtol: float | None = None     # step-size control's tolerances (neither: a fixed step; one: both)
    atol: float | None = None
    split: str | list | tuple | None = None     # a mixed allocation's blocks, one per rank (None: the model's)

    def sweep_spec(self) -> SweepSpec:
        """The request parsed (names and values checked), once: the front end and the pipeline
        read the same SweepSpec (docs/design.md#one-door).  The files it names are loaded by
        scenario(), each time: a machine file may change between two uses of one request."""
        return self._spec

    @cached_property
    def _spec(self) -> SweepSpec:
        ivps = str(self.ivp) if isinstance(self.ivp, (str, os.PathLike)) else ",".join(map(str, self.ivp))
        comm = name_list(self.comm)        # the schemes to consider (None: all)
        mix = parse_mix(self.nodes) if is_mix(self.nodes) else None
        kind_threads = parse_mix(self.threads, "threads") if is_mix(self.threads) else None
        if kind_threads and not mix:
            raise InputError(f"{self.threads}: threads per kind need nodes of several kinds (KIND:COUNT,...)",
                             field="threads")
        return SweepSpec(parse_names(ivps, "ivp", ivp_names), values_of(self.n, "n"),
                         None if mix else values_of(self.nodes, "nodes"),
                         None if kind_threads else values_of(self.threads, "threads"),
                         self.machine, self.method or DEFAULT_METHOD, list(comm) if comm else None,
                         parse_filter(self.variant_filter), model_of(self.model),
                         asks_every(ivps), control_of(self.rtol, self.atol), mix, kind_threads)

    def scenario(self) -> Scenario:
        """The one scenario asked for, loaded and checked (InputError for a sweep or bad input)."""
        spec = self.sweep_spec()
        if self.split is not None and not spec.mix:
            raise InputError(f"{self.split}: only with nodes of several kinds (KIND:COUNT,...)", field="split")
        if spec.mix:
            raise InputError(f"{self.nodes}: a mixed allocation; this command takes one kind of node "
                             "(rank, explain and tune take several)", field="nodes")
        spec.one_each("ivp", "n", "nodes", "threads")
        ivp = load_ivp(spec.ivps[0])
        method = load_method(spec.method)
        machine = load_machine(spec.machine, spec.model)
        n = spec.ns[0] if spec.ns else ivp.default_n
        nodes = spec.nodes[0] if spec.nodes else machine.nodes
        threads = spec.threads[0] if spec.threads else machine.cores
        check_scenario(ivp, n, nodes, threads, machine)
        if spec.control is not None:
            estimate_order(method)       # a method without a free estimate is refused here
        return Scenario(ivp, method, machine, n, nodes, threads, spec.control)

    def mixed(self) -> MixedScenario:
        """The one mixed allocation asked for (nodes names kinds: request.mixed), loaded and
        checked: every kind's machine file before any work."""
        spec = self.sweep_spec()
        spec.one_each("ivp", "n", "threads")
        ivp = load_ivp(spec.ivps[0])
        method = load_method(spec.method)
        threads = dict(spec.kind_threads) if spec.kind_threads else spec.threads[0] if spec.threads else None
        kinds, network, source = resolve_kinds(spec.mix, spec.machine, threads, spec.model)
        n = spec.ns[0] if spec.ns else ivp.default_n
        check_mixed(ivp, n, kinds)
        if spec.control is not None:
            estimate_order(method)
        return MixedScenario(ivp, method, n, kinds, network, source, spec.control, split_of(self.split, n, kinds))

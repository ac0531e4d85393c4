"""`autotune list`: the shipped IVPs, machines, methods and an IVP's variant space.  Its own
module so that listing imports only the specs it lists (each kind when it is listed), not the
pipeline."""
from __future__ import annotations

import json

from autotune.errors import InputError


def cmd_list(args) -> int:
    if args.what in ("variants", "ivps"):
        from autotune.specs.ivp import ivp_names, load_ivp
    if args.what == "variants":
        from autotune.report.space import space_text
        from autotune.specs.variants import describe_space, spaces
        if args.ivp is not None and not args.ivp.strip():
            raise InputError(f": expected a value, got {args.ivp!r}", field="ivp")
        names = [args.ivp] if args.ivp is not None else ivp_names()
        described = {ivp.name: describe_space(spaces(ivp)) for ivp in map(load_ivp, names)}
        if args.format == "json":
            print(json.dumps(described, indent=2))
        elif args.format == "csv":
            print(_csv([{"ivp": i, "dimension": d["key"], "value": v, "default": v == d["default"],
                         "description": d["description"]}
                        for i, space in described.items() for d in space["dimensions"] for v in d["values"]]), end="")
        else:
            for ivp_name, space in described.items():
                print(space_text(ivp_name, space))
        return 0
    if args.what == "ivps":
        items = {n: load_ivp(n).description.split(". ")[0].rstrip(".") for n in ivp_names()}
    elif args.what == "machines":
        from autotune.specs.machine import load_machine, machine_names
        items = {}
        for n in machine_names():
            m = load_machine(n, "ecm")     # a stale learned section must not hide the machine
            try:
                model = load_machine(n).model_label
            except InputError:
                model = "ecm (its learned factors are stale: calibrate --from-runs)"
            items[n] = f"{m.model_name}; {m.nodes} node(s) x {m.cores} cores; network: {m.network['model']}" \
                + ("" if model == "ecm" else f"; model: {model}")
    else:
        from autotune.specs.method import load_method, method_names
        items = {}
        for n in method_names():
            m = load_method(n)
            items[n] = f"{m.family}, s = {m.stages}, order {m.order}, m = {m.iterations} iterations"
    if args.format == "json":
        print(json.dumps(items, indent=2))
    elif args.format == "csv":
        print(_csv([{"name": k, "description": v} for k, v in items.items()]), end="")
    else:
        width = max(map(len, items)) if items else 0
        for k, v in items.items():
            print(f"{k:{width}}  {v}")
    return 0


def _csv(rows: list[dict]) -> str:
    from autotune.report.text import csv_text
    return csv_text(rows, list(rows[0]) if rows else ["name"])


def dispatch(args, progress) -> int:
    return cmd_list(args)

"""The variant space for people: each dimension's values, default, rules and one-line description,
as `autotune list variants` prints them and as the docs' table (between the markers
<!-- dimensions --> and <!-- /dimensions -->, checked against this by the tests).  Pure."""
from __future__ import annotations


def _rules(d: dict) -> str:
    return "; ".join(f"{v} needs " + ", ".join(f"{k}={'|'.join(a)}" for k, a in r.items())
                     for v, r in d["rules"].items())


def space_text(ivp_name: str, space: dict) -> str:
    """The dimensions (values, the paper's default, the rules, what each is), the count, then
    every name (space: specs.variants.describe_space)."""
    lines = [f"{ivp_name}: {space['count']} variants", "",
             f"  {'dimension':9}  {'values':44}  {'default':8}  rules"]
    for d in space["dimensions"]:
        lines.append(f"  {d['key']:9}  {' '.join(d['values']):44}  {d['default'] or '(named)':8}  {_rules(d)}")
        lines.append(f"  {'':9}  {d['description']}")
    lines += ["", *(f"  {name}" for name in space["variants"])]
    return "\n".join(lines)


def dimension_table(space: dict) -> str:
    """The dimensions as a Markdown table (every scheme listed: space of all schemes)."""
    lines = ["| dimension | values | default | rules | what it is |", "|---|---|---|---|---|"]
    for d in space["dimensions"]:
        values = ", ".join(f"`{v}`" for v in d["values"])
        rules = _rules(d).replace("|", "\\|")
        default = f"`{d['default']}`" if d["default"] else "(always named)"
        lines.append(f"| `{d['key']}` | {values} | {default} | {rules or '-'} | {d['description'].replace('|', '/')} |")
    return "\n".join(lines)

"""A variant dimension is one module (autotune.dimensions): found, not listed; no module outside
it names one of its values; the values name code that exists; a new dimension, kept outside the
package, changes no other file."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import autotune
from autotune.dimensions import discover
from autotune.specs.dimension import Dimension, ordered, values
from autotune.specs.variants import DIMENSIONS

PACKAGE = Path(autotune.__file__).parent
OWN = {PACKAGE / "dimensions", PACKAGE / "specs" / "dimension.py"}
# the always-named dimensions (no default: lc, comm) are a variant's identity: results carry their
# values as columns, and the scheme is also the IVP's (its allowed schemes); they may be read
READ_ANYWHERE = {k for k, d in DIMENSIONS.items() if d.default is None}
VARIANT_NAMES = {"v", "variant", "var"}


def _module_files() -> list[Path]:
    return [f for f in sorted(PACKAGE.rglob("*.py"))
            if not any(f == own or own in f.parents for own in OWN)]


def _docstrings(tree: ast.AST) -> set[int]:
    """The string constants that document: docstrings, and an option's help= text."""
    out = {id(n.value) for n in ast.walk(tree)
           if isinstance(n, ast.keyword) and n.arg == "help" and isinstance(n.value, ast.Constant)}
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def _key_of(node: ast.AST) -> str | None:
    """The dimension key a node reads a variant's value of: v.key, variant.key, x.variant.key,
    getattr(v, "key"), fields["key"]."""
    if isinstance(node, ast.Attribute) and node.attr in DIMENSIONS:
        base = node.value
        if (isinstance(base, ast.Name) and base.id in VARIANT_NAMES) or \
                (isinstance(base, ast.Attribute) and base.attr == "variant"):
            return node.attr
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr" \
            and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) and node.args[1].value in DIMENSIONS \
            and isinstance(node.args[0], ast.Name) and node.args[0].id in VARIANT_NAMES:
        return node.args[1].value
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and node.slice.value in DIMENSIONS \
            and ((isinstance(node.value, ast.Name) and node.value.id in ("fields", "values"))
                 or (isinstance(node.value, ast.Attribute) and node.value.attr in ("fields", "values"))):
        return node.slice.value
    return None


def _constants(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [c for e in node.elts for c in _constants(e)]
    return []


ITEM = re.compile(r"\b(" + "|".join(map(re.escape, DIMENSIONS)) + r")=([\w|-]+)")


def value_names(tree: ast.AST) -> list[tuple[int, str]]:
    """Where a module names a dimension's value in code: a variant's value read (other than the
    always-named dimensions'), compared with a literal, passed as a keyword literal, or written
    as "key=value" outside a docstring or an option's help.  (line, what) per finding."""
    docs, out = _docstrings(tree), []
    for node in ast.walk(tree):
        key = _key_of(node)
        if key and key not in READ_ANYWHERE:
            out.append((node.lineno, f"reads the value of {key}"))
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            keys = [k for k in map(_key_of, sides) if k]
            for k in keys:
                named = [c for s in sides for c in _constants(s) if c in DIMENSIONS[k].values]
                if named:
                    out.append((node.lineno, f"compares {k} with {named[0]!r}"))
        if isinstance(node, ast.keyword) and node.arg in DIMENSIONS:
            named = [c for c in _constants(node.value) if c in DIMENSIONS[node.arg].values]
            if named:
                out.append((node.value.lineno, f"{node.arg}={named[0]!r} as a keyword"))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            for key, value in ITEM.findall(node.value):
                if any(v in DIMENSIONS[key].values for v in value.split("|")):
                    out.append((node.lineno, f"names {key}={value}"))
                    break
    return out


def test_no_module_outside_a_dimension_names_its_values():
    found = [f"{f.relative_to(PACKAGE.parent)}:{line}: {what}"
             for f in _module_files() for line, what in value_names(ast.parse(f.read_text()))]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("code,why", [
    ('def f(v):\n    return v.store == "nt"\n', "reads the value of store"),
    ('def f(r):\n    return r.variant.block\n', "reads the value of block"),
    ('def f(v):\n    return getattr(v, "fuse") != "none"\n', "compares fuse"),
    ('def f(fields):\n    return fields["buf"] == "ghost"\n', "compares buf"),
    ('def f(d):\n    return d.values["buf"] == "ghost"\n', "compares buf"),
    ('def f(Variant):\n    return Variant("jli", "neighbour", store="nt")\n', "store='nt' as a keyword"),
    ('CHECKS = {"store=nt": None}\n', "names store=nt"),
    ('def f(v):\n    return v.comm == "neighbour"\n', "compares comm"),
])
def test_the_check_finds_each_way_of_naming_a_value(code, why):
    assert any(why in what for _, what in value_names(ast.parse(code))), code


def test_the_check_leaves_docstrings_and_scheme_reads_alone():
    code = ('def f(v, args):\n    """store=nt: where it pays."""\n    add("--x", help="e.g. store=nt")\n'
            '    return SCHEMES[v.comm], getattr(args, "store", None)\n')
    assert value_names(ast.parse(code)) == []


def test_dimensions_are_found_one_module_each():
    folder = PACKAGE / "dimensions"
    modules = {f.stem for f in folder.glob("*.py") if f.stem != "__init__"}
    assert modules == set(DIMENSIONS) and discover() == DIMENSIONS
    assert [d.position for d in DIMENSIONS.values()] == sorted(d.position for d in DIMENSIONS.values())
    assert list(DIMENSIONS)[:2] == ["lc", "comm"]      # the always-named keys lead every name


def test_a_key_or_position_used_twice_or_a_bad_rule_is_an_error():
    a = Dimension("a", 1, values(["x", "y"], "f:{}"), "x", "a")
    with pytest.raises(ValueError, match="duplicate variant dimension 'a'"):
        ordered([a, Dimension("a", 2, values(["x"], "f:{}"), "x", "again")])
    with pytest.raises(ValueError, match="share position 1"):
        ordered([a, Dimension("b", 1, values(["x"], "f:{}"), "x", "b")])
    with pytest.raises(ValueError, match="bad rule a=z"):
        ordered([a, Dimension("b", 2, values(["x"], "f:{}", a="z"), "x", "b")])
    with pytest.raises(ValueError, match="default 'z' is not one of its values"):
        Dimension("c", 3, values(["x"], "f:{}"), "z", "c")
    with pytest.raises(ValueError, match="step contributions"):
        Dimension("c", 3, values(["x", "y"], "f:{}"), "x", "c", step={"x": print})


def test_the_docs_table_is_the_dimensions_own_description():
    """The table between the markers is made from each dimension's values, rules and one-line
    description (report.space), the text `list variants` prints them from: where they differ, the
    failure shows the table to paste."""
    from autotune.report.space import dimension_table
    from autotune.specs.schemes import SCHEMES
    from autotune.specs.variants import describe_space

    root = Path(__file__).resolve().parents[1]      # the checkout (the package may be installed)
    found = {}
    for doc in [root / "README.md", *sorted((root / "docs").glob("*.md"))]:
        found.update({doc.name: m for m in re.findall(r"<!-- dimensions -->\n(.*?)\n<!-- /dimensions -->",
                                                       doc.read_text(), re.S)})
    assert len(found) == 1, f"one table between <!-- dimensions --> markers expected, found in {sorted(found)}"
    want = dimension_table(describe_space(tuple(SCHEMES)))
    assert next(iter(found.values())) == want, f"{next(iter(found))}: the table should read\n{want}"

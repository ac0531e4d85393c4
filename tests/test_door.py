"""The one door (docs/design.md#one-door): the command line and the Python API reach the
pipeline only through autotune.pipeline.entry, and the edges (autotune.tools) only through the
pipeline; every command of each calls entry."""
import ast
import re

from tests.test_layers import PACKAGE, ROOT, imports_in, module_name

DOOR = "autotune.pipeline.entry"
FRONTS = sorted([*(PACKAGE / "cli").glob("*.py"), PACKAGE / "api.py", PACKAGE / "__init__.py", PACKAGE / "__main__.py"])


def bypasses(source: str, name: str, is_package: bool = False) -> list[str]:
    """The imports of a front end's module that go past the door: any module of the pipeline but
    entry, any of the edges."""
    out = []
    for line, target in imports_in(source, name, is_package):
        if target.startswith("autotune.pipeline") and target not in (DOOR, "autotune.pipeline"):
            out.append(f"{name}:{line} imports {target}")
        elif target == "autotune.pipeline":      # `from autotune.pipeline import x` where x is no module
            out.append(f"{name}:{line} imports the pipeline package")
        elif target.startswith("autotune.tools"):
            out.append(f"{name}:{line} imports {target}")
    return out


def test_the_check_sees_a_bypass():
    """The check itself: imports of the pipeline past entry, at the top or inside a function,
    and of an edge, are each found; entry's are not."""
    source = """
from autotune.pipeline import entry
from autotune.pipeline.entry import rank
import autotune.pipeline.entry

def cmd():
    from autotune.pipeline.generate import generate
    from autotune.tools.ecm_runner import check_jobs
"""
    found = bypasses(source, "autotune.cli.commands")
    assert found == ["autotune.cli.commands:7 imports autotune.pipeline.generate",
                     "autotune.cli.commands:8 imports autotune.tools.ecm_runner"]


def test_front_ends_reach_the_pipeline_only_through_entry():
    found = []
    for f in FRONTS:
        name, is_package = module_name(f)
        found += bypasses(f.read_text(), name, is_package)
    assert not found, "\n".join(found)


def _functions_calling_entry(path) -> dict[str, bool]:
    """Each top-level function of a module: whether its body names `entry`."""
    tree = ast.parse(path.read_text())
    return {node.name: any(isinstance(n, ast.Name) and n.id == "entry" for n in ast.walk(node))
            for node in tree.body if isinstance(node, ast.FunctionDef)}


def test_every_command_goes_through_entry():
    """Each subcommand's handler (cli.commands.COMMANDS) and each function of the API calls
    entry; `list` only reads the shipped specs and has no pipeline to reach."""
    from autotune import api
    from autotune.cli.commands import COMMANDS
    handlers = _functions_calling_entry(ROOT / "autotune" / "cli" / "commands.py")
    assert sorted(COMMANDS) == sorted(["rank", "explain", "scale", "tune", "plan", "generate", "calibrate", "schema"])
    assert all(handlers[f.__name__] for f in COMMANDS.values()), handlers
    functions = _functions_calling_entry(ROOT / "autotune" / "api.py")
    public = [n for n in api.__all__ if n in functions]
    assert {"rank", "sweep", "scale", "explain", "tune", "generate", "generate_online", "plan", "ingest", "learn",
            "calibrate", "identify_cpu", "calibrate_node", "import_kerncraft", "schema"} <= set(public)
    assert [n for n in public if not functions[n]] == []


def _table_signatures() -> dict[str, list[str]]:
    """docs/design.md#the-python-api's table: each function's parameters as written ("..." ends a
    list that leaves the common ones out)."""
    text = (ROOT / "docs" / "design.md").read_text()
    section = text.split("## The Python API", 1)[1].split("\n## ", 1)[0]
    out = {}
    for name, params in re.findall(r"^\| `(\w+)\(([^)]*)\)` \|", section, flags=re.M):
        out[name] = [p.strip() for p in params.split(",") if p.strip()]
    return out


def test_design_lists_every_api_function_with_its_parameters():
    """docs/design.md stays true to the API: every function it exports is in the table, with its
    parameters in order (a row ending in "..." lists the first ones)."""
    import inspect

    from autotune import api
    table = _table_signatures()
    functions = {n: getattr(api, n) for n in api.__all__ if inspect.isfunction(getattr(api, n))}
    assert sorted(table) == sorted(functions)
    for name, f in functions.items():
        params = inspect.signature(f).parameters.values()
        real = []
        for p in params:
            if p.kind == p.KEYWORD_ONLY and "*" not in real:
                real.append("*")
            real.append(p.name)
            if p.kind == p.POSITIONAL_ONLY:
                real.append("/")
        written = table[name]
        if written and written[-1] == "...":
            assert real[:len(written) - 1] == written[:-1], (name, real, written)
        else:
            assert real == written, (name, real, written)


def test_design_names_every_door():
    """docs/design.md#one-door names each public function of pipeline.entry."""
    import inspect

    from autotune.pipeline import entry
    text = (ROOT / "docs" / "design.md").read_text().split("## One door", 1)[1].split("\n## ", 1)[0]
    doors = [n for n, f in vars(entry).items()
             if inspect.isfunction(f) and f.__module__ == entry.__name__ and not n.startswith("_")]
    assert [n for n in doors if f"`{n}`" not in text] == []

"""Result types and renderers are registered, not listed: a result type registers itself
(results.registry), a renderer likewise (report.registry), and the modules of results/ and
report/ are found with pkgutil.  A toy result type and its renderer, in modules of their own
that no list names, are found by the command line's --format choices, by render and by
`autotune`; a duplicate name is an error."""
import ast
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import autotune
import autotune.report
import autotune.results
from autotune.cli.main import build_parser
from autotune.report import registry as report_registry
from autotune.report.render import FormatChoices, formats, load_renderers, plot, render
from autotune.results import registry

PACKAGE = Path(autotune.__file__).parent

TOY_RESULT = '''
from dataclasses import dataclass

from autotune.results.registry import result_type


@result_type
@dataclass
class ToyResult:
    value: int

    def to_dict(self):
        return {"value": self.value}
'''

TOY_RENDERER = '''
import json

from autotune.report.registry import renderer
from autotune.results.toyresult import ToyResult


@renderer(ToyResult, "table")
def toy_table(res):
    return f"value  {res.value}\\n"


@renderer(ToyResult, "json")
def toy_json(res):
    return json.dumps(res.to_dict())
'''


@pytest.fixture()
def plug_in(tmp_path, monkeypatch):
    """plug_in(package, module, source): a module of that package that lives outside the checkout
    (a folder added to the package's __path__), so nothing in the tree names it.  The registries
    and sys.modules are as before after the test."""
    registry.discover()             # what the tree registers, before the plug-ins
    load_renderers()
    saved = dict(registry.RESULT_TYPES), dict(report_registry.RENDERERS)
    added = []

    def add(package, name: str, source: str) -> None:
        folder = tmp_path / package.__name__.rpartition(".")[2]
        folder.mkdir(exist_ok=True)
        (folder / f"{name}.py").write_text(textwrap.dedent(source))
        if str(folder) not in package.__path__:
            monkeypatch.setattr(package, "__path__", [*package.__path__, str(folder)])
        added.append(f"{package.__name__}.{name}")
    yield add
    for name in added:
        sys.modules.pop(name, None)
    registry.RESULT_TYPES.clear()
    registry.RESULT_TYPES.update(saved[0])
    report_registry.RENDERERS.clear()
    report_registry.RENDERERS.update(saved[1])
    autotune.__dict__.pop("__all__", None)


def test_a_result_type_and_its_renderers_are_found_without_a_list(plug_in, monkeypatch):
    plug_in(autotune.results, "toyresult", TOY_RESULT)
    plug_in(autotune.report, "toyrender", TOY_RENDERER)
    assert "ToyResult" not in registry.RESULT_TYPES and "autotune.results.toyresult" not in sys.modules
    toy = registry.find_result_type("ToyResult")
    assert toy.__module__ == "autotune.results.toyresult" and "ToyResult" in registry.result_types()
    # the command line's --format choices of a type named there, render, and the package's exports
    choices = FormatChoices("ToyResult")
    assert "table" in choices and "csv" not in choices and sorted(choices) == ["json", "table"]
    assert render(toy(3), "table") == "value  3\n" and json.loads(render(toy(3), "json"))["value"] == 3
    assert json.loads(render(toy(3), "json"))["meta"]["schema"] == "autotune/ToyResult"      # every document's
    autotune.__dict__.pop("__all__", None)
    assert "ToyResult" in autotune.__all__ and autotune.ToyResult is toy
    with pytest.raises(ValueError, match="no csv rendering of ToyResult"):
        render(toy(3), "csv")
    with pytest.raises(ValueError, match="no figure of ToyResult"):
        plot(toy(3), "toy.png")


def test_a_duplicate_result_type_name_is_an_error(plug_in):
    from autotune.results.rank import RankResult
    plug_in(autotune.results, "zzduplicate", '''
        from autotune.results.registry import result_type

        @result_type
        class RankResult:
            pass
    ''')
    with pytest.raises(ValueError, match="duplicate result type RankResult: autotune.results.rank.RankResult "
                                         "and autotune.results.zzduplicate.RankResult"):
        registry.result_types()
    assert registry.RESULT_TYPES["RankResult"] is RankResult       # the first one stands
    assert registry.result_type(RankResult) is RankResult          # the same class again is no duplicate


def test_a_duplicate_renderer_is_an_error(plug_in):
    from autotune.results.rank import RankResult
    load_renderers()
    with pytest.raises(ValueError, match="duplicate renderer for RankResult as json"):
        report_registry.renderer(RankResult, "json")(lambda res: "")


def test_every_result_type_is_rendered_and_every_renderer_renders_one():
    types = registry.result_types()
    assert len(types) >= 12 and all(t.__name__ == name for name, t in types.items())
    load_renderers()
    rendered = {t for t, _ in report_registry.RENDERERS}
    assert rendered - set(types.values()) == set(), "a renderer of a type that is not registered"
    missing = {name: sorted({"table", "json"} - set(formats(t))) for name, t in types.items()}
    assert {n: m for n, m in missing.items() if m} == {}, "a result type without a table or a json rendering"
    assert {t.__name__ for t, fmt in report_registry.RENDERERS if fmt == "plot"} >= {
        "TuneResult", "ScaleResult", "CalibrateResult"}


def test_the_format_choices_come_from_the_registries():
    parser = build_parser(complete=True)
    sub = next(a for a in parser._actions if a.dest == "command").choices
    seen = {}
    for command, p in sub.items():
        fmt = next((a for a in p._actions if a.dest == "format"), None)
        if isinstance(fmt.choices if fmt else None, FormatChoices):
            seen[command] = sorted(fmt.choices)
    assert seen["rank"] == sorted(formats(registry.find_result_type("RankResult"))) == ["csv", "json", "table"]
    assert set(seen) == {"rank", "explain", "scale", "tune", "plan", "calibrate", "generate"}
    assert all({"table", "json", "csv"} <= set(c) for c in seen.values()), seen     # every report, as CSV too


def _dict_keys(node: ast.Dict) -> list[str]:
    return [k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]


def test_no_module_keeps_a_map_of_result_types():
    """No dict literal in the package is keyed by result type names (what RESULT_MODULES and
    MODULE_OF were), and no tuple, list or set lists the renderer modules (render.MODULES)."""
    names = set(registry.result_types())
    renderer_modules = {m.stem for m in (PACKAGE / "report").glob("*.py")} - {"__init__"}
    found = []
    for f in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.Dict) and len(set(_dict_keys(node)) & names) >= 2:
                found.append(f"{f.relative_to(PACKAGE)}:{node.lineno}: a map of result types")
            if f.parent.name == "report" and isinstance(node, (ast.Tuple, ast.List, ast.Set)):
                items = {e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
                if len(items & renderer_modules) >= 2:
                    found.append(f"{f.relative_to(PACKAGE)}:{node.lineno}: a list of renderer modules")
    assert found == []


LAZY = """
import json, sys
def loaded():
    return sorted(m for m in sys.modules if m.startswith(("autotune.results", "autotune.report")))
import autotune
from autotune.cli.main import build_parser
build_parser(complete=True)
built = loaded()
build_parser().parse_args(["calibrate", "--machine", "m", "--format", "json"])
print(json.dumps([built, loaded()]))
"""


def test_the_command_line_and_the_package_stay_lazy():
    """Importing autotune and building every subcommand's parser imports no result type and no
    renderer; checking a --format value imports the modules of that command's result type (their
    namesakes first) and no other command's."""
    out = subprocess.run([sys.executable, "-c", LAZY], capture_output=True, text=True, check=True).stdout
    built, checked = json.loads(out)
    assert built == ["autotune.report", "autotune.report.registry", "autotune.report.render"]
    assert {"autotune.results.calibrate", "autotune.report.calibrate"} <= set(checked)
    assert not {"autotune.results.rank", "autotune.report.rank", "autotune.results.tune"} & set(checked)

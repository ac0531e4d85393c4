"""The package's layers: every import of every module under autotune/ (relative ones resolved,
`import a.b` and `from a import b` alike, those inside functions too, and importlib.import_module
of a literal name) points down the floors declared here, or stays in its own room.  The
benchmarks are not part of the package: no module of it imports them."""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "autotune"

# The floors, bottom to top: a module imports from its own room or from the rooms of the floors
# below it; the rooms of one floor are independent of each other.  A room is a subpackage or a
# top-level module of autotune; "a+b" is one room of two packages that may import each other.
# "autotune" is the package's own __init__ (it imports the API, so a name imported from it
# reaches the top).
FLOORS = (
    ("errors", "arith", "data", "progress"),   # the exceptions, exact sums; the shipped data's package;
                                     # what long work tells while it goes
    ("specs+dimensions",),           # what the problem is: IVPs, methods, machines, the step form,
                                     # the variant dimensions (one module each)
    ("model", "codegen", "storage"),  # pure arithmetic; rendering; the store and user folders
    ("tools",),                      # the edges that run processes and third-party tools
    ("request", "results"),          # what is asked; what is answered
    ("pipeline", "report"),          # orchestration; renderers of results
    ("cli", "api"),                  # the two entries, both over the pipeline
    ("autotune", "__main__"),
)

# imports that break the floors, each with its reason: (importing module, imported module)
KNOWN_EXCEPTIONS: dict[tuple[str, str], str] = {}


def module_name(path: Path) -> tuple[str, bool]:
    """autotune/specs/ivp.py -> ("autotune.specs.ivp", False); a package's __init__ -> (its name, True)."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    return ".".join(parts[:-1] if is_package else parts), is_package


def is_module(name: str) -> bool:
    """Whether autotune.x.y is a module or package of this tree (not a name defined in one)."""
    parts = name.split(".")
    if parts[0] != "autotune":
        return False
    base = ROOT.joinpath(*parts)
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def _resolve(module: str | None, level: int, package: str, where: str) -> str:
    if not level:
        return module or ""
    base = package.split(".")
    if level - 1 >= len(base):
        raise AssertionError(f"{where}: relative import beyond the top-level package")
    base = base[:len(base) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def _literal_prefix(arg: ast.expr) -> str | None:
    """The module named by import_module's argument: a literal, or an f-string's leading literal
    up to its last dot (f"autotune.report.{name}" -> autotune.report); None where it is not known."""
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value
    if isinstance(arg, ast.JoinedStr) and arg.values and isinstance(arg.values[0], ast.Constant):
        head = str(arg.values[0].value)
        return head.rpartition(".")[0] or None
    return None


def imports_in(source: str, name: str, is_package: bool, where: str = "") -> list[tuple[int, str]]:
    """(line, module imported) for every import in a module's source, at any depth."""
    package = name if is_package else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(node.module, node.level, package, f"{where}:{node.lineno}")
            for a in node.names:
                sub = f"{base}.{a.name}"
                found.append((node.lineno, sub if a.name != "*" and is_module(sub) else base))
        elif isinstance(node, ast.Call) and node.args:
            f = node.func
            fname = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            if fname in ("import_module", "__import__"):
                target = _literal_prefix(node.args[0])
                if target:
                    found.append((node.lineno, target))
    return list(dict.fromkeys(found))


def room_of(module: str) -> str | None:
    """autotune.specs.ivp -> "specs", autotune.api -> "api", autotune -> "autotune"; None outside."""
    parts = module.split(".")
    if parts[0] != "autotune":
        return None
    return parts[1] if len(parts) > 1 else "autotune"


def _floors() -> dict[str, tuple[int, str]]:
    """package -> (floor, room)"""
    return {package: (i, room) for i, floor in enumerate(FLOORS) for room in floor for package in room.split("+")}


def package_modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def all_imports() -> list[tuple[str, str, int, str]]:
    """(importing module, its file, line, imported module) over the package."""
    out = []
    for f in package_modules():
        name, is_package = module_name(f)
        where = str(f.relative_to(ROOT))
        out += [(name, where, line, target) for line, target in imports_in(f.read_text(), name, is_package, where)]
    return out


def _breaks(importer: str, target: str) -> str | None:
    floors = _floors()
    src, dst = room_of(importer), room_of(target)
    if dst is None or src is None:
        return None
    (fs, rs), (fd, rd) = floors[src], floors[dst]
    if rs == rd or fd < fs:
        return None
    return f"{rs} (floor {fs}) imports {rd} (floor {fd})" + (", a room of its own floor" if fd == fs else "")


def test_the_import_reader_sees_every_form():
    """The reader itself: relative imports resolved from a module and from a package's
    __init__, `import a.b`, `from a import b` where b is a module or a name, imports inside
    functions and under a condition, import_module of a literal and of an f-string."""
    source = """
import os, autotune.model.bound
from autotune.errors import InputError
from autotune import specs
from . import ivp
from .machine import load_machine
from ..model import ecm
from .. import pipeline
def f():
    import autotune.report.render as r
    from ..api import tune
if TYPE_CHECKING:
    from autotune.results.rank import RankResult
importlib.import_module("autotune.cli.main")
importlib.import_module(f"autotune.report.{name}")
importlib.import_module(name)
"""
    got = [t for _, t in imports_in(source, "autotune.specs.x", False)]
    assert got.count("os") == 1 and sorted(set(got) - {"os"}) == sorted([
        "autotune.model.bound", "autotune.errors", "autotune.specs", "autotune.specs.ivp", "autotune.specs.machine",
        "autotune.model.ecm", "autotune.pipeline", "autotune.report.render", "autotune.results.rank",
        "autotune.cli.main", "autotune.report", "autotune.api"]), got
    with pytest.raises(AssertionError, match="beyond the top-level package"):
        imports_in("from ...x import y", "autotune.specs.x", False)
    assert [t for _, t in imports_in("from . import ivp\nfrom .. import api", "autotune.specs", True)] == [
        "autotune.specs.ivp", "autotune.api"]
    assert [t for _, t in imports_in("from . import api, InputError", "autotune", True)] == ["autotune.api", "autotune"]
    assert _breaks("autotune.specs.x", "autotune.model.ecm") and _breaks("autotune.specs.x", "autotune")
    assert _breaks("autotune.report.x", "autotune.pipeline.entry").endswith("a room of its own floor")
    assert not _breaks("autotune.dimensions.x", "autotune.specs.step") and not _breaks("autotune.specs.x", "os")
    assert not _breaks("autotune.pipeline.x", "autotune.specs.step") and _breaks("autotune.dimensions.x", "autotune.model")


def test_every_room_is_on_one_floor_and_every_floor_room_exists():
    floors = _floors()
    declared = [p for floor in FLOORS for room in floor for p in room.split("+")]
    assert len(declared) == len(set(declared)), "a package is on two floors"
    here = {room_of(module_name(f)[0]) for f in package_modules()}
    assert here - set(floors) == set(), "a package or module of autotune is on no floor: add it to FLOORS"
    assert set(floors) - here == set(), "FLOORS names a package that is not there"


def test_every_import_points_down_the_floors():
    imports = all_imports()
    internal = {(m, t) for m, _, _, t in imports if room_of(t) and room_of(t) != room_of(m)}
    assert len(internal) > 200, "the reader found too few imports between rooms to be reading them"
    broken = [f"{where}:{line} imports {t}: {_breaks(m, t)}" for m, where, line, t in imports
              if _breaks(m, t) and (m, t) not in KNOWN_EXCEPTIONS]
    assert broken == [], "\n".join(broken)
    stale = sorted(set(KNOWN_EXCEPTIONS) - {(m, t) for m, _, _, t in imports})
    assert stale == [], f"known exceptions that no longer occur: {stale}"


def test_the_package_imports_no_benchmark():
    """The benchmarks (benchmarks/) use the package; the package never imports them."""
    found = [f"{where}:{line} imports {t}" for _, where, line, t in all_imports()
             if t == "benchmarks" or t.startswith("benchmarks.")]
    assert found == []

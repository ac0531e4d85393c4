"""The documentation names what exists.  In docs/*.md and README.md:

- every module named (`autotune.model.reuse`, `model.reuse.level_reach`, `python -m X`) and every
  path of the checkout (`autotune/model/reuse.py`, `autotune/tools/stream.c`) exists: a module as a
  file of the checkout (or, outside it, an installed module), an attribute as a top-level name of
  its module (or one it exports on demand);
- every command (`autotune <cmd>`) is a subcommand of the command line, and every option given
  to a named command is one of that command's options (argparse, autotune.cli.main); an option
  named alone is one of some command's;
- every link to a section (`tuning.md#racing`, `#porting`) resolves to a heading of that file.

In the code (the package, tests, templates, benchmarks) every cited `docs/x.md#anchor` resolves to
a heading of docs/x.md (GitHub's anchor rules), and no file cites the founders' notes that are
not part of the repository.  A failure names the file and each wrong name.
"""
from __future__ import annotations

import ast
import importlib
import importlib.util
import re
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]
CODE_DIRS = ("autotune", "tests", "variants", "benchmarks", "benchmarks_mpi", "machines", "ivps")
# paths checked (machines/ and ivps/ also stand for a user's own folders in examples)
FOLDERS = ("autotune", "benchmarks", "benchmarks_mpi", "variants", "tests", "docs")
SUBPACKAGES = ("cli", "codegen", "dimensions", "model", "pipeline", "report", "request", "results",
               "specs", "storage", "tools")
# options of other programs that the docs name on their own (pytest's option of tests/conftest.py,
# the test cluster's script tests/slurm/up, srun's and sbatch's)
FOREIGN_OPTIONS = {"--all-variants", "--cpus-per-node", "--partitions", "--quota-small", "--mpi", "--exclusive",
                   "--cpus-per-task"}
NOTES = ("METHOD" + ".md", "DESIGN" + ".md")    # written apart so that this file does not cite them

SPAN = re.compile(r"`([^`\n]+)`")
# a dotted name, not a file name (api.py, model.md) nor part of a path
DOTTED = re.compile(r"(?<![\w./-])((?:autotune|benchmarks|benchmarks_mpi|%s)(?:\.[A-Za-z_]\w*)+)(?![\w/])"
                    % "|".join(SUBPACKAGES))
FILE_SUFFIXES = {"py", "md", "c", "j2", "yaml", "yml", "json", "jsonl", "csv", "png", "sqlite", "txt", "toml"}
PATH = re.compile(r"(?<![\w/.~$<{-])((?:%s)/[\w./-]*)" % "|".join(FOLDERS))
RUN_MODULE = re.compile(r"python3?\s+(?:-\w\s+)*-m\s+([\w.]+)")
COMMAND = re.compile(r"(?<![\w./-])autotune[ \t]+([a-z][\w-]*)")
OPTION = re.compile(r"(?<![\w=-])(--[a-z][\w-]*)")
LINK = re.compile(r"\]\(([^)\s]*)\)")
CITE = re.compile(r"docs/([\w-]+\.md)(?:#([\w-]+))?")


# ---- Markdown ----

def code_lines(text: str) -> list[tuple[bool, str]]:
    """(is code, line) for every line: fenced blocks and indented blocks (4 spaces after a blank
    line or another code line) are code."""
    out, fenced, prev_code, prev_blank = [], False, False, True
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            out.append((True, ""))
            prev_code, prev_blank = True, False
            continue
        blank = not line.strip()
        code = fenced or (not blank and line.startswith("    ") and (prev_blank or prev_code))
        out.append((code, line))
        prev_code = code or (prev_code and blank)
        prev_blank = blank
    return out


def code_texts(text: str) -> list[str]:
    """The code of a Markdown file: its code lines, and each inline code span of the others."""
    out = []
    for code, line in code_lines(text):
        out += [line] if code else SPAN.findall(line)
    return out


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: its text as rendered, lower case, without punctuation other
    than hyphens and underscores, each space a hyphen."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = re.sub(r"<[^>]+>", "", text).replace("`", "")
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


@lru_cache(maxsize=None)
def anchors(path: Path) -> frozenset[str]:
    """The anchors of a Markdown file's headings (a repeated one gets -1, -2, ...)."""
    seen: dict[str, int] = {}
    out = set()
    for code, line in code_lines(path.read_text()):
        m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if code or not m:
            continue
        base = slug(m.group(1))
        k = seen.get(base, 0)
        seen[base] = k + 1
        out.add(base if k == 0 else f"{base}-{k}")
    return frozenset(out)


# ---- what exists ----

def _module_file(parts: list[str]) -> Path | None:
    base = ROOT.joinpath(*parts)
    for f in (base.with_suffix(".py"), base / "__init__.py"):
        if f.is_file():
            return f
    return None


@lru_cache(maxsize=None)
def _top_names(path: Path) -> frozenset[str]:
    names = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                names.update(n.id for n in ast.walk(t) if isinstance(n, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return frozenset(names)


def module_problem(dotted: str) -> str | None:
    """Why a dotted name (a module, or a module and an attribute) names nothing; None if it exists."""
    parts = dotted.split(".")
    if parts[0] in SUBPACKAGES:
        parts = ["autotune"] + parts
    found = 0
    for k in range(len(parts), 0, -1):
        if _module_file(parts[:k]):
            found = k
            break
    if not found:
        return "no such module"
    if found == len(parts):
        return None
    module, attr = parts[:found], parts[found]
    path = _module_file(module)
    if attr in _top_names(path) or _module_file(module + [attr]):
        return None
    try:       # a module the installation maps elsewhere (autotune.data.ivps is ivps/), or a name
        # the module makes on demand (autotune's API and result types)
        if importlib.util.find_spec(".".join(module + [attr])):
            return None
    except ImportError:
        pass
    try:
        getattr(importlib.import_module(".".join(module)), attr)
        return None
    except Exception:
        return f"{'.'.join(module)} has no {attr!r}"


def installed(name: str) -> bool:
    """Whether another distribution's module is installed, found without importing it (nor its
    package: `mpi4py.futures` must not import mpi4py here)."""
    top, *rest = name.split(".")
    spec = importlib.util.find_spec(top)
    if spec is None or not rest:
        return spec is not None
    for folder in spec.submodule_search_locations or ():
        base = Path(folder).joinpath(*rest)
        if base.with_suffix(".py").is_file() or (base / "__init__.py").is_file():
            return True
    return False


def run_module_problem(name: str) -> str | None:
    if name.split(".")[0] in ("autotune", "benchmarks", "benchmarks_mpi"):
        return None if _module_file(name.split(".")) else "no such module to run"
    return None if installed(name) else "not installed"


@lru_cache(maxsize=None)
def command_options() -> dict[str, frozenset[str]]:
    """Each subcommand of the command line and its options."""
    from autotune.cli.main import build_parser
    parser = build_parser(complete=True)
    sub = next(a for a in parser._actions if a.choices and isinstance(a.choices, dict))
    return {name: frozenset(p._option_string_actions) for name, p in sub.choices.items()}


def commands_in(lines: list[str]) -> list[tuple[str, str]]:
    """(command, the text of its arguments) of every `autotune <cmd>` in these code lines: the
    rest of its line (quoted values, comments and what follows a shell separator left out), and
    the lines after it that are indented further (a command written over several lines)."""
    out = []
    i = 0
    while i < len(lines):
        m = COMMAND.search(lines[i])
        if not m:
            i += 1
            continue
        args, indent = lines[i][m.end():], len(lines[i]) - len(lines[i].lstrip())
        while i + 1 < len(lines) and lines[i + 1].strip() and not COMMAND.search(lines[i + 1]) and (
                len(lines[i + 1]) - len(lines[i + 1].lstrip()) > indent or lines[i].rstrip().endswith("\\")):
            i += 1
            args += " " + lines[i]
        args = re.sub(r"\"[^\"]*\"|'[^']*'", "", args)
        args = re.split(r"\s#|&&|\|\||;|\s\|\s|>", args)[0]
        out.append((m.group(1), args))
        i += 1
    return out


def doc_problems(path: Path) -> list[str]:
    text = path.read_text()
    code = code_texts(text)
    options = command_options()
    every_option = frozenset().union(*options.values())
    bad = []
    for chunk in code:
        for name in DOTTED.findall(chunk):
            if name.rsplit(".", 1)[-1] in FILE_SUFFIXES:
                continue
            why = module_problem(name.rstrip("."))
            if why:
                bad.append(f"module {name}: {why}")
        for name in RUN_MODULE.findall(chunk):
            why = run_module_problem(name)
            if why:
                bad.append(f"python -m {name}: {why}")
        if re.fullmatch(r"\s*--[a-z][\w-]*(?:[ =]\S+)?\s*", chunk):
            opt = OPTION.match(chunk.strip()).group(1)
            if opt not in every_option and opt not in FOREIGN_OPTIONS:
                bad.append(f"option {opt}: no command has it")
    blocks: list[list[str]] = [[]]
    for is_code, line in code_lines(text):
        if is_code:
            blocks[-1].append(line)
        elif blocks[-1]:
            blocks.append([])
    spans = [s for is_code, line in code_lines(text) if not is_code for s in SPAN.findall(line)]
    for lines in blocks + [[s] for s in spans]:
        for cmd, args in commands_in(lines):
            if cmd not in options:
                bad.append(f"command autotune {cmd}: no such command")
                continue
            bad += [f"option {opt} of autotune {cmd}: no such option" for opt in OPTION.findall(args)
                    if opt not in options[cmd]]
    for name in PATH.findall(text):
        name = name.rstrip("./")
        if name and not (ROOT / name).exists():
            bad.append(f"path {name}: not in the checkout")
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        dest = (path.parent / file).resolve() if file else path
        if not dest.exists():
            bad.append(f"link {target}: no file {file}")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            bad.append(f"link {target}: no heading #{anchor} in {dest.name}")
    return sorted(set(bad))


def code_files():
    """The code's text files (this test's own examples left out)."""
    me = Path(__file__).resolve()
    for folder in CODE_DIRS:
        base = ROOT / folder
        if base.is_dir():
            yield from (p for p in sorted(base.rglob("*")) if p.is_file() and p.resolve() != me
                        and "__pycache__" not in p.parts and p.suffix in (".py", ".j2", ".c", ".sh", ".yaml", ""))


# ---- the tests ----

def _report(problems: dict[str, list[str]]) -> str:
    return "\n".join(f"{f}: {p}" for f, ps in problems.items() for p in ps)


def test_docs_name_what_exists():
    problems = {str(p.relative_to(ROOT)): doc_problems(p) for p in DOCS if p.exists()}
    problems = {f: ps for f, ps in problems.items() if ps}
    assert not problems, "names in the docs that do not exist:\n" + _report(problems)


def test_code_cites_sections_that_exist():
    problems: dict[str, list[str]] = {}
    for path in code_files():
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        for file, anchor in CITE.findall(text):
            doc = ROOT / "docs" / file
            if not doc.exists():
                problems.setdefault(str(path.relative_to(ROOT)), []).append(f"docs/{file}: no such file")
            elif anchor and anchor not in anchors(doc):
                problems.setdefault(str(path.relative_to(ROOT)), []).append(
                    f"docs/{file}#{anchor}: no such heading (headings: {', '.join(sorted(anchors(doc)))})")
    assert not problems, "citations of docs/ sections that do not resolve:\n" + _report(problems)


def test_nothing_cites_notes_outside_the_repository():
    files = list(code_files()) + DOCS + [ROOT / "pyproject.toml"]
    problems = {}
    for path in files:
        try:
            text = path.read_text()
        except (UnicodeDecodeError, FileNotFoundError):
            continue
        named = [n for n in NOTES if n in text]
        if named:
            problems[str(path.relative_to(ROOT))] = [f"cites {n}, which is not in the repository" for n in named]
    assert not problems, "\n" + _report(problems)


def test_the_checks_catch_what_they_guard(tmp_path):
    """The checks themselves: a wrong module, command, option, path and anchor are each named."""
    doc = tmp_path / "x.md"
    doc.write_text("# Title\n\nSee `autotune.model.nosuch` and `model.reuse.nosuch`, `autotune/nosuch.py`,\n"
                   "[a](#nosuch) and [b](#title).\n\n    autotune rank --ivp heat2d --nosuch 3\n"
                   "    autotune nosuchcmd\n    python -m autotune.nosuch\n")
    got = doc_problems(doc)
    for wrong in ("module autotune.model.nosuch", "module model.reuse.nosuch", "path autotune/nosuch.py",
                  "link #nosuch", "option --nosuch of autotune rank", "command autotune nosuchcmd",
                  "python -m autotune.nosuch"):
        assert any(p.startswith(wrong) for p in got), (wrong, got)
    assert not any("#title" in p for p in got), got
    assert slug("What `calibrate --from-runs` learns from") == "what-calibrate---from-runs-learns-from"
    assert slug("The machine's state, measured in the same run") == "the-machines-state-measured-in-the-same-run"

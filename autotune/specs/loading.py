"""Load a YAML data file by shipped name or path and validate it against a schema.  A file's
parse is kept between commands (specs.parsedfiles), so PyYAML is imported only to parse a text
not seen before."""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from autotune.errors import InputError
from autotune.specs import parsedfiles
from autotune.specs.schema import check_keywords, first_error


@lru_cache(maxsize=1)
def _loader():
    """Safe loading (libyaml's where installed: several times faster on the big machine files),
    plus: ordered maps (kerncraft's !!omap) become dicts, YAML 1.2 floats.  A change of these
    rules changes parsedfiles.FORMAT."""
    import yaml

    class Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
        pass

    def omap_as_dict(loader, node):
        return {loader.construct_object(k, deep=True): loader.construct_object(v, deep=True)
                for sub in node.value for k, v in sub.value}

    Loader.add_constructor("tag:yaml.org,2002:omap", omap_as_dict)
    # YAML 1.2 floats such as 5e-07 (what ruamel writes; PyYAML's 1.1 rules read them as strings)
    Loader.add_implicit_resolver(
        "tag:yaml.org,2002:float",
        re.compile(r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
        list("-+0123456789"))
    return yaml, Loader


def names_a_path(name_or_path: str) -> bool:
    """A YAML suffix or a directory part makes it a path; anything else is a name first."""
    p = Path(name_or_path)
    return p.suffix in (".yaml", ".yml") or len(p.parts) > 1


def beside(name_or_path: str, folder: Path | str) -> str:
    """A name or path written in a file: a path (see names_a_path) is taken relative to the
    file's folder and made absolute (an absolute one stays as it is); a name stays a name."""
    if not names_a_path(name_or_path):
        return name_or_path
    return str(absolute_path(Path(folder) / name_or_path))


def absolute_path(path: Path | str) -> Path:
    """The path from the root, 'folder/..' folded away, links not resolved (a path through a
    link stays one that every node mounting it can follow); after a link '..' is its target's
    parent, so it stays there."""
    out = Path()
    for part in Path(path).absolute().parts:
        if part == ".." and out.name not in ("", "..") and not out.is_symlink():
            out = out.parent
        else:
            out = out / part
    return out


def resolve(name_or_path: str, shipped_dir: Path, kind: str, user_dir: Path | None = None) -> Path:
    """A name (file stem in user_dir, then shipped_dir) or a path to a user's file.  A bare name
    that is known wins over a file of that name in the working directory (an executable called
    heat2d there is not an IVP file); a path with a YAML suffix or a directory part is a path."""
    p = Path(name_or_path)
    is_path = names_a_path(name_or_path)
    if not is_path:
        for d in ([user_dir] if user_dir else []) + [shipped_dir]:
            for ext in (".yaml", ".yml"):
                cand = d / f"{name_or_path}{ext}"
                if cand.is_file():
                    return cand
    if is_path or p.exists():
        if not p.is_file():
            raise InputError(f"{kind} file {p}: no such file")
        return p
    known = ", ".join(sorted(set(shipped_names(shipped_dir)) | set(shipped_names(user_dir) if user_dir else ()))) or "none"
    raise InputError(f"unknown {kind} '{name_or_path}' (known: {known}; or give a path to a YAML file)")


def shipped_names(shipped_dir: Path | None) -> list[str]:
    if shipped_dir is None or not shipped_dir.is_dir():
        return []
    return sorted(p.stem for p in shipped_dir.glob("*.y*ml"))


def read_yaml(path: Path) -> dict:
    try:
        text = path.read_text()
    except OSError as e:
        raise InputError(f"{path}: cannot read ({e.strerror})") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: not a text (YAML) file") from None
    return parse_yaml(text, path)


def parse_yaml(text: str, path: Path | str) -> dict:
    data = parsedfiles.kept(text, path)
    if isinstance(data, dict):
        return data
    yaml, loader = _loader()
    try:
        data = yaml.load(text, Loader=loader)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise InputError(f"{path}:{where} malformed YAML: {problem}") from None
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected a YAML mapping at the top level")
    parsedfiles.keep(text, path, data)
    return data


def field_path(where) -> str:
    """('scenarios', 3, 'threads') -> 'scenarios[3].threads'."""
    out = ""
    for p in where:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


_CHECKED: set[int] = set()     # the schemas whose keywords were checked (by id: they are module constants)


def validate(data: dict, schema: dict, path: Path | str) -> None:
    """Raise InputError naming the file, the field and the expectation (a schema with a keyword
    the validator does not implement: ValueError, once per schema)."""
    if id(schema) not in _CHECKED:
        check_keywords(schema)
        _CHECKED.add(id(schema))
    err = first_error(data, schema)
    if err:
        where, message = err
        field = field_path(where) or "(top level)"
        raise InputError(f"{path}: field '{field}': {message}")

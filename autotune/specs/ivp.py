"""Initial value problems as data: one YAML file per IVP in ivps/."""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from autotune.errors import InputError
from autotune.specs.formula import FormulaError, evaluate
from autotune.specs.grid import Grid, GridError, check as check_grid
from autotune.specs.interleave import SUFFIX as TWIN, is_twin, twin_data
from autotune.specs.schemes import SCHEMES
from autotune.specs.shipped import shipped_dir
from autotune.specs.loading import read_yaml, resolve, shipped_names, validate

_FORMULA = {"type": ["string", "number"]}
SCHEMA = {
    "type": "object",
    "required": ["name", "size_parameter", "n", "access_distance", "default_n", "comm", "rhs"],
    "additionalProperties": False,
    "properties": {
        "name": {"type": "string", "pattern": r"^[A-Za-z0-9_.-]+$"},
        "description": {"type": "string"},
        "size_parameter": {"type": "string", "pattern": r"^[A-Za-z_]\w*$"},
        "n": _FORMULA,
        "access_distance": _FORMULA,
        "default_n": {"type": "integer", "minimum": 1},
        "comm": {"type": "array", "minItems": 1, "items": {"type": "string"}},
        "sparse_halo": {"type": "integer", "minimum": 0},
        "initial": {"type": "string"},
        "step_size": _FORMULA,
        "constants": {"type": "object", "additionalProperties": _FORMULA},
        "grid": {
            "type": "object",
            "required": ["extent", "reach"],
            "additionalProperties": False,
            "properties": {
                "extent": {"type": "array", "minItems": 2, "items": _FORMULA},
                "reach": {"type": "array", "minItems": 2, "items": {"type": "integer", "minimum": 0}},
            },
        },
        "rhs": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["name", "components", "halo", "expr"],
                "additionalProperties": False,
                "properties": {
                    "name": {"type": "string", "pattern": r"^[A-Za-z_]\w*$"},
                    "components": _FORMULA,
                    "halo": _FORMULA,
                    "start": {"type": "integer", "minimum": 0},
                    "step": {"type": "integer", "minimum": 1},
                    "expr": {"type": "string"},
                },
            },
        },
    },
}

@lru_cache(maxsize=65536)
def _eval_int(formula: str, name: str, value: int) -> int:
    """A size formula at one value of the size parameter (memoised: sweeps ask often)."""
    return int(evaluate(formula, {name: value}))


@lru_cache(maxsize=65536)
def _size_at_least(n_formula: str, name: str, n: int) -> int:
    """The smallest size parameter whose n is at least n (n is increasing in it for every form)."""
    lo, hi = 1, max(2, n)
    while lo < hi:
        mid = (lo + hi) // 2
        if _eval_int(n_formula, name, mid) < n:
            lo = mid + 1
        else:
            hi = mid
    return lo


_ARRAY_REF = re.compile(r"\b([A-Za-z_]\w*)\s*\[")
_IDENT = re.compile(r"\b([A-Za-z_]\w*)\b")


@dataclass(frozen=True)
class RhsPart:
    name: str
    components: str      # formula in the size parameter: components this part updates
    halo: str            # formula: largest index offset of the part's accesses
    start: int           # first index within the loop (0, or 1 for an odd stride-2 part)
    step: int            # loop increment (2 for interleaved storage)
    expr: str            # C expression of the interior, arrays indexed by j
    arrays: tuple[str, ...]   # input arrays referenced in expr


@dataclass(frozen=True)
class IVP:
    name: str
    description: str
    size_parameter: str
    n_formula: str
    distance_formula: str
    default_n: int
    comm: tuple[str, ...]
    sparse_halo: int
    constants: tuple[tuple[str, str], ...]
    rhs: tuple[RhsPart, ...]
    path: str
    initial: str = ""    # C expression of y_j(t0) in j (global index), the size parameter and n
    step_size: str = ""  # formula in the size parameter: a step size the fixed-point iteration converges for
    grid: Grid | None = None   # the components as a grid (specs.grid); None: a flat vector only

    def default_step(self, n: int) -> float:
        if not self.step_size:
            raise InputError(f"{self.path}: field 'step_size': required to run the solver (or give --h)")
        return float(evaluate(self.step_size, {self.size_parameter: self.size_value(n)}))

    def size_value(self, n: int) -> int:
        """The size parameter that gives exactly n components, or InputError."""
        lo = _size_at_least(self.n_formula, self.size_parameter, n)
        if self.n_of(lo) != n:
            below = max(v for v in (self.n_of(max(lo - 1, 1)), self.n_of(lo)) if v <= n) if self.n_of(1) <= n else None
            hint = f"; nearest valid n below is {below}" if below else ""
            raise InputError(f"{n}: {self.name} needs n = {self.n_formula} for an integer {self.size_parameter}{hint}",
                             field="n")
        return lo

    def nearest_n(self, n: int) -> int:
        """The valid system size nearest to n (the smaller one on a tie); sweeps snap to it."""
        lo = _size_at_least(self.n_formula, self.size_parameter, n)
        candidates = [self.n_of(lo)] + ([self.n_of(lo - 1)] if lo > 1 else [])
        return min(candidates, key=lambda v: (abs(v - n), v))

    def least_n(self, n: int) -> int:
        """The least valid system size of at least n."""
        return self.n_of(_size_at_least(self.n_formula, self.size_parameter, n))

    def n_of(self, size: int) -> int:
        return _eval_int(self.n_formula, self.size_parameter, size)

    def access_distance(self, n: int) -> int:
        return _eval_int(self.distance_formula, self.size_parameter, self.size_value(n))

    def part_halo(self, part: RhsPart, n: int) -> int:
        """The largest index offset of one RHS part at system size n."""
        return _eval_int(part.halo, self.size_parameter, self.size_value(n))

    def halo(self, n: int) -> int:
        """The largest index offset of any part at system size n (at least 1): the halo width of
        the RHS input buffers."""
        return max(1, max(self.part_halo(p, n) for p in self.rhs))

    def part_components(self, part: RhsPart, n: int) -> int:
        return _eval_int(part.components, self.size_parameter, self.size_value(n))

    def constant_values(self, n: int) -> dict[str, float]:
        env = {self.size_parameter: self.size_value(n)}
        return {k: float(evaluate(v, env)) for k, v in self.constants}


def _check_formula(text, names, path, field):
    try:
        evaluate(text, {k: 7 for k in names})
    except FormulaError as e:
        raise InputError(f"{path}: field '{field}': {e}") from None


def parse_ivp(data: dict, path: Path | str) -> IVP:
    validate(data, SCHEMA, path)
    sp = data["size_parameter"]
    for field in ("n", "access_distance"):
        _check_formula(data[field], [sp], path, field)
    if "step_size" in data:
        _check_formula(data["step_size"], [sp], path, "step_size")
    consts = data.get("constants", {}) or {}
    for k, v in consts.items():
        _check_formula(v, [sp], path, f"constants.{k}")
    parts = []
    for i, part in enumerate(data["rhs"]):
        for field in ("components", "halo"):
            _check_formula(part[field], [sp], path, f"rhs[{i}].{field}")
        expr = part["expr"]
        arrays = tuple(dict.fromkeys(_ARRAY_REF.findall(expr)))
        if not arrays:
            raise InputError(f"{path}: field 'rhs[{i}].expr': expected array references like y[j-1], got {expr!r}")
        if "F" in arrays:
            raise InputError(f"{path}: field 'rhs[{i}].expr': 'F' is the output array and cannot be read")
        known = set(arrays) | set(consts) | {"j", sp, "fmax", "fmin"}
        unknown = sorted(set(_IDENT.findall(expr)) - known)
        if unknown:
            raise InputError(f"{path}: field 'rhs[{i}].expr': unknown name(s) {', '.join(unknown)} "
                             f"(use constants, arrays x[...], j or {sp})")
        if expr.count("(") != expr.count(")") or expr.count("[") != expr.count("]"):
            raise InputError(f"{path}: field 'rhs[{i}].expr': unbalanced brackets in {expr!r}")
        parts.append(RhsPart(part["name"], str(part["components"]), str(part["halo"]),
                             part.get("start", 0), part.get("step", 1), expr, arrays))
    for scheme in data["comm"]:
        if scheme not in SCHEMES:
            raise InputError(f"{path}: field 'comm': unknown scheme {scheme!r} (known: {', '.join(SCHEMES)})")
    if "sparse" in data["comm"] and "sparse_halo" not in data:
        raise InputError(f"{path}: field 'sparse_halo': required when 'sparse' is among the comm schemes")
    grid = None
    if "grid" in data:
        grid = Grid(tuple(str(e) for e in data["grid"]["extent"]), tuple(data["grid"]["reach"]))
        try:
            check_grid(grid, str(data["n"]), sp, [p.expr for p in parts])
        except GridError as e:
            raise InputError(f"{path}: field 'grid': {e}") from None
    return IVP(data["name"], data.get("description", "").strip(), sp, str(data["n"]),
               str(data["access_distance"]), data["default_n"], tuple(data["comm"]),
               data.get("sparse_halo", 0), tuple((k, str(v)) for k, v in consts.items()),
               tuple(parts), str(path), data.get("initial", ""), str(data.get("step_size", "")), grid)


def interleaved(ivp: IVP) -> IVP:
    """The IVP's interleaved twin (specs.interleave: two coupled blocks stored interleaved;
    CannotRun where it has none); a twin is its own.  Its path is the IVP's with TWIN after it,
    which load_ivp reads back as the twin."""
    return ivp if is_twin(ivp) else _twin(ivp)


@lru_cache(maxsize=64)
def _twin(ivp: IVP) -> IVP:
    return parse_ivp(twin_data(ivp), ivp.path + TWIN)


def load_ivp(name_or_path: str) -> IVP:
    """An IVP by name (shipped) or path; `<name or path>.interleaved` is its interleaved twin."""
    name_or_path = str(name_or_path)
    if name_or_path.endswith(TWIN) and len(name_or_path) > len(TWIN):
        return interleaved(load_ivp(name_or_path[:-len(TWIN)]))
    path = resolve(name_or_path, shipped_dir("ivps"), "IVP")
    return parse_ivp(read_yaml(path), path)


def ivp_names() -> list[str]:
    return shipped_names(shipped_dir("ivps"))

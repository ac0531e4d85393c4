"""What we change in kerncraft's cache and assembly handling, applied once per analysis worker
(kerncraft_backend.init_worker).  Each change names why; none changes what a working analysis
computes, except where kerncraft's own answer was wrong for our kernels (the victim caches).

- x86 assembly is parsed in the syntax it is written in.  kerncraft (with OSACA >= 0.7) tries
  Intel syntax first on every parse and falls back to AT&T (what gcc and clang emit): that built
  OSACA's Intel parser (12 s on a slow core) and parsed every file twice, four times per
  analysis.  AT&T names registers with a `%` prefix and Intel syntax never does, which decides
  it.  OSACA's AT&T parser is built once per process too.
- OSACA parses each assembly line with pyparsing, a few milliseconds a line, and an analysis
  parses the same lines several times (the loop, then the loop instrumented with markers; the
  in-core half, then each regime's).  A line's parse is kept per parser class and line text,
  pickled, and each parse hands out a fresh copy of it (unpickled: a third of a deep copy's
  time) with its own line number (the analysis changes the forms it is given): a quarter less
  time per analysis, the same results.
- OSACA keeps every machine model it loads in a runtime cache, then reads its pickle again on the
  next construction anyway (five times per analysis, half a second each on a slow core); here
  a model already in the runtime cache is taken from there.  The runtime cache keeps no lazy
  load (the file up to its instruction forms, read with ruamel: a tenth of a second on a slow
  core), which OSACA's report (its Frontend) makes once per analysis: each lazy load is kept
  too, per file and its modification (its inode, size and times).
- The layer-condition predictor splits an array index into per-dimension offsets and drops a
  term that is a multiple of a symbol where the dimension's factor is a sum: the third row of
  y[4][M + 2*N] at j - N is 2*(M + 2*N) + j - N, whose 2*M it loses ("Unable to split
  expression").  The split here keeps every term no larger factor claims in the last dimension
  (factor 1), which reassembles the index exactly; the predictor only ever uses the reassembled
  offsets.
- The layer-condition predictor counts, as the lines a level sends to the next, only the
  written lines it evicts.  A level whose evicted lines go to a victim cache (`victims_to` in
  the machine file: Zen's L2 into its L3) sends every line it evicts, clean or not: in steady
  state as many as it loads.  kerncraft's cache simulator counts them so; its layer-condition
  predictor, made victim-aware here, now does too.
- A machine file may name an OSACA architecture file of its own (`port model file`, from
  `calibrate --node --port-model FILE`: a model newer than the installed OSACA ships).  kerncraft
  hands OSACA only the model's name (`in-core model: OSACA`), and OSACA finds `<name>.yml` in its
  data folders; so each time kerncraft loads a machine file, that name is pointed at the file it
  gives (its digest checked first), or back at OSACA's own where it gives none.  OSACA's table of
  each name's ISA learns the file's too.
"""
from __future__ import annotations

import functools
import operator
import re
from functools import reduce


def x86_syntax(code: str) -> str:
    """The syntax of x86 assembly: ATT where a register is named with its % prefix."""
    return "ATT" if re.search(r"%[a-z]", code) else "INTEL"


def split_access(expr, dimension_factors):
    """kerncraft.cacheprediction.split_sympy_access_in_dim_offset, with every term that no larger
    dimension factor claims kept in the last dimension (factor 1)."""
    import sympy
    terms = expr.expand().as_ordered_terms()
    coefficients = [sympy.Integer(0)] * len(dimension_factors)
    for term in terms:
        for index, factor in enumerate(dimension_factors):
            c = term if factor == 1 else term.coeff(factor)
            if c:
                coefficients[index] += c
                break
    if expr.expand() != reduce(operator.add, [c * f for c, f in zip(coefficients, dimension_factors)], 0).expand():
        raise ValueError(f"Unable to split expression and reproduce from coefficients and factors: {terms!r} "
                         f"with {dimension_factors!r}")
    return tuple(coefficients)


def victim_sources(hierarchy: list) -> list[int]:
    """Indices of the cache levels whose evicted lines go to a victim cache below them."""
    return [i for i, level in enumerate(hierarchy[:-1]) if (level.get("cache per group") or {}).get("victims_to")]


def with_victims(stores: list, loads: list, sources: list[int]) -> list:
    """Lines sent across each interface (stores[k]: from level k-1 to level k) where the levels in
    `sources` evict every line into a victim cache: as many as they load."""
    out = list(stores)
    for i in sources:
        out[i + 1] = max(out[i + 1], loads[i + 1])
    return out


# what the patches here and in kerncraft_backend replace or read, by module: each must exist in
# the installed kerncraft and OSACA, or a patch would silently do nothing (missing_targets)
TARGETS = {
    "kerncraft.incore_model": ("get_parser", "osaca", "detect_x86_syntax", "parse_asm", "find_increment_in_cache",
                               "x86.get_pointer_increment", "AArch64.get_pointer_increment", "ISASemantics"),
    "kerncraft.cacheprediction": ("split_sympy_access_in_dim_offset", "LayerConditionPredictor.get_stores",
                                  "LayerConditionPredictor.get_loads"),
    "kerncraft.models.ecm": ("LayerConditionPredictor", "ECM.analyze", "ECMCPU.conv_cy", "ECMData"),
    "kerncraft.machinemodel": ("MachineModel.__init__", "MachineModel.get_compiler"),
    "kerncraft.kernel": ("KernelCode.get_kernel_code", "KernelCode.CODE_TEMPLATE"),
    "kerncraft.kerncraft": ("create_parser",),
    "osaca.osaca": ("get_asm_parser", "ArchSemantics", "MachineModel"),
    "osaca.semantics.hw_model": ("MachineModel._get_cached", "MachineModel._runtime_cache",
                                 "MachineModel.get_isa_for_arch"),
    "osaca.utils": ("find_datafile",),
    "osaca.parser": ("ParserX86ATT.parse_line", "ParserX86Intel.parse_line", "ParserAArch64.parse_line"),
}


def missing_targets(targets: dict[str, tuple[str, ...]] = TARGETS) -> str | None:
    """One line naming the first patch target the installed libraries lack (with their
    versions), or None: checked before any patch is applied, so that a kerncraft or OSACA that
    moved a private attribute fails the analyses instead of giving other numbers."""
    import importlib

    from autotune.tools.toolchain import package_version
    for name, attributes in targets.items():
        try:
            module = importlib.import_module(name)
        except ImportError as e:
            found = f"module {name} cannot be imported ({e})"
        else:
            found = None
            for dotted in attributes:
                obj = module
                for part in dotted.split("."):
                    if not hasattr(obj, part):
                        found = f"{name}.{dotted} is gone"
                        break
                    obj = getattr(obj, part)
                if found:
                    break
        if found:
            return (f"{found}, which autotune patches (kerncraft {package_version('kerncraft')}, osaca "
                    f"{package_version('osaca')}): install the versions pyproject.toml allows")
    return None


def apply() -> None:
    from kerncraft import cacheprediction, incore_model
    from kerncraft.models import ecm

    incore_model.get_parser = functools.lru_cache(maxsize=None)(incore_model.get_parser)
    incore_model.osaca.get_asm_parser = functools.lru_cache(maxsize=None)(incore_model.osaca.get_asm_parser)
    incore_model.detect_x86_syntax = x86_syntax
    incore_model.parse_asm = _parse_asm_in_its_syntax(incore_model)
    cacheprediction.split_sympy_access_in_dim_offset = split_access
    _models_from_runtime_cache()
    _lazy_models_kept()
    _port_model_files()
    _lines_parsed_once()

    class VictimAwareLayerConditions(cacheprediction.LayerConditionPredictor):
        def get_stores(self):
            return with_victims(super().get_stores(), self.get_loads(),
                                victim_sources(list(self.machine["memory hierarchy"])))

    ecm.LayerConditionPredictor = VictimAwareLayerConditions     # the class ECMData makes for 'LC'


def _models_from_runtime_cache() -> None:
    from osaca.semantics import hw_model
    model = hw_model.MachineModel
    read_pickle = model._get_cached

    def get_cached(self, filepath):
        held = model._runtime_cache.get(filepath)
        return held if held is not None else read_pickle(self, filepath)
    model._get_cached = get_cached


def _lazy_models_kept() -> None:
    import os

    from osaca import utils
    from osaca.semantics import hw_model
    model = hw_model.MachineModel
    if getattr(model.__init__, "lazy_kept", False):
        return
    init, kept = model.__init__, {}

    def __init__(self, arch=None, path_to_yaml=None, isa=None, lazy=False):
        if not lazy or not (arch or path_to_yaml) or (arch and path_to_yaml):
            return init(self, arch, path_to_yaml, isa, lazy)
        path = utils.find_datafile(arch.lower() + ".yml") if arch else path_to_yaml
        st = os.stat(path)
        key = (os.path.abspath(path), st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        if key not in kept:
            init(self, arch, path_to_yaml, isa, lazy)
            kept[key] = self._data
            return None
        self._path, self._arch, self._data = path, arch.lower() if arch else None, kept[key]
        return None
    __init__.lazy_kept, __init__.__wrapped__ = True, init
    model.__init__ = __init__


def _lines_parsed_once() -> None:
    import pickle

    from osaca.parser import ParserAArch64, ParserX86ATT, ParserX86Intel
    for cls in (ParserX86ATT, ParserX86Intel, ParserAArch64):
        parse = cls.parse_line
        if getattr(parse, "parsed_once", False):
            continue
        kept: dict[str, bytes] = {}

        def parse_line(self, line, line_number=None, parse=parse, kept=kept):
            held = kept.get(line)
            if held is None:      # a line it cannot parse raises, kept nowhere
                held = kept[line] = pickle.dumps(parse(self, line, None), pickle.HIGHEST_PROTOCOL)
            form = pickle.loads(held)
            form.line_number = line_number
            return form
        parse_line.parsed_once, parse_line.kept = True, kept
        cls.parse_line = parse_line


_PORT_FILES: dict[str, tuple[str, str]] = {}   # OSACA name (lower case) -> (file, isa) of the machine in use


def use_port_model(machine_data, where: str = "machine file") -> None:
    """Point the OSACA model a kerncraft machine file names at the port model file it gives (the
    file's digest checked), or back at the installed one where it gives none."""
    from autotune.tools.cpuprobe import PORT_MODEL_FIELD, checked_port_model_file
    incore = machine_data.get("in-core model") or {}
    items = incore.items() if hasattr(incore, "items") else [tuple(p) for p in incore]
    name = next((str(v) for k, v in items if k == "OSACA"), None)
    if name is None:
        return
    entry = machine_data.get(PORT_MODEL_FIELD)
    if entry is None:
        _PORT_FILES.pop(name.lower(), None)
        return
    path, _ = checked_port_model_file(entry, where)
    _PORT_FILES[name.lower()] = (path, str(machine_data.get("isa") or "x86").lower())


def _port_model_files() -> None:
    from kerncraft.machinemodel import MachineModel
    from osaca import utils
    from osaca.semantics import hw_model
    if getattr(MachineModel.__init__, "uses_port_model", False):
        return
    find, isa_of, load = utils.find_datafile, hw_model.MachineModel.get_isa_for_arch, MachineModel.__init__

    def find_datafile(name):
        given = _PORT_FILES.get(name[:-4].lower()) if name.endswith(".yml") else None
        return given[0] if given else find(name)

    def get_isa_for_arch(arch):
        given = _PORT_FILES.get(arch.lower())
        return given[1] if given else isa_of(arch)

    def init(self, path_to_yaml=None, *args, **kwargs):
        load(self, path_to_yaml, *args, **kwargs)
        use_port_model(self._data, str(path_to_yaml or "machine file"))
    init.uses_port_model = True

    utils.find_datafile = find_datafile
    hw_model.MachineModel.get_isa_for_arch = staticmethod(get_isa_for_arch)
    MachineModel.__init__ = init


def _parse_asm_in_its_syntax(incore_model):
    """kerncraft's parse_asm (OSACA >= 0.7) with the parser of the code's own syntax."""
    osaca = incore_model.osaca            # the module kerncraft calls `osaca` (osaca.osaca)

    def parse_asm(code, isa, arch=None):
        syntax = x86_syntax(code) if isa.lower() == "x86" else "ATT"
        asm_parser = incore_model.get_parser(isa, syntax=syntax.lower())
        asm_lines = asm_parser.parse_file(code)
        semantics = osaca.ArchSemantics(asm_parser, machine_model=osaca.MachineModel(arch=arch))
        semantics.normalize_instruction_forms(asm_lines)
        incore_model.ISASemantics(asm_parser).process(asm_lines)
        return asm_lines
    return parse_asm

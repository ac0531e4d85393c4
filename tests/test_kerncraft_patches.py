"""tools.kerncraft_patches: an assembly line is parsed once per parser class, and every parse of
it hands out its own copy with the line number asked (the analysis changes the forms it gets);
a lazily loaded OSACA machine model is read once per file."""
import os
import pickle

from autotune.tools import kerncraft_patches


def test_a_line_is_parsed_once_and_each_parse_gets_its_own_copy():
    from osaca.parser import ParserX86ATT
    kerncraft_patches._lines_parsed_once()
    kerncraft_patches._lines_parsed_once()          # applied twice: wrapped once
    assert ParserX86ATT.parse_line.parsed_once
    parser = ParserX86ATT()
    line = "  vfmadd231pd (%rsi,%rax,8), %ymm1, %ymm0"
    first = parser.parse_line(line, 7)
    kept = ParserX86ATT.parse_line.kept
    assert pickle.loads(kept[line]).mnemonic == "vfmadd231pd"
    marked = pickle.loads(kept[line])
    marked.comment = "from the kept parse"
    kept[line] = pickle.dumps(marked)     # the next parse of the line is a copy of the kept one
    second = parser.parse_line(line, 12)
    assert second.comment == "from the kept parse" and second is not marked
    assert (first.line_number, second.line_number) == (7, 12) and len(second.operands) == 3
    second.operands.append("changed")          # a change to one parse reaches no other
    assert len(parser.parse_line(line, 1).operands) == 3


def test_a_lazy_model_is_loaded_once_per_file_and_holds_what_a_fresh_load_holds(tmp_path):
    from osaca import utils
    from osaca.semantics import hw_model
    kerncraft_patches._lazy_models_kept()
    kerncraft_patches._lazy_models_kept()             # applied twice: wrapped once
    first = hw_model.MachineModel(arch="ZEN4", lazy=True)
    second = hw_model.MachineModel(arch="zen4", lazy=True)
    assert second._data is first._data and second._arch == "zen4"
    assert second._path == utils.find_datafile("zen4.yml") and first.get_ports() == second.get_ports()
    assert first._data["instruction_forms"] == []    # lazy: the file up to its instruction forms
    fresh = object.__new__(hw_model.MachineModel)      # OSACA's own lazy load holds the same
    hw_model.MachineModel.__init__.__wrapped__(fresh, arch="zen4", lazy=True)
    assert fresh._data is not first._data and fresh._data.keys() == first._data.keys()
    assert {k: repr(v) for k, v in fresh._data.items()} == {k: repr(v) for k, v in first._data.items()}
    copy = tmp_path / "mine.yml"                     # another file (or the same one changed) is read
    copy.write_text(open(utils.find_datafile("zen4.yml")).read())
    mine = hw_model.MachineModel(path_to_yaml=str(copy), lazy=True)
    assert mine._data is not first._data and mine.get_ports() == first.get_ports() and mine._arch is None
    copy.write_text(copy.read_text().replace("ports:", "ports:", 1) + "\n")
    os.utime(copy, ns=(1, 1))
    assert hw_model.MachineModel(path_to_yaml=str(copy), lazy=True)._data is not mine._data
    full = hw_model.MachineModel(arch="zen4")        # a full load is OSACA's own, as before
    assert full._data is not first._data and full._data["instruction_forms"]

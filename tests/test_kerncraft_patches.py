"""tools.kerncraft_patches: an assembly line is parsed once per parser class, and every parse of
it hands out its own copy with the line number asked (the analysis changes the forms it gets)."""
import copy

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
    assert kept[line].mnemonic == "vfmadd231pd" and kept[line] is not first
    marked = copy.deepcopy(kept[line])
    marked.comment = "from the kept parse"
    kept[line] = marked                  # the next parse of the line is a copy of the kept one
    second = parser.parse_line(line, 12)
    assert second.comment == "from the kept parse" and second is not marked
    assert (first.line_number, second.line_number) == (7, 12) and len(second.operands) == 3
    second.operands.append("changed")          # a change to one parse reaches no other
    assert len(parser.parse_line(line, 1).operands) == 3

"""The interleaving benchmark's own edges: its input checked before anything runs, and what it
builds of a ranking (the best predicted variants and the best pipelined one)."""
from pathlib import Path
from types import SimpleNamespace

MACHINE = str(Path(__file__).parents[1] / "machines" / "zen4-epyc-vm-2core.yaml")


def test_bad_input_exits_2_with_one_line(capsys):
    from benchmarks.interleave import main
    assert main(["--configs", "1x2,two"]) == 2
    assert main(["--rounds", "0"]) == 2
    assert main(["--ivps", "heat2d", "--machine", MACHINE]) == 2
    assert main(["--ivps", "string-row.interleaved", "--machine", MACHINE]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 4 and err[0].startswith("benchmarks.interleave: --configs")
    assert "--rounds" in err[1] and "no two coupled blocks" in err[2]
    assert err[3] == "benchmarks.interleave: --ivps: string-row.interleaved is a twin already: name the blocked IVP"


def test_it_builds_the_best_and_the_best_pipelined():
    from benchmarks.interleave import picks

    def row(name, s, pipe="none"):
        return SimpleNamespace(variant=SimpleNamespace(name=name, pipe=pipe), prediction=s and SimpleNamespace(total_s=s))
    ranked = SimpleNamespace(ordered=[row("a", 1.0), row("b", 1.1), row("c", 1.2), row("p", 1.5, "wavefront"),
                                      row("q", 1.6, "wavefront"), row("x", None, "wavefront")])
    assert picks(ranked, 2) == ["a", "b", "p"]
    assert picks(ranked, 4) == ["a", "b", "c", "p"]
    ranked.ordered = ranked.ordered[:3]
    assert picks(ranked, 5) == ["a", "b", "c"]

"""rank's table for a person: the pre-selected variants and the next ones, the best of the paper's
forms, the floor, what was left out; names said against the values the rows share (recorded
kerncraft results: no analysis runs here)."""
import json

from autotune.report.names import NOTHING, shared_values, short_name
from autotune.report.rank import TABLE_ROWS
from autotune.specs.ivp import load_ivp
from autotune.specs.variants import Variant, parse_variant, spaces

from .conftest import GRIDLESS, HEAT_DEFAULT_DROPPED, HEAT_DEFAULT_EXCLUDED, ranked_size, run_cli

# at each IVP's default size on the reference cluster the pipelined step does not pay in row order
# where the access distance grows with n (heat2d: N, over strips it does; medakzo, string-row:
# the coupled block N away, stored as their files say), and no IVP but heat2d declares the grid strips need: the items
# excluded, and the variants dropped
PIPE_OUT = {"heat2d": HEAT_DEFAULT_EXCLUDED, "medakzo": ("pipe=wavefront,blocks=separate",) + GRIDLESS,
            "string-row": ("pipe=wavefront,blocks=separate",) + GRIDLESS,
            # heat3d's planes: 1.2 MB rows in row order; over strips even 8 x 8 of them (with 6
            # reach either side) leave no window in half of the Haswell's 256 KiB L2 (its sweeps'
            # strips of 26 rows are ranked)
            "heat3d": ("pipe=wavefront", "traversal=strips")}
# (stored interleaved, the coupled block a neighbour, their pipelined forms pay: only those of
# the blocks one after the other are dropped)
DROPPED = {"heat2d": HEAT_DEFAULT_DROPPED, "medakzo": ("pipe=wavefront+blocks=separate",) + GRIDLESS,
           "string-row": ("pipe=wavefront+blocks=separate",) + GRIDLESS, "heat3d": ("pipe=wavefront",)}


def _excluded(name: str) -> set[str]:
    return set(PIPE_OUT.get(name, GRIDLESS))


def _ranked(name: str = "heat2d") -> int:
    return ranked_size(name, DROPPED.get(name, PIPE_OUT.get(name, GRIDLESS)))

CAPTION = "names below: what differs from "


def table_rows(out: str) -> tuple[dict[str, str], list[tuple[int, str, str, float]]]:
    """The shared values of a rank table's caption and its rows as (rank, marks, name, seconds)."""
    lines = out.splitlines()
    shared = {}
    if lines[1].startswith(CAPTION):
        shared = dict(item.split("=") for item in lines[1][len(CAPTION):].split(","))
    rows = []
    for line in lines[lines.index(next(x for x in lines if x.startswith("rank  sel"))) + 1:]:
        if not line.strip():
            break
        rank_no, marks, rest = line[:4], line[6:9], line[11:].split()
        rows.append((int(rank_no), marks, rest[0], float(rest[1])))
    return shared, rows


def full_name(shared: dict[str, str], short: str, ivp: str = "heat2d") -> str:
    """A row's variant: the shared values, overridden by the row's."""
    own = {} if short == NOTHING else dict(item.split("=") for item in short.split(","))
    return parse_variant(",".join(f"{k}={v}" for k, v in {**shared, **own}.items()), spaces(load_ivp(ivp))).name


def rank(capsys, store, *argv):
    code, out, err = run_cli(capsys, "rank", "--ivp", "heat2d", "--nodes", "8", *argv, "--store", store)
    assert code == 0, err
    return out


def test_the_default_table_fits_a_screen_and_says_what_it_left_out(replay_store, capsys):
    out = rank(capsys, replay_store)
    variants = json.loads(rank(capsys, replay_store, "--format", "json"))["variants"]
    lines = out.splitlines()
    assert len(lines) <= 30
    shared, rows = table_rows(out)
    pre = sum(v["preselected"] for v in variants)
    shown = max(TABLE_ROWS, pre)
    # the pre-selected variants, then the next ones; the best of the paper's forms below them
    assert [r[0] for r in rows[:shown]] == list(range(1, shown + 1))
    assert [("*" in r[1]) for r in rows[:shown]] == [v["preselected"] for v in variants[:shown]]
    paper = next(v for v in variants if parse_variant(v["name"], load_ivp("heat2d").comm).is_paper_form)
    assert paper["rank"] > shown and rows[shown:] == [(paper["rank"], "  p", rows[-1][2], rows[-1][3])]
    # every name, shortened against the caption's shared values, is the full one
    assert shared and all(len(r[2]) < len(variants[r[0] - 1]["name"]) for r in rows[:shown])
    assert [full_name(shared, r[2]) for r in rows] == [variants[r[0] - 1]["name"] for r in rows]
    assert [r[3] for r in rows] == [float(f"{variants[r[0] - 1]['predicted_s']:.4e}") for r in rows]
    assert any(x.startswith("floor of the step: ") for x in lines)
    assert any(x.startswith("floor of a step of sweeps (bound_sweep_s): ") for x in lines)
    assert ("note: pipe=wavefront excluded: in row order, the threads' windows (38.2 MiB at access distance 5984) "
            "exceed") in out
    ranked = ranked_size(excluded=HEAT_DEFAULT_DROPPED)
    assert lines[-1] == f"{ranked - len(rows)} of {ranked} variants not shown: --all lists every one"


def test_all_lists_every_variant_and_csv_json_the_api_keep_every_row(replay_store, capsys):
    import autotune
    out = rank(capsys, replay_store, "--all")
    shared, rows = table_rows(out)
    assert len(rows) == _ranked() and [r[0] for r in rows] == list(range(1, _ranked() + 1))
    assert "not shown" not in out and out.splitlines()[-1].startswith("note: ")
    variants = json.loads(rank(capsys, replay_store, "--format", "json"))["variants"]
    assert [full_name(shared, r[2]) for r in rows] == [v["name"] for v in variants]
    csv_lines = rank(capsys, replay_store, "--format", "csv").splitlines()
    assert len(csv_lines) == 1 + _ranked()
    assert len(autotune.rank("heat2d", nodes=8, store=replay_store).to_frame()) == _ranked()


def test_all_is_for_one_ranking_not_a_sweep(replay_store, capsys):
    code, out, err = run_cli(capsys, "rank", "--ivp", "heat2d", "--nodes", "4,8", "--all", "--store", replay_store)
    assert code == 2 and out == "" and err.startswith("autotune: error: --all: not with a sweep")
    assert len(err.strip().splitlines()) == 1


def test_short_names_are_what_differs_from_the_shared_values():
    rows = [Variant("jl-onepass", "neighbour", au="fused", buf="ghost"),
            Variant("jl-onepass", "neighbour", au="fused", overlap="halo")]
    shared = shared_values(rows)
    assert shared == {"lc": "jl-onepass", "comm": "neighbour", "au": "fused"}
    assert [short_name(v, shared) for v in rows] == ["buf=ghost", "overlap=halo"]
    # a row outside them (the best of the paper's forms) names the shared values it overrides
    assert short_name(Variant("jli", "neighbour"), shared) == "lc=jli,au=split"
    assert short_name(Variant("jl-onepass", "neighbour", au="fused"), shared) == NOTHING
    assert shared_values([Variant("jli", "neighbour"), Variant("jli", "allgather")]) == {"lc": "jli"}
    assert short_name(Variant("jli", "allgather"), {}) == "lc=jli,comm=allgather"


def test_ivp_all_ranks_every_shipped_ivp_in_one_block_each(replay_store, capsys):
    import csv
    import io

    import autotune
    from autotune.results.rankset import RankSet
    from autotune.specs.ivp import ivp_names
    names = ivp_names()
    code, out, err = run_cli(capsys, "rank", "--ivp", "all", "--format", "json", "--store", replay_store)
    d = json.loads(out)
    assert code == 0 and "kerncraft [" not in err
    assert list(d["ivps"]) == names and d["skipped"] == []
    for name, r in d["ivps"].items():
        assert r["ivp"] == name and r["ecm"]["analyses_run"] == 0
        assert [v["rank"] for v in r["variants"]] == list(range(1, _ranked(name) + 1))
        assert set(r["excluded_values"]) == _excluded(name)
        assert r["variants"][0]["kernels"]          # as rank of that IVP alone prints it
    alone = json.loads(rank(capsys, replay_store, "--format", "json"))
    assert d["ivps"]["heat2d"]["variants"] == alone["variants"]
    code, out, _ = run_cli(capsys, "rank", "--ivp", "all", "--store", replay_store)
    blocks = ["IVP " + b for b in out.removeprefix("IVP ").split("\n\nIVP ")]
    assert [b.split(",")[0] for b in blocks] == [f"IVP {name}" for name in names]
    for name, block in zip(names, blocks):
        lines = block.splitlines()
        assert len(lines) <= 30 and lines[-1].endswith(f"of {_ranked(name)} variants not shown: --all lists every one")
        shared, rows = table_rows(block)
        variants = d["ivps"][name]["variants"]
        assert [r[0] for r in rows[:TABLE_ROWS]] == list(range(1, TABLE_ROWS + 1))
        assert [full_name(shared, r[2], name) for r in rows] == [variants[r[0] - 1]["name"] for r in rows]
    code, out, _ = run_cli(capsys, "rank", "--ivp", "all", "--format", "csv", "--store", replay_store)
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [r["ivp"] for r in rows] == [name for name in names for _ in range(_ranked(name))]
    res = autotune.rank("all", store=replay_store)
    assert isinstance(res, RankSet) and list(res.by_ivp()) == names
    assert len(res.to_frame()) == sum(map(_ranked, names))
    # with a list or range of another value it stays a sweep (one line per scenario)
    code, out, err = run_cli(capsys, "rank", "--ivp", "all", "--nodes", "4,8", "--store", replay_store)
    assert code == 0 and "kerncraft [" not in err
    assert out.startswith(f"sweep on machine haswell-ep-e5-2630v3: {2 * len(names)} scenarios")

"""specs.interleave: a blocked IVP of two coupled blocks as its interleaved twin.  The twin of
string-row is string-mix (stored interleaved by hand); every twin's right-hand side is the blocked
one's in the other order (numpy, here), and its generated solvers compute the blocked IVP's numbers
at 1 x 1, 2 x 1, 1 x 2 and 3 x 1 (compiled and run)."""
import numpy as np
import pytest

from autotune.errors import CannotRun
from autotune.specs.interleave import unfit
from autotune.specs.ivp import interleaved, load_ivp, parse_ivp
from autotune.specs.numpyrhs import numpy_rhs

from .conftest import run_cli


def test_the_twin_of_string_row_is_string_mix():
    twin, mix = interleaved(load_ivp("string-row")), load_ivp("string-mix")
    assert twin.name == "string-row.interleaved"
    assert [(p.name, p.start, p.step, p.expr) for p in twin.rhs] == [(p.name, p.start, p.step, p.expr) for p in mix.rhs]
    assert twin.access_distance(200) == mix.access_distance(200) == 3
    assert twin.halo(200) == 3 and twin.comm == ("allgather", "neighbour")
    assert interleaved(twin) is twin and unfit(twin) is None


def test_an_ivp_name_or_path_with_interleaved_after_it_is_the_twin(tmp_path):
    """--ivp string-row.interleaved, and a twin's own path (what a plan records) read back."""
    twin = load_ivp("string-row.interleaved")
    assert twin == interleaved(load_ivp("string-row")) and twin.path.endswith("string-row.yaml.interleaved")
    assert load_ivp(twin.path) == twin
    with pytest.raises(CannotRun, match="heat2d.yaml: cannot store heat2d's blocks interleaved"):
        load_ivp("heat2d.interleaved")


def test_generate_writes_the_twins_solvers_and_refuses_an_ivp_without_one(tmp_path, capsys):
    import json
    code, out, err = run_cli(capsys, "generate", "--ivp", "medakzo.interleaved", "--n", "200",
                             "--out", tmp_path / "twin", "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["ivp"] == "medakzo.interleaved" and doc["solvers"] > 200
    assert any("(j/2)*dz" in f.read_text() for f in (tmp_path / "twin").rglob("*.c"))
    code, out, err = run_cli(capsys, "generate", "--ivp", "heat2d.interleaved", "--n", "200", "--out", tmp_path / "none")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "the IVP declares no two coupled blocks" in err and not (tmp_path / "none").exists()


def test_a_coordinate_becomes_the_block_index_and_reaches_follow_the_offsets():
    twin = interleaved(load_ivp("medakzo"))
    u, v = twin.rhs
    assert "(j/2)*dz" in u.expr and "y[j-2] - 2.0*y[j] + y[j+2]" in u.expr and u.expr.endswith("y[j] * y[j+1]")
    assert v.expr == "-k * y[j-1] * y[j]"
    assert (twin.part_halo(u, 200), twin.part_halo(v, 200), twin.access_distance(200)) == (2, 1, 2)
    odd = _blocked(u="y[j] - w[j]", v="j * (w[j-1] - y[j+1])")
    assert interleaved(odd).rhs[1].expr == "((j-1)/2) * (y[j-3] - y[j+2])"


@pytest.mark.parametrize("name", ["heat2d", "heat3d", "wave1d", "inverterchain", "string-mix"])
def test_an_ivp_without_two_coupled_blocks_has_no_twin(name):
    ivp = load_ivp(name)
    assert unfit(ivp)
    with pytest.raises(CannotRun, match="no two coupled blocks"):
        interleaved(ivp)


@pytest.mark.parametrize("parts,why", [
    ({"u": "w[j]", "v": "y[j-N]"}, r"reads \[j-N\], not j plus or minus a number"),
    ({"u": "w[j] + x[j]", "v": "y[j]"}, "arrays other than y and w"),
    ({"u": "w[j]", "v": "y[j]", "v_components": "N + 1"}, "differ in size"),
])
def test_what_cannot_be_interleaved_says_why(parts, why):
    ivp = _blocked(parts["u"], parts["v"], parts.get("v_components", "N"))
    assert unfit(ivp)
    with pytest.raises(CannotRun, match=why):
        interleaved(ivp)


@pytest.mark.parametrize("name", ["string-row", "medakzo"])
def test_the_twins_right_hand_side_is_the_blocked_one_in_the_other_order(name):
    ivp = load_ivp(name)
    twin, n = interleaved(ivp), 40
    y = np.random.default_rng(7).standard_normal(n)
    order = np.empty(n, dtype=int)
    order[0::2], order[1::2] = np.arange(n // 2), np.arange(n // 2, n)     # twin position -> blocked index
    assert np.array_equal(numpy_rhs(twin, n, y[order]), numpy_rhs(ivp, n, y)[order])


def _blocked(u: str, v: str, v_components: str = "N"):
    return parse_ivp({"name": "pair", "size_parameter": "N", "n": "2*N", "access_distance": "N",
                      "default_n": 200, "comm": ["allgather", "sparse"], "sparse_halo": 1,
                      "initial": "j", "step_size": "0.1",
                      "rhs": [{"name": "u", "components": "N", "halo": "1", "expr": u},
                              {"name": "v", "components": v_components, "halo": "1", "expr": v}]}, "pair.yaml")


TWIN_VARIANTS = ["lc=ijl,comm=allgather",
                 "lc=jl-onepass,comm=neighbour,au=fused,pred=direct,buf=ghost,overlap=halo",
                 "lc=jl-onepass,comm=neighbour,au=fused,pred=direct,buf=ghost,rhs=onepass,fuse=rhs-lc,block=l1,store=nt",
                 "lc=jl-onepass,comm=neighbour,au=fused,pred=direct,buf=ghost,rhs=onepass,fuse=rhs-lc,block=l1,"
                 "pipe=wavefront"]


@pytest.mark.parametrize("name,h", [("string-row", 1e-4), ("medakzo", 1e-6)])
def test_the_twins_solvers_compute_the_blocked_numbers(name, h, tmp_path, private_builds):
    """The paper's form and the fused, streaming and pipelined forms of the twin, at 1 x 1, 2 x 1,
    1 x 2 and 3 x 1, against the blocked IVP's paper form: the same numbers, in the other order
    from the twin by name, in the IVP's own from the IVP's variants that store it interleaved
    (blocks=interleaved: the solver puts its result back)."""
    from concurrent.futures import ThreadPoolExecutor

    from autotune.codegen.solver import solver_source
    from autotune.request.run import RunOptions
    from autotune.specs.method import load_method
    from autotune.specs.variants import parse_variant, spaces
    from autotune.tools.build import build, run
    from autotune.tools.launcher import parse_launcher

    ivp, n, steps, method, flags = load_ivp(name), 200, 3, load_method("radauIIA7"), RunOptions().plan(1.0).flags
    twin = load_ivp(f"{name}.interleaved")
    jobs = [(ivp, parse_variant("lc=ijl,comm=allgather", ivp.comm))]
    jobs += [(twin, parse_variant(TWIN_VARIANTS[0], twin.comm))]
    jobs += [(ivp, parse_variant(v + ",blocks=interleaved", spaces(ivp))) for v in TWIN_VARIANTS]
    with ThreadPoolExecutor(2) as pool:
        exes = list(pool.map(lambda job: build(solver_source(job[0], method, job[1], n), flags), jobs))

    def solve(exe, procs, threads, label, steps=steps):
        path = tmp_path / f"{label}-{procs}-{threads}.bin"
        run(exe, parse_launcher(None), procs, threads, n, ivp.size_value(n), steps, h, 0, path)
        return np.fromfile(path)

    ref = solve(exes[0], 1, 1, "blocked")
    assert np.max(np.abs(ref - solve(exes[0], 1, 1, "start", 0))) > 1e-8       # the solution moved
    back = np.empty(n, dtype=int)                  # blocked index -> twin position
    back[:n // 2], back[n // 2:] = np.arange(0, n, 2), np.arange(1, n, 2)
    for (stored, v), exe in zip(jobs[1:], exes[1:]):
        order = back if stored is twin else slice(None)
        for procs, threads in ((1, 1), (2, 1), (1, 2), (3, 1)):
            y = solve(exe, procs, threads, f"{stored.name}-{v.name}".replace(",", "_"))
            assert np.max(np.abs(y[order] - ref)) <= 1e-12 * np.max(np.abs(ref)), (stored.name, v.name, procs, threads)


def test_a_part_that_starts_late_or_a_name_that_only_looks_like_a_twin_is_not_taken_for_one():
    late = _blocked("w[j]", "y[j]")
    late = type(late)(**{**late.__dict__, "rhs": (late.rhs[0], type(late.rhs[1])(**{**late.rhs[1].__dict__, "start": 1}))})
    assert "no two coupled blocks" in unfit(late)
    mine = _blocked("w[j]", "y[j]")
    mine = type(mine)(**{**mine.__dict__, "name": "mine.interleaved"})     # a user's file of that name
    assert interleaved(mine) is not mine and interleaved(mine).rhs[0].step == 2


def test_one_ranking_holds_both_ways_of_storing_the_blocks(replay_store):
    """string-row's ranking is its variants stored as its file says and those stored interleaved
    (each priced with the IVP it stores: the twin's as the twin's own ranking prices them), in
    one order, with the pre-selection over all and the lower floor; what one way excludes is
    named with that way."""
    import autotune
    from autotune.specs.variants import ivp_for

    row = load_ivp("string-row")
    lead = autotune.rank("string-row", nodes=8, top=3, store=replay_store).brief(selected_only=True)   # (a sweep's)
    whole = autotune.rank("string-row", nodes=8, top=3, store=replay_store)
    separate = autotune.rank("string-row", nodes=8, top=3, variant_filter="blocks=separate", store=replay_store)
    twin = autotune.rank("string-row.interleaved", nodes=8, top=3, store=replay_store)
    assert whole.scenario.ivp == row and whole.analyses_run == 0
    times = {r.variant.name: r.predicted_s for r in whole.ordered}
    alone = {r.variant.name: r.predicted_s for r in separate.ordered}
    # the twin's variants by its own names are the IVP's with blocks=interleaved
    by_twin = {r.variant.name: r.predicted_s for r in twin.ordered}
    assert {k: v for k, v in times.items() if ivp_for(row, whole.variant(k).variant) == row} == alone
    stored = {k: v for k, v in times.items() if ivp_for(row, whole.variant(k).variant) != row}
    assert sorted(stored.values()) == sorted(by_twin.values()) and len(stored) == len(by_twin)
    ok = [t for t in times.values() if t is not None]
    assert list(times.values())[:len(ok)] == sorted(ok)              # one order, best first
    assert whole.best.predicted_s == min(twin.best.predicted_s, separate.best.predicted_s) == twin.best.predicted_s
    assert whole.preselected == {r.variant.name for r in whole.ordered[:3]}
    assert whole.bound_s == min(twin.bound_s, separate.bound_s)
    assert [b[1].name for b in whole.brief()] == [r.variant.name for r in whole.ordered]
    assert lead == [b for b in whole.brief() if b[6]] and len(lead) == 3     # merged from the ways' leads
    for selected in (False, True):        # a sweep's CSV columns, merged from the ways' columns
        got = autotune.rank("string-row", nodes=8, top=3, store=replay_store).columns(selected)
        rows = [b for b in whole.brief() if b[6] or not selected]
        assert [v.name for v in got.variants] == [b[1].name for b in rows] and got.chosen == 3
        assert [got.total, got.node, got.comm, got.barrier] == [[b[k] for b in rows] for k in range(2, 6)]
    cols = whole.columns(selected_only=True)
    assert [v.name for v in cols.variants] == [r.variant.name for r in whole.ordered[:3]] and cols.chosen == 3
    # the pipelined step does not pay N away; interleaved it does, and ranks first
    items = {e.item for e in whole.excluded}
    assert "pipe=wavefront,blocks=separate" in items and "pipe=wavefront" not in items
    assert "pipe=wavefront" in {e.item for e in separate.excluded}     # one way asked: no way to name
    assert whole.best.variant.pipe == "wavefront"
    ex = whole.explain(whole.best.variant.name)
    assert ex.traffic() and all(".interleaved." in part for part in ex.traffic())   # the twin's kernel parts


def test_an_online_solver_holds_the_vector_one_way():
    from autotune.codegen.online import online_source
    from autotune.errors import InputError
    from autotune.pipeline.online import one_way
    from autotune.progress import Progress
    from autotune.specs.method import load_method
    from autotune.specs.variants import parse_variant, spaces

    row = load_ivp("string-row")
    mixed = [parse_variant(v, spaces(row)) for v in ("lc=ijl,comm=neighbour,blocks=interleaved", "lc=ijl,comm=sparse",
                                                      "lc=jli,comm=allgather,blocks=interleaved")]
    said = []

    class Told(Progress):
        def say(self, message: str) -> None:
            said.append(message)
    assert one_way(mixed, Told()) == [mixed[0], mixed[2]]
    assert said and "1 variants that store it otherwise are left out" in said[0]
    with pytest.raises(InputError, match="store string-row in different ways"):
        online_source(row, load_method("radauIIA7"), mixed, 200, None, {}, [12.7], 5.0)
    src = online_source(row, load_method("radauIIA7"), [mixed[0], mixed[2]], 200, None, {}, [12.7], 5.0)
    assert "blocked[(j % 2) * (n / 2) + j / 2] = all[j];" in src.source     # its result in the IVP's order


def test_a_scale_plot_of_both_ways_names_the_paper_form_among_them():
    from autotune.report.plots import _scale_lines
    twin = "lc=jl-onepass,comm=neighbour,au=fused,pred=direct,buf=ghost,rhs=onepass,fuse=rhs-lc,block=l1," \
           "pipe=wavefront,blocks=interleaved"
    rows = [{"variant": twin, "predicted_s": 1.0}, {"variant": "lc=jli,comm=sparse", "predicted_s": 9.0},
            {"variant": "lc=jli,comm=neighbour,blocks=interleaved", "predicted_s": 5.0}]
    # the winner, the best of the paper's forms (stored as the file says: blocks' default), the rest
    assert _scale_lines({"rows": rows, "winners": [{"variant": twin}]}) == [
        twin, "lc=jli,comm=sparse", "lc=jli,comm=neighbour,blocks=interleaved"]

"""The generated solver, compiled with mpicc and run with mpiexec: same numbers for every
variant, rank and thread count; the method's order against scipy's solve_ivp."""
import math
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from autotune.errors import CannotRun
from autotune.tools.build import build, run
from autotune.tools.launcher import parse_launcher
from autotune.request.run import RunOptions
from autotune.codegen.solver import generated_schemes, solver_source
from autotune.specs.ivp import load_ivp
from autotune.specs.method import load_method
from autotune.specs.variants import (DIMENSIONS, Variant, enumerate_variants, pairwise_cover, parse_variant,
                                     ivp_for, spaces, value_cover)

from autotune.specs.numpyrhs import numpy_rhs

LAUNCHER = parse_launcher(None)
FLAGS = RunOptions().plan(1.0).flags   # the default compiler flags, as tune uses them
METHOD = load_method("radauIIA7")


@pytest.fixture(autouse=True)
def _private_builds(private_builds):
    """Every test here builds and runs solvers."""


def _solve(ivp, variant, n, steps, h, procs, threads, path, exe=None):
    exe = exe or build(solver_source(ivp, METHOD, variant, n), FLAGS)
    res = run(exe, LAUNCHER, procs, threads, n, ivp.size_value(n), steps, h, 0, path)
    assert res["n"] == n and res["ranks"] == procs and res["steps"] == steps
    return np.fromfile(path)


@pytest.mark.parametrize("name,n,h", [("heat2d", 256, 1e-5), ("inverterchain", 200, 0.1),
                                      ("wave1d", 256, 1e-3), ("string-mix", 200, 1e-4),
                                      ("medakzo", 200, 1e-6), ("string-row", 200, 1e-4)])
def test_every_variant_computes_the_same_numbers(name, n, h, tmp_path, request):
    """Every variant with --all-variants (256 solvers per IVP: about 2 min each on two cores);
    else the paper's forms and a pairwise cover (every two values of two dimensions together in
    at least one solver: an error where two dimensions' code meets still shows)."""
    ivp = load_ivp(name)
    results = {}
    pool = [v for v in enumerate_variants(ivp.comm) if v.comm in generated_schemes()]
    if request.config.getoption("--all-variants"):
        variants = pool
    else:
        variants = [v for v in pool if v.is_paper_form]
        variants += [v for v in pairwise_cover(pool) if v not in variants]
        assert len(variants) >= 12 + 14
    sources = {}
    for v in variants:
        try:
            sources[v] = solver_source(ivp, METHOD, v, n)
        except CannotRun:           # a value this IVP cannot run at all: strips of no grid
            assert ivp.grid is None and v.traversal == "strips", v.name
    variants = list(sources)
    with ThreadPoolExecutor(2) as pool:     # compiling is most of the time: both cores
        exes = list(pool.map(lambda v: build(sources[v], FLAGS), variants))
    for v, exe in zip(variants, exes):
        for procs, threads in ((1, 1), (2, 1), (1, 2)):
            results[(v.name, procs, threads)] = _solve(ivp, v, n, 3, h, procs, threads,
                                                       tmp_path / f"{v.name}-{procs}-{threads}.bin", exe)
    assert len(results) == 3 * len(variants)
    ref = results[("lc=ijl,comm=allgather", 1, 1)]
    assert np.linalg.norm(ref) > 0 and np.all(np.isfinite(ref))
    y0 = _solve(ivp, Variant("ijl", "allgather"), n, 0, h, 1, 1, tmp_path / "y0.bin")
    assert np.max(np.abs(ref - y0)) > 1e-8            # the solution moved
    scale = np.max(np.abs(ref))
    for key, y in results.items():
        assert np.max(np.abs(y - ref)) <= 1e-12 * scale, key


def _reference(ivp, n, y0, T):
    """The same ODE in numpy (specs.numpyrhs), integrated tightly with scipy."""
    def f(t, y):
        return numpy_rhs(ivp, n, y)

    return solve_ivp(f, (0, T), y0, method="DOP853", rtol=1e-13, atol=1e-13).y[:, -1]


@pytest.mark.parametrize("name,n,T,hs", [("heat2d", 36, 0.05, (0.0125, 0.00625, 0.003125)),
                                         ("inverterchain", 20, 1.0, (0.25, 0.125, 0.0625)),
                                         ("string-row", 40, 0.8, (0.08, 0.04, 0.02))])
@pytest.mark.parametrize("lc,fast", [("jli", False), ("jl-onepass", False), ("lj-onepass", False),
                                     ("jl-onepass", True)])
def test_converges_at_the_method_order(name, n, T, hs, lc, fast, tmp_path):
    """The paper's form, the one-pass LC forms, and one variant with every other fast form
    (fused APPROX/UPDATE, argument vectors from F_1, ghost buffers, the one-pass RHS)."""
    ivp = load_ivp(name)
    forms = {"au": "fused", "pred": "direct", "buf": "ghost", "rhs": "onepass"} if fast else {}
    _converges(ivp, Variant(lc, "neighbour" if "neighbour" in ivp.comm else "allgather", **forms), n, T, hs, tmp_path)


def _converges(ivp, v, n, T, hs, tmp_path, procs=2, threads=1):
    y0 = _solve(ivp, v, n, 0, 0.1, 1, 1, tmp_path / "y0.bin")
    ref = _reference(ivp, n, y0, T)
    errors = []
    for h in hs:
        y = _solve(ivp, v, n, int(round(T / h)), h, procs, threads, tmp_path / f"y{h}.bin")
        errors.append(np.max(np.abs(y - ref)) / np.max(np.abs(ref)))
    # the observed order approaches the method's (7 for Radau IIA with m = 6 iterations);
    # pairs whose finer error already sits at round-off (< 1e-12) say nothing about the order
    orders = [math.log2(a / b) for a, b in zip(errors, errors[1:]) if b > 1e-12]
    assert errors[-1] < 1e-9 and orders and orders[-1] == pytest.approx(METHOD.order, abs=0.6), (errors, orders)


HEAT_COVER = value_cover(enumerate_variants(load_ivp("heat2d").comm))
# the values heat2d cannot take (a way of storing it that it has not: dimensions with an ivp
# hook), on string-row, whose blocks can be stored interleaved
ROW = load_ivp("string-row")
STORED_COVER = [v for v in value_cover([v for v in enumerate_variants(spaces(ROW)) if v.traversal == "rows"])
                if ivp_for(ROW, v) != ROW]       # (string-row declares no grid: no strips)


@pytest.mark.parametrize("variant", HEAT_COVER, ids=[v.name for v in HEAT_COVER])
def test_every_dimension_value_converges_at_the_method_order(variant, tmp_path):
    """At least one variant with each value of each dimension (fused sweeps, their tiles, the
    overlapped exchange included) converges at the method's order, on 2 ranks."""
    assert {(k, getattr(v, k)) for v in HEAT_COVER + STORED_COVER for k in DIMENSIONS} == {
        (k, x) for k, d in DIMENSIONS.items() for x in d.values_for(False)     # (step control: tests/test_control.py)
        if k != "comm" or x in ("allgather", "neighbour")}
    _converges(load_ivp("heat2d"), variant, 36, 0.05, (0.0125, 0.00625, 0.003125), tmp_path)


@pytest.mark.parametrize("variant", STORED_COVER, ids=[v.name for v in STORED_COVER])
def test_every_way_of_storing_an_ivp_converges_at_the_method_order(variant, tmp_path):
    """string-row stored interleaved (its solver puts the result back in its own order)."""
    _converges(ROW, variant, 40, 0.8, (0.08, 0.04, 0.02), tmp_path)


PIPE = "lc=jl-onepass,comm={},au=fused,pred=direct,buf=ghost,rhs=onepass,fuse=rhs-lc,block={},pipe=wavefront"


@pytest.mark.parametrize("name,n,h", [("heat2d", 1024, 1e-5), ("inverterchain", 200, 0.1), ("wave1d", 256, 1e-3),
                                      ("string-mix", 200, 1e-4)])
def test_pipelined_steps_compute_the_paper_forms_numbers(name, n, h, tmp_path):
    """Every pipelined variant (both schemes, both tiles) of the IVPs it applies to, on 1 to 3
    ranks and threads: regions that split unevenly, levels that reach into the neighbours' (at
    heat2d's n = 1024 a level reaches up to 6 d = 192 components beyond a region of 341), and
    tiles of the predictor that cover a whole region at once (block=l2)."""
    ivp = load_ivp(name)
    ref = _solve(ivp, Variant("ijl", "allgather"), n, 3, h, 1, 1, tmp_path / "ref.bin")
    y0 = _solve(ivp, Variant("ijl", "allgather"), n, 0, h, 1, 1, tmp_path / "y0.bin")
    assert np.max(np.abs(ref - y0)) > 1e-8
    variants = [parse_variant(PIPE.format(comm, block), ivp.comm) for comm in ivp.comm for block in ("l1", "l2")]
    assert len(variants) == 4
    for v in variants:
        exe = build(solver_source(ivp, METHOD, v, n), FLAGS)
        for procs, threads in ((1, 1), (1, 2), (2, 1), (3, 1), (1, 3)):
            y = _solve(ivp, v, n, 3, h, procs, threads, tmp_path / "y.bin", exe)
            assert np.max(np.abs(y - ref)) <= 1e-12 * np.max(np.abs(ref)), (v.name, procs, threads)


STRIPS = PIPE + ",traversal=strips"


@pytest.mark.parametrize("n", [40000, 41209])
def test_pipelined_steps_over_strips_compute_the_paper_forms_numbers(n, tmp_path):
    """traversal=strips on the Haswell file (strips 80 wide: 200 and 203 columns make three, the
    last 40 and 43 wide), on 1 to 3 ranks and threads: regions that start and end inside a row,
    levels that reach into the neighbours' regions and across the strips' edges, where the
    flat vector's neighbour of a row's first column is the row before's last.  The same numbers
    as the paper form's to rounding."""
    from autotune.specs.machine import load_machine
    haswell = load_machine("haswell-ep-e5-2630v3")
    ivp, h = load_ivp("heat2d"), 1e-6
    ref = _solve(ivp, Variant("ijl", "allgather"), n, 3, h, 1, 1, tmp_path / "ref.bin")
    y0 = _solve(ivp, Variant("ijl", "allgather"), n, 0, h, 1, 1, tmp_path / "y0.bin")
    assert np.max(np.abs(ref - y0)) > 1e-8
    variants = [parse_variant(STRIPS.format(comm, "l2"), ivp.comm) for comm in ivp.comm]
    for v in variants:
        source = solver_source(ivp, METHOD, v, n, haswell)
        assert "#define SP 92L" in source and "static const long SW_[SK] = { 0, 80 };" in source
        exe = build(source, FLAGS)
        for procs, threads in ((1, 1), (1, 2), (2, 1), (3, 1), (1, 3)):
            y = _solve(ivp, v, n, 3, h, procs, threads, tmp_path / "y.bin", exe)
            assert np.max(np.abs(y - ref)) <= 1e-12 * np.max(np.abs(ref)), (v.name, procs, threads)


def _small_l3(tmp_path, sets: int):
    """The Haswell file with an L3 of `sets` sets (20 ways of 64 B lines, 8 cores): strips narrow
    enough to split a grid small enough to solve in a test."""
    import yaml
    from autotune.specs.machine import load_machine
    from autotune.specs.shipped import shipped_dir
    data = yaml.safe_load((shipped_dir("machines") / "haswell-ep-e5-2630v3.yaml").read_text())
    l3 = next(c for c in data["memory hierarchy"] if c["level"] == "L3")
    l3["cache per group"]["sets"] = sets
    path = tmp_path / "small-l3.yaml"
    path.write_text(yaml.safe_dump(data))
    return load_machine(str(path))


SWEEP_STRIPS = ("lc=jl-onepass,comm={},au=fused,pred=direct,buf={},rhs={}{},traversal=strips",
                "lc=jl-onepass,comm={},au=fused,pred=direct,buf=ghost,rhs=onepass,fuse=rhs-lc,block=l2{},"
                "traversal=strips")


@pytest.mark.parametrize("name,n,sets,width", [("heat2d", 40401, 16384, (201,)), ("heat3d", 27000, 512, (8, 30))])
def test_sweeps_over_strips_compute_the_paper_forms_numbers(name, n, sets, width, tmp_path):
    """The separate and fused sweeps over strips, with an L3 small enough that strips split heat3d's
    grid (its 30 rows in strips of 8, the last 6; heat2d's strips are whole rows: row order), on 1
    to 3 ranks and threads: regions that start and end inside a row (a plane), overlapped
    exchanges, both ways of reading the argument vectors and streaming stores.  The same numbers
    as the paper form's to rounding."""
    machine = _small_l3(tmp_path, sets)
    ivp, h = load_ivp(name), 1e-6
    ref = _solve(ivp, Variant("ijl", "allgather"), n, 3, h, 1, 1, tmp_path / "ref.bin")
    y0 = _solve(ivp, Variant("ijl", "allgather"), n, 0, h, 1, 1, tmp_path / "y0.bin")
    assert np.max(np.abs(ref - y0)) > 1e-8
    separate, fused = SWEEP_STRIPS
    forms = [separate.format("allgather", "pack", "stages", ""), separate.format("neighbour", "ghost", "onepass", ""),
             separate.format("neighbour", "pack", "stages", ",overlap=halo"),
             fused.format("allgather", ""), fused.format("neighbour", ",store=nt")]
    for form in forms:
        v = parse_variant(form, ivp.comm)
        source = solver_source(ivp, METHOD, v, n, machine)
        assert f"static const long RW_[RK] = {{ 0, {', '.join(map(str, width))} }};" in source
        exe = build(source, FLAGS)
        for procs, threads in ((1, 1), (1, 2), (2, 1), (3, 1), (1, 3)):
            y = _solve(ivp, v, n, 3, h, procs, threads, tmp_path / "y.bin", exe)
            assert np.max(np.abs(y - ref)) <= 1e-12 * np.max(np.abs(ref)), (v.name, procs, threads)


def test_pipelined_steps_of_a_3d_grid_compute_the_paper_forms_numbers(tmp_path):
    """heat3d (N = 30: its planes 900 apart) in row order and over strips 8 x 8 wide (the zen4
    file's 1 MiB L2: four strips a dimension, the last 6 wide), each strip's planes of 20 x 20
    local components, on 1 to 3 ranks and threads: the same numbers as the paper form's."""
    from autotune.specs.machine import load_machine
    zen4 = load_machine("zen4-epyc-vm-2core")
    ivp, n, h = load_ivp("heat3d"), 27000, 1e-5
    ref = _solve(ivp, Variant("ijl", "allgather"), n, 3, h, 1, 1, tmp_path / "ref.bin")
    y0 = _solve(ivp, Variant("ijl", "allgather"), n, 0, h, 1, 1, tmp_path / "y0.bin")
    assert np.max(np.abs(ref - y0)) > 1e-8
    for form in (PIPE.format("neighbour", "l2"), STRIPS.format("neighbour", "l2")):
        v = parse_variant(form, ivp.comm)
        source = solver_source(ivp, METHOD, v, n, zen4)
        assert v.traversal == "rows" or "static const long SW_[SK] = { 0, 8, 8 };" in source
        exe = build(source, FLAGS)
        for procs, threads in ((1, 1), (1, 2), (2, 1), (3, 1), (1, 3)):
            y = _solve(ivp, v, n, 3, h, procs, threads, tmp_path / "y.bin", exe)
            assert np.max(np.abs(y - ref)) <= 1e-12 * np.max(np.abs(ref)), (v.name, procs, threads)


@pytest.mark.parametrize("form,procs,threads", [("lc=jli,comm=neighbour", 2, 1),
                                                ("lc=jli,comm=allgather", 3, 1),
                                                (PIPE.format("allgather", "l1"), 1, 2)])
def test_a_3d_grid_converges_at_the_method_order(form, procs, threads, tmp_path):
    """heat3d (N = 6: the seven-point stencil's planes 36 apart) against scipy, the paper's form
    and the pipelined step (whose numbers over strips are the same: above)."""
    ivp = load_ivp("heat3d")
    _converges(ivp, parse_variant(form, ivp.comm), 216, 0.05, (0.00625, 0.003125, 0.0015625), tmp_path,
               procs, threads)


def test_strips_need_a_grid():
    from autotune.errors import InputError
    with pytest.raises(InputError, match="inverterchain at n = 200: the IVP declares no grid"):
        solver_source(load_ivp("inverterchain"), METHOD, parse_variant(STRIPS.format("allgather", "l2"),
                                                                     ("allgather",)), 200)


ALIGNED_FORMS = ("lc=jl-onepass,comm={}", "lc=jl-onepass,comm={},au=fused,pred=direct,buf=ghost",
                 "lc=jl-onepass,comm={},au=fused,pred=direct,buf=ghost,rhs=onepass,fuse=rhs-lc,block=l1",
                 PIPE.format("{}", "l1"))


@pytest.mark.parametrize("name,n,schemes", [("inverterchain", 203, ("allgather", "neighbour")),
                                            ("string-row", 406, ("sparse",))])
def test_own_blocks_start_on_a_cache_line(name, n, schemes, tmp_path):
    """Every scheme's buffers put each rank's own block of the argument vectors and y on a cache
    line (LEAD), beside F and the vectors of their own, whatever the halo and wherever the rank's
    block starts (n and the blocks of 2 and 3 ranks not multiples of 8): a row one double off
    its line split every 64-byte store, and the LC ran 1.7 x slower than the code kerncraft
    analyses.  The solver built with AUTOTUNE_CHECK_ALIGNED aborts where one is not."""
    ivp = load_ivp(name)
    variants = [parse_variant(form.format(comm), ivp.comm) for comm in schemes for form in ALIGNED_FORMS
                if "pipe" not in form or comm != "sparse"]      # the pipelined step exchanges no sparse blocks
    assert len(variants) == 4 * len(schemes) - schemes.count("sparse")
    with ThreadPoolExecutor(2) as pool:
        exes = list(pool.map(lambda v: build(solver_source(ivp, METHOD, v, n), FLAGS + ("-DAUTOTUNE_CHECK_ALIGNED",)),
                             variants))
    for v, exe in zip(variants, exes):
        for procs in (1, 2, 3):
            _solve(ivp, v, n, 1, 1e-4, procs, 1, tmp_path / "y.bin", exe)


def test_pipelined_steps_of_the_coupled_blocks_compute_the_same_numbers(tmp_path):
    """Where a component reads the coupled block N away (string-row, medakzo: the pipelined form
    never pays there, but a named variant must still be right), one more than the stated access
    distance: the block's halo beyond it."""
    for name, n, h in (("string-row", 600, 1e-4), ("medakzo", 600, 1e-6)):
        ivp = load_ivp(name)
        ref = _solve(ivp, Variant("ijl", "allgather"), n, 3, h, 1, 1, tmp_path / "ref.bin")
        v = parse_variant(PIPE.format("allgather", "l1"), ivp.comm)
        exe = build(solver_source(ivp, METHOD, v, n), FLAGS)
        for procs, threads in ((1, 3), (3, 1), (2, 2)):
            y = _solve(ivp, v, n, 3, h, procs, threads, tmp_path / "y.bin", exe)
            assert np.max(np.abs(y - ref)) <= 1e-12 * np.max(np.abs(ref)), (name, procs, threads)


@pytest.mark.parametrize("name,n,T,hs,comm", [("heat2d", 36, 0.05, (0.0125, 0.00625, 0.003125), "allgather"),
                                              ("inverterchain", 20, 1.0, (0.25, 0.125, 0.0625), "neighbour"),
                                              ("wave1d", 64, 0.4, (0.02, 0.01, 0.005), "neighbour"),
                                              ("string-mix", 50, 2.0, (0.1, 0.05, 0.025), "neighbour")])
@pytest.mark.parametrize("procs,threads", [(1, 1), (1, 2), (2, 1)])
def test_pipelined_steps_converge_at_the_method_order(name, n, T, hs, comm, procs, threads, tmp_path):
    """(heat2d on allgather: at n = 36 the neighbour exchange of (m + 1) d = 42 ghost components
    needs blocks of at least 42)"""
    _converges(load_ivp(name), parse_variant(PIPE.format(comm, "l1"), (comm,)), n, T, hs, tmp_path, procs, threads)


def test_sparse_exchange_on_three_ranks_matches_allgather(tmp_path):
    """Blocks that straddle the coupling boundary and partners that are not rank +- 1."""
    for name, n, h in (("medakzo", 200, 1e-6), ("string-row", 202, 1e-4)):
        ivp = load_ivp(name)
        ref = _solve(ivp, Variant("jli", "allgather"), n, 3, h, 1, 1, tmp_path / f"{name}-ref.bin")
        got = _solve(ivp, Variant("jli", "sparse"), n, 3, h, 3, 1, tmp_path / f"{name}-sparse.bin")
        assert np.max(np.abs(got - ref)) <= 1e-12 * np.max(np.abs(ref)), name


def test_bad_compiler_flags_are_a_tool_error(tmp_path):
    from autotune.errors import ToolError
    src = solver_source(load_ivp("wave1d"), METHOD, Variant("ijl", "allgather"), 256)
    with pytest.raises(ToolError, match="log:"):
        build(src, ("-O3", "-fno-such-flag-at-all"))


def test_streaming_stores_are_emitted_where_store_nt(tmp_path):
    """store=nt: the fused sweeps that write argument vectors (the predictor's and the
    corrector's) stream them out with non-temporal stores; store=none has none.  Counted in the
    disassembly of the build (x86: movntpd / vmovntpd)."""
    import platform
    import shutil
    import subprocess
    if platform.machine() not in ("x86_64", "AMD64") or not shutil.which("objdump"):
        pytest.skip("counts x86 non-temporal stores with objdump")
    ivp = load_ivp("heat2d")
    base = dict(au="fused", pred="direct", buf="ghost", rhs="onepass", fuse="rhs-lc", block="l1")
    counts = {}
    for store in ("none", "nt"):
        exe = build(solver_source(ivp, METHOD, Variant("jl-onepass", "neighbour", store=store, **base), 4096), FLAGS)
        text = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(exe)], capture_output=True, text=True,
                              check=True).stdout
        counts[store] = sum(1 for line in text.splitlines() if "movntpd" in line or "movntdq" in line)
    assert counts["none"] == 0 and counts["nt"] >= 2, counts      # one streaming loop per sweep kind at least

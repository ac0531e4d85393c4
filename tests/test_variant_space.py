"""The variant space as data: values with their rules, the fused sweeps, the overlap.  Pure."""
import re

import pytest

from autotune.codegen.parts import fused_parts, pack_part
from autotune.dimensions.block import tile_components
from autotune.errors import InputError
from autotune.model.bound import compulsory_vectors
from autotune.model.ecm import interior_share
from autotune.model.ops import SCALAR
from autotune.model.steptime import FormTimes, variant_times
from autotune.specs.ivp import load_ivp
from autotune.specs.machine import load_machine
from autotune.specs.method import load_method
from autotune.specs.shipped import shipped_dir
from autotune.specs.step import FUSED_GROUPS
from autotune.specs.variants import (DIMENSIONS, broken_rule, enumerate_variants, ivp_for, parse_filter, parse_variant,
                                     matches, spaces)

from .conftest import free_factor, pool_size
from .forms import form, parts

METHOD = load_method("radauIIA7")
FUSED = "lc=jl-onepass,comm=neighbour,au=fused,pred=direct,buf=ghost,rhs=onepass,fuse=rhs-lc,block=l2"


@pytest.mark.parametrize("ivp", ["heat2d", "inverterchain"])
def test_pool_is_large_and_every_value_occurs(ivp):
    pool = enumerate_variants(load_ivp(ivp).comm)
    assert len(pool) == pool_size(ivp) and len({v.name for v in pool}) == len(pool)
    for key, dim in DIMENSIONS.items():      # (neither IVP can be stored another way: an ivp hook's default)
        want = {dim.default} if dim.ivp or dim.control else set(dim.values) - ({"sparse"} if key == "comm" else set())
        assert {getattr(v, key) for v in pool} == want, key
    assert all(broken_rule(v.fields()) is None for v in pool)
    # with step-size control: each variant once per norm and reduction it can run, none at the
    # fixed step's values; the pipelined step sums the norm in its last level and keeps y (no
    # save to overlap): only norm=fused, reduce=blocking
    controlled = enumerate_variants(spaces(load_ivp(ivp), True))
    assert len(controlled) == pool_size(ivp, controlled=True) == (len(pool) - sum(v.pipe == "wavefront" for v in pool)) \
        * 4 + sum(v.pipe == "wavefront" for v in pool)
    for key, dim in DIMENSIONS.items():
        if dim.control:
            assert {getattr(v, key) for v in controlled} == set(dim.values) - {dim.default}, key
    assert {(v.norm, v.reduce) for v in controlled if v.pipe == "wavefront"} == {("fused", "blocking")}
    # fused: block l1 or l2, on two schemes of which one overlaps, stores through the caches or
    # streaming, the argument vectors packed or in their buffers; and pipelined: block l1 or l2 on
    # the two schemes (buf=ghost, no overlap, no streaming); halo: the neighbour scheme's 64
    # unfused and 2 x 2 fused forms, packed or not; each times the dimensions no rule names
    # (and over strips: the fused forms of block l2, and the pipelined on the two schemes)
    assert sum(v.fuse == "rhs-lc" for v in pool) == (6 * 2 * 2 + 6 * 2 + 2 * 2 + 2) * free_factor()
    assert sum(v.pipe == "wavefront" for v in pool) == (2 * 2 + 2) * free_factor()
    # over strips: the forms whose RHS sweeps differ (fused or not, packed or not, one vector or
    # all s a sweep, overlapped, streaming), each once with the one-pass LC, the direct
    # predictor and the fused APPROX+UPDATE
    strips = [v for v in pool if v.traversal == "strips"]
    assert len(strips) == (2 * 2 * 3 + 6 * 2 + 2) * free_factor()
    assert all((v.lc, v.pred, v.au) == ("jl-onepass", "direct", "fused") and v.block in ("none", "l2")
               for v in strips)
    assert all(v.buf == "ghost" and v.overlap == "none" and v.store == "none" for v in pool if v.pipe != "none")
    assert sum(v.store == "nt" for v in pool) == 6 * 3 * free_factor()
    assert sum(v.overlap == "halo" for v in pool) == ((64 + 2 * 2) * 2 + 4 + 4) * free_factor()


def test_rules_keep_combinations_that_cannot_run_out():
    heat = load_ivp("heat2d")
    medakzo = enumerate_variants(load_ivp("medakzo").comm)    # sparse and allgather: no halo-only scheme
    assert not any(v.overlap == "halo" for v in medakzo)
    assert all(v.lc == "jl-onepass" and v.rhs == "onepass" for v in enumerate_variants(heat.comm) if v.fuse != "none")
    assert all((v.block == "none") == (v.fuse == "none") for v in enumerate_variants(heat.comm))
    assert parse_variant(FUSED, heat.comm).name == FUSED
    for bad, why in [("lc=jli,comm=neighbour,fuse=rhs-lc", "fuse=rhs-lc needs lc=jl-onepass"),
                     ("lc=jli,comm=allgather,overlap=halo", "overlap=halo needs comm=neighbour"),
                     ("lc=jli,comm=neighbour,block=l1", "block=l1 needs fuse=rhs-lc"),
                     ("lc=jli,comm=neighbour,store=nt", "store=nt needs fuse=rhs-lc"),
                     (FUSED.replace("buf=ghost,", "") + ",pipe=wavefront", "pipe=wavefront needs buf=ghost"),
                     (FUSED + ",store=nt,pipe=wavefront", "pipe=wavefront needs store=none"),
                     ("lc=jli,comm=neighbour,traversal=strips", "traversal=strips needs lc=jl-onepass"),
                     (FUSED.replace("l2", "l1") + ",pipe=wavefront,traversal=strips",
                      "traversal=strips needs block=none|l2")]:
        with pytest.raises(InputError, match=re.escape(why)):
            parse_variant(bad, heat.comm)
    flt = parse_filter("fuse=rhs-lc,comm=neighbour")
    # block l1 or l2 (l2 also over strips), overlapped or not, streaming or not, packed or not;
    # and pipelined (l1 or l2, and l2 over strips)
    assert len([v for v in enumerate_variants(heat.comm) if matches(v, flt)]) == (4 * 2 * 3 + 3) * free_factor()


def test_an_ivp_of_two_coupled_blocks_has_the_variants_of_both_ways_of_storing_them():
    """string-row's pool: its variants as its file stores the blocks (its schemes: allgather,
    sparse), and those of its twin (allgather, neighbour), each priced with the IVP it stores."""
    row = load_ivp("string-row")
    pool = enumerate_variants(spaces(row))
    hooked = [k for k, d in DIMENSIONS.items() if d.ivp]
    assert len(pool) == pool_size("string-row") == len(enumerate_variants(row.comm)) + pool_size("string-mix") \
        and len({v.name for v in pool}) == len(pool)       # (string-mix: string-row's twin written by hand)
    ways = {}
    for v in pool:
        ways.setdefault(tuple(getattr(v, k) for k in hooked), set()).add(v.comm)
    stored = {w: ivp_for(row, next(v for v in pool if tuple(getattr(v, k) for k in hooked) == w)) for w in ways}
    assert sorted(ivp.name for ivp in stored.values()) == ["string-row", "string-row.interleaved"]
    for w, ivp in stored.items():
        assert ways[w] == set(ivp.comm)
    twin = next(v for v in pool if ivp_for(row, v).name != "string-row")
    assert ivp_for(ivp_for(row, twin), twin) == ivp_for(row, twin)          # a stored IVP is its own
    assert parse_variant(twin.name, spaces(row)) == twin
    with pytest.raises(InputError, match="cannot be stored so"):
        parse_variant(twin.name, spaces(load_ivp("heat2d")))
    with pytest.raises(InputError, match="comm=neighbour not applicable"):
        parse_variant("lc=jli,comm=neighbour", spaces(row))


def _missing_code(dim, value) -> list[str]:
    """The names in a value's `renders` that are no template file under variants/, and in it no
    macro it defines nor a variable it reads that the dimension's render hook gives for that
    value (a word in a comment is none of these)."""
    from jinja2 import Environment, meta

    from autotune.codegen.solver import dimension_context
    path, _, names = value.renders.split(" ")[0].partition(":")
    file = shipped_dir("variants") / path
    if not file.is_file():
        return [path]
    text = file.read_text()
    reads = meta.find_undeclared_variables(Environment().parse(text))
    macros = set(re.findall(r"{%-?\s*macro\s+(\w+)\s*\(", text))
    pool = enumerate_variants(("allgather", "neighbour")) + enumerate_variants(spaces(load_ivp("string-row"))) \
        + enumerate_variants(spaces(load_ivp("heat2d"), True))
    variant = next((v for v in pool if getattr(v, dim.key) == value.name), None)
    given = set(dimension_context(load_ivp("heat2d"), METHOD, variant, None, 40000)) if variant and dim.render else set()
    return [n for n in filter(None, names.split(",")) if not (n in macros or (n in reads and n in given))]


def test_every_value_names_code_that_exists():
    """Adding a value is its code plus its entry."""
    for dim in DIMENSIONS.values():
        for value in dim.choices:
            assert _missing_code(dim, value) == [], (dim.key, value.name)


def test_a_value_named_by_a_word_in_a_comment_names_no_code():
    from autotune.specs.dimension import Value
    store = DIMENSIONS["store"]
    assert _missing_code(store, Value("none", "solver.c.j2:stores through the caches")) == ["stores"]
    assert _missing_code(store, Value("none", "solver.c.j2:stream_row")) == ["stream_row"]   # C, not a macro
    assert _missing_code(store, Value("none", "gone.c.j2")) == ["gone.c.j2"]


def test_fused_step_moves_exactly_the_compulsory_traffic():
    """fuse=rhs-lc with ghost buffers touches y, s old and s new argument vectors per iteration:
    the floor's 2ms + m + 2 vectors (y written by the last sweep counts once more)."""
    s, m = METHOD.stages, METHOD.iterations
    step = form(METHOD, "jl-onepass", "fused", "direct", "ghost", "onepass", "rhs-lc")
    sweeps = step.sweeps()
    assert [sw.group for sw in sweeps] == ["RHSLCD"] + ["RHSLC"] * (m - 1) + ["RHSAU"]
    assert sum(len(sw.vectors) for sw in sweeps) + 1 == compulsory_vectors(s, m) == 56
    c = step.counts
    assert c.executions == {"RHSLCD": 1, "RHSLC": m - 1, "RHSAU": 1} and c.comm_phases == 1 + m * s
    assert parts(METHOD, "jl-onepass", "fused", "direct", "ghost", "rhs-lc") == []
    assert [p.name for p in parts(METHOD, "jl-onepass", "fused", "direct", "pack", "rhs-lc")] == [
        pack_part(METHOD).name]


def test_fused_parts_consume_each_derivative_in_the_same_iteration():
    heat = load_ivp("heat2d")
    lc, lcd, au = (fused_parts(heat, METHOD, g)[0] for g in ("RHSLC", "RHSLCD", "RHSAU"))
    assert (lc.kernel, lc.name, lc.halo, lc.size_parameter) == ("RHSLC", "rhslc.heat2d.interior", "N", "N")
    assert lc.body.count("f3 = ") == 1 and lc.body.count("Yn[") == 4 and "y[3][j+N]" in lc.body
    assert "Yn[2][j - N] = u[j - N] + h * (a[2][0]*f0 + a[2][1]*f1 + a[2][2]*f2 + a[2][3]*f3);" in lc.body
    assert lcd.body.count("f0 = ") == 1 and "f1" not in lcd.body and "h * c[3] * f0" in lcd.body
    assert "u[j - N] = u[j - N] + h * (b[0]*f0" in au.body and "Yn" not in au.code
    assert lc.arrays == (("y", 4), ("Yn", 4), ("u", 1)) and lc.iterations_per_m == 1 and lc.unroll == 1
    assert set(FUSED_GROUPS) == {"RHSLCD", "RHSLC", "RHSAU"}


def test_overlap_hides_the_smaller_of_communication_and_interior():
    assert interior_share(1000, 100) == 0.8 and interior_share(100, 60) == 0.0
    form = FormTimes(3.0, 1.6)          # the parts' 3 s, of which the sweeps reading halos take 1.6 s
    t = variant_times(SCALAR, form, 4, 0.5, 0.3, True, 1.0)
    assert t.total == pytest.approx(3.0 + 2.0 + 0.3 - 0.3) and t.hidden == 0.3
    t = variant_times(SCALAR, form, 4, 0.5, 3.0, True, 1.0)          # communication longer
    assert t.total == pytest.approx(5.0 + 3.0 - 1.6)                  # max(comm, interior) + rest
    assert variant_times(SCALAR, form, 4, 0.5, 3.0, True, 0.5).hidden == pytest.approx(0.8)   # half is interior
    assert variant_times(SCALAR, FormTimes(1.0, 1.0), 0, 0.0, 0.5, False, 1.0).total == 1.5


def test_tile_from_the_cache_sizes():
    ref = load_machine("haswell-ep-e5-2630v3")       # L1 32 KiB, L2 256 KiB per core
    assert tile_components(ref, "l1", 4) == 32 * 1024 // (2 * 8 * 4) == 512
    assert tile_components(ref, "l2", 4) == 4096 and tile_components(None, "l2", 4) == 8192
    assert tile_components(ref, "none", 4) == 0

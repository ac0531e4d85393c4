"""Exclusions are typed records: what is left out (a scheme or a dimension's value) and why,
merged in the order they were found, looked up by how names spell them; a variant's reason is
its scheme's first, then its first refused value's."""
from autotune.specs.exclusion import COMM, Exclusion, Exclusions
from autotune.specs.variants import parse_variant


def test_merge_keeps_the_order_found_and_the_later_reason():
    a = Exclusions([Exclusion(COMM, "allgather", "too few nodes"), Exclusion("store", "nt", "fits in L3")])
    b = Exclusions([Exclusion("store", "nt", "reread soon"), Exclusion("pipe", "wavefront", "window too big")])
    m = a.merged(b)
    assert [e.item for e in m] == ["comm=allgather", "store=nt", "pipe=wavefront"]
    assert m["store=nt"].why == "reread soon" and "comm=allgather" in m and "store=none" not in m
    assert [e.value for e in m.schemes()] == ["allgather"] and len(m.values()) == 2
    assert m == a.merged(b) and m != b.merged(a) and not Exclusions() and len(m) == 3


def test_a_variant_is_excluded_by_its_scheme_first_then_its_values_in_order():
    comm = ("neighbour", "allgather")
    v = parse_variant("lc=jl-onepass,comm=allgather,au=fused,pred=direct,buf=ghost,rhs=onepass,fuse=rhs-lc,"
                      "block=l1,store=nt", comm)
    values = Exclusions([Exclusion("store", "nt", "store's"), Exclusion("block", "l1", "block's")])
    assert values.why(v, ["block", "store"]) == "block's" and values.why(v, ["store", "block"]) == "store's"
    both = values.merged(Exclusions([Exclusion(COMM, "allgather", "scheme's")]))
    assert both.why(v, ["block", "store"]) == "scheme's"
    assert Exclusions([Exclusion("store", "none", "x")]).why(v, ["store"]) is None
    assert Exclusion("store", "nt", "").excludes(v) and not Exclusion("block", "l2", "").excludes(v)


def test_an_exclusion_that_holds_for_one_way_of_storing_the_ivp_names_it():
    """An IVP stored two ways (blocks): a value or scheme one way refuses is named with that way,
    excludes that way's variants only, and is written once, without the way, where every way
    refuses it for the same reason."""
    from autotune.specs.ivp import load_ivp
    from autotune.specs.scenario import scheme_checks
    from autotune.specs.variants import spaces

    row = spaces(load_ivp("string-row"))
    pipe = "lc=jl-onepass,comm=allgather,au=fused,pred=direct,buf=ghost,rhs=onepass,fuse=rhs-lc,block=l1,pipe=wavefront"
    mine, twin = parse_variant(pipe, row), parse_variant(pipe + ",blocks=interleaved", row)
    way = (("blocks", "separate"),)
    one = Exclusions([Exclusion("pipe", "wavefront", "N away", way)])
    assert [e.item for e in one] == ["pipe=wavefront,blocks=separate"]
    assert one.why(mine, ["pipe"]) == "N away" and one.why(twin, ["pipe"]) is None
    assert one["pipe=wavefront,blocks=separate"].excludes(mine) and not one["pipe=wavefront,blocks=separate"].excludes(twin)
    both = one.merged(Exclusions([Exclusion("pipe", "wavefront", "N away", (("blocks", "interleaved"),))]))
    assert [e.item for e in both.collapsed(2)] == ["pipe=wavefront"] and both.collapsed(2).why(twin, ["pipe"]) == "N away"
    differ = one.merged(Exclusions([Exclusion("pipe", "wavefront", "other", (("blocks", "interleaved"),))]))
    assert differ.collapsed(2) is differ and differ.why(twin, ["pipe"]) == "other"
    # a scheme one way cannot run while the other can, per way; one every way refuses, once
    from dataclasses import dataclass

    @dataclass
    class Sc:
        n: int
        nodes: int
    stored = load_ivp("string-row")
    twin_ivp = load_ivp("string-row.interleaved")
    ok, out = scheme_checks(Sc(4, 2), [(way, stored, ["allgather", "sparse"]),
                                       ((("blocks", "interleaved"),), twin_ivp, ["allgather", "neighbour"])])
    assert ok == ((way, ("allgather", "sparse")), ((("blocks", "interleaved"),), ("allgather",)))
    assert [e.item for e in out] == ["comm=neighbour"] and out.why(twin) is None

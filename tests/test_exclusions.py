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

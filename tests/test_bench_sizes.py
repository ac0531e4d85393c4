"""The size benchmark's variant sets: the same names at every size, less what a size refuses."""
from benchmarks.sizes import runnable, variant_set


def test_the_cover_drops_store_nt_only_where_the_last_level_holds_what_it_streams():
    names = variant_set("heat2d", "cover")
    assert names == variant_set("heat2d", "cover") and any("store=nt" in x for x in names)
    # the reference node (20 MB L3 for 8 cores): at n = 40000 the step fits, at 3.6e7 it does not
    small = runnable(names, "heat2d", "haswell-ep-e5-2630v3", 40000, 1, 8)
    large = runnable(names, "heat2d", "haswell-ep-e5-2630v3", 35808256, 1, 8)
    # (and the pipelined step at neither in row order: at 40000 the step's data stays in the L3,
    # at 3.6e7 the windows at access distance 5984 on 8 threads do not fit it; over strips at 3.6e7;
    # the sweeps' strips of a 2D grid are whole rows, row order: at neither)
    assert any("pipe=wavefront" in x for x in names) and any("traversal=strips" in x for x in names)
    assert large == [x for x in names if ("pipe=wavefront" in x) == ("traversal=strips" in x)]
    assert small == [x for x in names if "store=nt" not in x and "pipe=wavefront" not in x
                     and "traversal=strips" not in x] and len(small) < len(large)

"""A fused sweep's tile priced where its data lives (model.tiles), by hand-counted lines; and
block=l1 and block=l2 told apart in a ranking where their traffic differs."""
import pytest

from autotune.model.learned import recombine
from autotune.model.tiles import home_level, tile_cycles, tile_rows, tiled
from autotune.specs.machine import CacheLevel
from autotune.specs.parts import KernelPart, Loop

# a node like the reference's cores: 32 KiB L1, 256 KiB L2 per core, 20 MiB L3 for 8 cores;
# L1-L2 64 B/cy, L2-L3 32 B/cy, both half-duplex
CACHES = (CacheLevel("L1", 32 * 1024, 1), CacheLevel("L2", 256 * 1024, 1, upstream_bytes_per_cycle=64.0),
          CacheLevel("L3", 20 * 2**20, 8, upstream_bytes_per_cycle=32.0))
TERMS = {"T_comp (overlapping)": 30.0, "T_RegL1 (overlapping)": 10.0, "T_L1L2": 13.0, "T_L2L3": 26.0,
         "T_L3MEM": 39.0}
RESULT = {"ok": True, "terms": TERMS, "cy_per_cl": 78.0, "t_comp": 30.0, "saturation_cores": 2,
          "scaling_cy_per_cl": [78.0, 39.0]}


def _part():
    # a fused corrector sweep of s = 4: four argument rows and y read, four new rows written
    return KernelPart("rhslc.x.interior", "RHSLC", "", (Loop("j", "0", "M"),),
                      (("y", 4), ("Yn", 4), ("u", 1)), stores=("Yn",))


def test_where_the_tile_lives():
    assert tile_rows(_part()) == 9
    # s = 4 rows of F and 9 rows passing through: 13 * 8 B = 104 B per component
    assert home_level(315, 4, 9, CACHES) == 0            # 32,760 B: L1 holds it
    assert home_level(316, 4, 9, CACHES) == 1            # 32,864 B: L2
    assert home_level(512, 4, 9, CACHES) == 1            # the reference's l1 tile: 53 KB, in L2
    assert home_level(4096, 4, 9, CACHES) == 2           # its l2 tile: 426 KB, in L3
    assert home_level(10**7, 4, 9, CACHES) == 2          # none holds it: the last level


def test_tile_cycles_by_hand():
    # F's 4 lines per line of work cross each interface 3 times: 8 loads and 4 stores
    assert tile_cycles(0, 4, CACHES, 64) == {}
    assert tile_cycles(1, 4, CACHES, 64) == {"L1-L2": 12.0}                    # 12 lines at 1 cy
    assert tile_cycles(2, 4, CACHES, 64) == {"L1-L2": 12.0, "L2-L3": 24.0}     # and 12 at 2 cy
    duplex = (CACHES[0], CacheLevel("L2", 256 * 1024, 1, upstream_bytes_per_cycle=64.0, full_duplex=True))
    assert tile_cycles(1, 4, duplex, 64) == {"L1-L2": 8.0}                     # max(8 loads, 4 stores)
    unknown = (CACHES[0], CacheLevel("L2", 256 * 1024, 1))
    assert tile_cycles(1, 4, unknown, 64) == {}          # the file does not say what a line costs


def test_tiled_result_adds_the_tiles_lines_and_recombines():
    l1 = tiled(RESULT, _part(), 300, 4, CACHES, 64, 2, 2)
    assert l1 is RESULT                                  # L1 holds the tile: nothing moves
    l2 = tiled(RESULT, _part(), 512, 4, CACHES, 64, 2, 2)
    assert l2["terms"]["T_L1L2"] == 25.0 and l2["terms"]["T_L2L3"] == 26.0
    assert l2["cy_per_cl"] == pytest.approx(25 + 26 + 39)        # kerncraft's serial sum (RegL1 overlaps)
    l3 = tiled(RESULT, _part(), 4096, 4, CACHES, 64, 2, 2)
    assert l3["terms"]["T_L1L2"] == 25.0 and l3["terms"]["T_L2L3"] == 50.0 and l3["terms"]["T_L3MEM"] == 39.0
    assert l3 == recombine(RESULT, l3["terms"], 2, 2) and l3["cy_per_cl"] > l2["cy_per_cl"]
    # the lines the analysis counted get F's 3 s = 12 lines at each interface the tile's lines cross
    counted = dict(RESULT, lines={"L1-L2": 13.0, "L2-L3": 13.0, "L3-MEM": 13.0})
    assert tiled(counted, _part(), 4096, 4, CACHES, 64, 2, 2)["lines"] == {"L1-L2": 25.0, "L2-L3": 25.0,
                                                                            "L3-MEM": 13.0}
    assert "lines" not in l3                              # an analysis stored without them: none made up
    failed = {"ok": False, "error": "x"}
    assert tiled(failed, _part(), 512, 4, CACHES, 64, 2, 2) is failed
    assert tiled(RESULT, _part(), 0, 4, CACHES, 64, 2, 2) is RESULT      # block=none


def test_l1_and_l2_tiles_no_longer_tie(replay_store):
    """On the reference machine the l2 tile's derivatives spill to L3 with the rows passing
    beside them, the l1 tile's only to L2: the ranking tells them apart (they tied before)."""
    import autotune
    res = autotune.rank("heat2d", nodes=1, n=4_000_000, store=replay_store, jobs=1,
                        variant_filter="fuse=rhs-lc,comm=neighbour,overlap=none,store=none")
    by_block = {r.variant.block: r.prediction.total_s for r in res.ordered}
    assert set(by_block) == {"l1", "l2"} and by_block["l1"] < by_block["l2"]

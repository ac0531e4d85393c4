"""An IVP's grid (specs.grid): the split of flat offsets per dimension, and the IVP file's
declaration checked against n and the RHS subscripts."""
import pytest

from autotune.errors import InputError
from autotune.specs.grid import split, strides, subscript_offset, uses_position
from autotune.specs.ivp import load_ivp

GRID = """name: g
size_parameter: N
n: "N**2"
access_distance: "N"
default_n: 10000
comm: [allgather]
grid:
  extent: ["N", "N"]
  reach: [1, 1]
rhs:
  - name: i
    components: "N**2"
    halo: "N"
    expr: "y[j-N] + y[j-1] - 4.0*y[j] + y[j+1] + y[j + N]"
"""


def test_a_flat_offset_splits_into_one_offset_per_dimension():
    assert strides((5, 6, 7)) == (42, 7, 1)
    ext, reach = (100, 100), (1, 1)
    assert [split(o, ext, reach) for o in (0, 1, -1, 100, -100, 99, -101)] == \
        [(0, 0), (0, 1), (0, -1), (1, 0), (-1, 0), (1, -1), (-1, -1)]
    assert split(2, ext, reach) is None and split(200, ext, reach) is None     # beyond the reach
    assert split(-2 * 49 - 7 + 3, (9, 7, 7), (2, 1, 3)) == (-2, -1, 3)


def test_subscripts_are_offsets_in_the_size_parameter():
    assert [subscript_offset(s, "N", 10) for s in ("j", "j-N", "j + N*N", "j+1", " j - 2*N ")] == \
        [0, -10, 100, 1, -20]
    assert subscript_offset("2*j", "N", 10) is None and subscript_offset("j-k", "N", 10) is None
    assert not uses_position("cd * (y[j-N] + y[j])") and uses_position("(j*dz) * y[j]")


def test_heat2d_declares_its_grid():
    g = load_ivp("heat2d").grid
    assert g.extents("N", 2000) == (2000, 2000) and g.reach == (1, 1)
    assert load_ivp("inverterchain").grid is None


@pytest.mark.parametrize("edit,says", [
    (lambda s: s.replace('reach: [1, 1]', 'reach: [1, 1, 1]'), "3 entries for 2 dimension"),
    (lambda s: s.replace('extent: ["N", "N"]', 'extent: ["N", "N + 1"]'), "not n = 49"),
    (lambda s: s.replace('y[j + N]', 'y[j + 2*N]'), "no neighbour within the reach [1, 1]"),
    (lambda s: s.replace('y[j+1]', 'y[2*j]'), "expected j, j + offset or j - offset"),
    (lambda s: s.replace('extent: ["N", "N"]', 'extent: ["N"]'), "grid.extent"),
])
def test_a_bad_grid_names_the_file_and_what_is_wrong(tmp_path, edit, says):
    p = tmp_path / "g.yaml"
    p.write_text(edit(GRID))
    with pytest.raises(InputError) as e:
        load_ivp(str(p))
    assert str(p) in str(e.value) and "'grid" in str(e.value) and says in str(e.value), str(e.value)


def test_a_good_grid_loads(tmp_path):
    p = tmp_path / "g.yaml"
    p.write_text(GRID)
    assert load_ivp(str(p)).grid.extents("N", 5) == (5, 5)


def test_a_sweeps_strips_keep_its_layers_in_half_the_cache_and_share_the_work_alike():
    """A sweep's strips (no lagging levels): whole rows (the innermost dimension), the other inner
    dimensions as wide as their layers, counted as the regimes count a stencil's (2 d of each of
    the fused corrector's 2 s + 1 rows), fit half the cache allow; then as many strips as alike as
    they can be; no edge work."""
    from autotune.model.regime import _reuse_bytes
    from autotune.specs.strips import strips_for
    cube = strips_for((300, 300, 300), (1, 1, 1), 0, 4, 16 * 2**20)
    assert cube.width == (150, 300) and cube.distance == 150 * 300 + 300 + 1 and cube.edge_share(0) == 0.0
    widest = strips_for((300, 300, 300), (1, 1, 1), 0, 4, 2 * 2**20)     # 23 rows fit: 14 strips of 22
    assert widest.width == (22, 300) and 2 * (23 * 300 + 301) * 8 * 9 <= 2**20 < 2 * (24 * 300 + 301) * 8 * 9
    assert cube.layer_bytes() == cube.live_bytes() <= 8 * 2**20
    # in 2D a strip of whole rows is row order; where two rows' layers do not fit, no strip does
    assert strips_for((4000, 4000), (1, 1), 0, 4, 16 * 2**20).width == (4000,)
    assert strips_for((4000, 4000), (1, 1), 0, 4, 512 * 1024) is None
    # the regimes' count of the fused corrector's layers is the geometry's
    from autotune.codegen.parts import sweep_parts
    from autotune.specs.method import load_method
    from autotune.specs.step import Group
    part = sweep_parts(load_ivp("heat3d"), load_method("radauIIA7"), Group.RHSLC)[0]
    assert _reuse_bytes(part, cube.distance) == cube.layer_bytes()

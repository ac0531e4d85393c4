"""The step hooks run in the order their declarations give (specs.dimension.step_order): a field's
writers before its readers, an overridden dimension before the one that overrides it, otherwise by
position.  A conflict is an error at discovery; a hook that writes a field it does not declare is
an error when the form is built (specs.stepvalues.build).  Pure."""
from __future__ import annotations

import random
from dataclasses import replace
from itertools import permutations

import pytest

from autotune.specs.dimension import Dimension, ordered, step_order, values
from autotune.specs.method import load_method
from autotune.specs.step import Draft
from autotune.specs.stepvalues import HOOK_ORDER, build, step_form, step_keys
from autotune.specs.variants import DIMENSIONS, enumerate_variants, parse_variant

RADAU = load_method("radauIIA7")


def fake(key: str, position: int, hook=lambda d, v: None, **declared) -> Dimension:
    """A dimension of one value whose step hook is `hook`, with the declarations given."""
    return Dimension(key, position, values(["x"], "f:{}"), "x", key, step={"x": hook}, **declared)


def _respects(order: tuple[str, ...], dims) -> bool:
    """Every writer of a field before its other readers, every overridden dimension before its
    overrider."""
    at = {k: i for i, k in enumerate(order)}
    for d in dims:
        for o in d.overrides:
            if at[o] > at[d.key]:
                return False
        for w in dims:
            if w is not d and set(w.writes) & set(d.reads) and at[w.key] > at[d.key]:
                return False
    return True


def test_the_shipped_hooks_run_writers_first():
    hooked = [d for d in DIMENSIONS.values() if d.step]
    assert set(HOOK_ORDER) == set(step_keys()) and _respects(HOOK_ORDER, hooked)
    # store writes what the fused skeleton reads, so it runs before fuse despite its position;
    # pipe overrides fuse's skeleton, so it runs after
    assert HOOK_ORDER == ("lc", "au", "pred", "buf", "rhs", "store", "fuse", "pipe")


def test_the_order_follows_the_declarations_not_the_positions():
    chain = [fake("a", 1, writes=("pack",)), fake("b", 2, writes=("corrector_rhs",), reads=("pack",)),
             fake("c", 3, writes=("skeleton",), reads=("corrector_rhs",)),
             fake("d", 4, writes=("skeleton",), overrides=("c",))]
    for positions in permutations(range(4)):
        shuffled = [replace(d, position=p) for d, p in zip(chain, positions)]
        assert step_order(shuffled) == ("a", "b", "c", "d"), positions
    hooked = [d for d in DIMENSIONS.values() if d.step]
    rng = random.Random(49)
    for _ in range(20):
        positions = rng.sample(range(len(hooked)), len(hooked))
        shuffled = [replace(d, position=p) for d, p in zip(hooked, positions)]
        order = step_order(shuffled)
        assert _respects(order, shuffled), order
        at = order.index
        assert at("buf") < at("rhs") < at("fuse") < at("pipe") and at("store") < at("fuse"), order


def test_where_nothing_decides_position_does():
    free = [fake("c", 3, writes=("lc",)), fake("a", 1, writes=("finish",)), fake("b", 2, writes=("pack",))]
    assert step_order(free) == ("a", "b", "c")
    # reading a field with a default that no dimension writes is fine (it reads the default)
    assert step_order([fake("a", 1, writes=("lc",), reads=("streaming",))]) == ("a",)


@pytest.mark.parametrize("dims,message", [
    ([fake("a", 1, writes=("lc",)), fake("b", 2, writes=("lc", "pack"))],
     "dimensions 'a' and 'b' both write 'lc' and neither declares that it overrides the other"),
    ([fake("a", 1, writes=("lc",), reads=("pack",)), fake("b", 2, writes=("pack",), reads=("lc",))],
     "the step hooks' declarations make a cycle: 'a' reads 'pack' that 'b' writes; 'b' reads 'lc' that 'a' writes"),
    ([fake("a", 1, writes=("lc",), overrides=("b",)), fake("b", 2, writes=("lc",), overrides=("a",))],
     "the step hooks' declarations make a cycle: 'a' overrides 'b'; 'b' overrides 'a'"),
    ([fake("a", 1, writes=("lc",), reads=("method",))],
     "dimension 'a' reads 'method', which no dimension writes and the step's Draft has no default for"),
    ([fake("a", 1, writes=("lc",), reads=("lcs",))],
     "dimension 'a' reads 'lcs', which no dimension writes and the step's Draft has no default for"),
    ([fake("a", 1, writes=("lc",), overrides=("b",)), fake("b", 2, writes=("pack",))],
     r"dimension 'a' overrides 'b', which writes none of its fields \(lc\)"),
    ([fake("a", 1, writes=("lc",), overrides=("nobody",))],
     r"dimension 'a' overrides 'nobody', which writes none of its fields \(lc\)"),
    ([fake("a", 1, writes=("method",))],
     "dimension 'a' writes 'method', not a field of the step's Draft that hooks fill"),
])
def test_a_conflict_is_an_error_at_discovery(dims, message):
    with pytest.raises(ValueError, match=f"^{message}"):
        step_order(dims)
    with pytest.raises(ValueError, match=f"^{message}"):
        ordered(dims)


def test_the_shipped_dimensions_conflict_without_their_declarations():
    dims = dict(DIMENSIONS, pipe=replace(DIMENSIONS["pipe"], overrides=()))
    with pytest.raises(ValueError, match="'fuse' and 'pipe' both write 'skeleton'"):
        ordered(list(dims.values()))


def test_a_hook_declares_what_it_writes_or_has_none():
    with pytest.raises(ValueError, match="dimension 'a': a step hook that declares no Draft field it writes"):
        fake("a", 1)
    with pytest.raises(ValueError, match="dimension 'a': declares what a step hook writes, reads or overrides"):
        Dimension("a", 1, values(["x"], "f:{}"), "x", "a", reads=("pack",))
    toy = Dimension("toy", 1000, values(["plain", "unrolled"], "f:{}"), "plain", "a plug-in without a step hook")
    assert list(ordered([*DIMENSIONS.values(), toy]))[-1] == "toy"
    assert step_order([*DIMENSIONS.values(), toy]) == HOOK_ORDER


def _hooks(fields: dict[str, str], order=HOOK_ORDER, **swap: Dimension):
    return [(swap.get(k, DIMENSIONS[k]), fields[k]) for k in order]


def test_a_write_the_hook_does_not_declare_is_an_error():
    def hook(d, _):
        d.lc, d.pack = (), None
        d.finish = ((),)
    sloppy = fake("a", 1, hook, writes=("lc", "pack"))
    with pytest.raises(ValueError, match=r"^dimension 'a' writes 'finish' to the step's Draft, which it does not "
                                         r"declare \(writes: lc, pack\)"):
        build(Draft(RADAU, {"a": "x"}), [(sloppy, "x")])
    typo = fake("a", 1, lambda d, _: setattr(d, "lcs", ()), writes=("lc",))
    with pytest.raises(ValueError, match="dimension 'a' writes 'lcs'"):
        build(Draft(RADAU, {"a": "x"}), [(typo, "x")])


def test_a_write_inside_what_a_hook_installs_is_checked_too():
    """The fused skeleton settles the argument sets when it lays out the step: fuse declares it."""
    v = parse_variant("lc=jl-onepass,comm=neighbour,au=fused,pred=direct,buf=ghost,rhs=onepass,fuse=rhs-lc,block=l1",
                      ("neighbour",))
    fields = {k: getattr(v, k) for k in step_keys()}
    assert build(Draft(RADAU, fields), _hooks(fields)).sets == 2
    quiet = replace(DIMENSIONS["fuse"], writes=("skeleton", "own_parts"))
    with pytest.raises(ValueError, match="dimension 'fuse' writes 'sets' to the step's Draft"):
        build(Draft(RADAU, fields), _hooks(fields, fuse=quiet))


def test_the_shipped_forms_are_those_of_the_order_by_position():
    by_position = step_keys()
    assert by_position != HOOK_ORDER
    pool = enumerate_variants(("neighbour", "allgather"))
    assert len(pool) > 100
    for v in pool:
        fields = {k: getattr(v, k) for k in by_position}
        assert repr(build(Draft(RADAU, fields), _hooks(fields, by_position))) == repr(step_form(RADAU, v)), v.name

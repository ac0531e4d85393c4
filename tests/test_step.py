"""The step form (specs.step, specs.stepvalues): one description of a step that the counts, the
reuse model, the layout and the templates read.  Pure."""
import re

import pytest

from autotune.codegen.parts import render_part
from autotune.specs import methodparts as mp
from autotune.specs.method import build, load_method
from autotune.specs.shipped import shipped_dir
from autotune.specs.step import CORE_CLASS, PHASE, Group, Kind
from autotune.specs.stepvalues import step_keys
from autotune.specs.stepvalues import step_form
from autotune.specs.variants import parse_variant
from autotune.dimensions.lc import all_values as lc_values, specs as lc_specs
from autotune.specs.variants import DIMENSIONS, enumerate_variants

from .forms import form

RADAU = load_method("radauIIA7")   # s = 4, m = 6
_REF = re.compile(r"\b([A-Za-z]\w*)\[(\w+)\]\[j\]|\b([A-Za-z]\w*)\[j\]")


def _all_specs(s):
    out = [p for o in lc_values() for p in lc_specs(s, o)]
    out += [p for fused in (False, True) for p in mp.approx_update_specs(s, fused)]
    return out + [mp.lc_direct_spec(s), mp.pack_spec(), mp.copy_spec()]


@pytest.mark.parametrize("s", [1, 2, 4])
def test_declared_accesses_are_those_of_the_rendered_body(s):
    """The model reads the declarations, never the C: here the C is read once, to check them."""
    for spec in _all_specs(s):
        body = render_part(spec).body
        lhs, rhs = body.split("=", 1)
        refs = {(m[0] or m[2], m[1] or None) for m in _REF.findall(body)}
        assert refs == {(a.array, a.index) for a in spec.accesses}, spec.name
        written = {(m[0] or m[2], m[1] or None) for m in _REF.findall(lhs)}
        read = {(m[0] or m[2], m[1] or None) for m in _REF.findall(rhs)}
        assert written == {(a.array, a.index) for a in spec.accesses if "w" in a.mode}, spec.name
        assert read == {(a.array, a.index) for a in spec.accesses if "r" in a.mode}, spec.name


def test_every_value_of_a_step_shaping_dimension_contributes():
    assert set(step_keys()) <= set(DIMENSIONS)
    for key in step_keys():
        assert set(DIMENSIONS[key].step) == set(DIMENSIONS[key].values), key
    # the others change only the code around the step: the same form for every value
    pool = enumerate_variants(("neighbour", "allgather"))
    forms = {}
    for v in pool:
        f = step_form(RADAU, v)
        assert forms.setdefault(tuple(getattr(v, k) for k in step_keys()), f) is f


def test_every_event_names_a_macro_of_the_step_template_and_every_group_a_phase():
    text = (shipped_dir("variants") / "step.j2").read_text()
    macros = set(re.findall(r"macro (\w+)\(", text))
    groups = set()
    for v in enumerate_variants(("neighbour",)):
        for e in step_form(RADAU, v).events():
            assert not e.action or e.action in macros, e.action
            groups.update(sw.group for sw in e.sweeps)
            assert e.kind is not Kind.KERNEL or {sw.group for sw in e.sweeps} == {e.what}
    assert groups == set(Group)
    assert set(PHASE) == set(CORE_CLASS) == set(Group)


def test_a_form_prints_its_events_parts_and_touches():
    text = form(RADAU, "jli").describe()
    assert text.splitlines()[0] == ("step of lc=jli, au=split, pred=copy, buf=pack, rhs=stages, fuse=none, "
                                    "store=none, pipe=none (s = 4)")
    assert "  iteration  x6" in text and "kernel COPY x3     macro copy_first" in text
    assert re.search(r"lc\.acc\.jli +reads Y1,Y2,Y3,Y4,F2,F3,F4  writes Y1,Y2,Y3,Y4", text)
    assert re.search(r"comm\.pack +reads Y3  writes B3", text)


def test_fused_sweeps_alternate_the_argument_sets_with_ghost_buffers():
    ghost = form(RADAU, "jl-onepass", "fused", "direct", "ghost", "onepass", "rhs-lc")
    writes = [sw.writes[0] for sw in ghost.sweeps()]
    assert writes == ["Y1", "Z1", "Y1", "Z1", "Y1", "Z1", "y"]
    assert ghost.sweeps()[2].reads[0] == "Z1"        # the second corrector sweep reads what the first wrote
    packed = form(RADAU, "jl-onepass", "fused", "direct", "pack", "onepass", "rhs-lc")
    assert {sw.writes[0] for sw in packed.sweeps() if sw.group == Group.RHSLC} == {"Y1"}
    assert [p.name for p in packed.method_parts] == ["comm.pack"] and ghost.method_parts == ()


def test_counts_follow_the_method_and_the_form():
    for s in (1, 2, 3):
        method = build("radauIIA", s)
        copy = form(method).counts
        direct = form(method, pred="direct").counts
        assert copy.executions.get("COPY", 0) == s - 1 and "LCD" not in copy.executions
        assert direct.executions["LCD"] == 1 and direct.executions.get("LC", 0) == method.iterations - 1
        assert copy.comm_phases == direct.comm_phases == 1 + method.iterations * s


def test_the_pipelined_form_is_one_exchange_and_one_sweep_whose_levels_hand_on_in_the_window():
    v = parse_variant("lc=jl-onepass,comm=neighbour,au=fused,pred=direct,buf=ghost,rhs=onepass,fuse=rhs-lc,"
                      "block=l1,pipe=wavefront", ("allgather", "neighbour"))
    f = step_form(RADAU, v)
    c = f.counts
    # the predictor, m - 1 = 5 correctors and the last level, as the fused form; one exchange of y with
    # (m + 1) d ghost components; no sweep timers of their own (one parallel region runs them all,
    # its end the step's one barrier: the exchange of y, without a pack, opens none)
    assert c.executions == {"RHSLCD": 1, "RHSLC": 5, "RHSAU": 1} and c.comm_phases == 1 and c.ghost == 7
    assert c.barriers == 1 and f.timers == () and [e.action for e in f.events() if e.action] == [
        "communicate_y", "wavefront"]
    sweeps = f.sweeps()
    # only y (read first) and the new y are the node's vectors; the 6 rings of 4 rows and y's
    # re-reads live in the window; level k reaches m - k access distances beyond a thread's region
    assert [sw.reads for sw in sweeps][:2] == [("y",), ("P1_1", "P1_2", "P1_3", "P1_4", "y")]
    assert sweeps[-1].writes == ("yn",) and "yn" not in sweeps[-1].window and "y" in sweeps[-1].window
    assert {v for sw in sweeps for v in sw.window} == {f"P{k}_{l}" for k in range(1, 7) for l in range(1, 5)} | {"y"}
    assert [sw.extends for sw in sweeps] == [6.0, 5.0, 4.0, 3.0, 2.0, 1.0, 0.0]
    assert f.extends == {"RHSLCD": 6.0, "RHSLC": 3.0}
    assert "(window: P1_1,P1_2,P1_3,P1_4)" in f.describe()


def test_a_barrier_is_the_end_of_a_parallel_region_the_solver_opens():
    """Each kernel sweep is a region of its own (step.j2), and so is an exchange's pack (buf=pack);
    an exchange without one runs on one thread between two regions and ends none."""
    comm = ("allgather", "neighbour")
    ghost = step_form(RADAU, parse_variant("lc=jl-onepass,comm=neighbour,au=fused,pred=direct,buf=ghost", comm)).counts
    pack = step_form(RADAU, parse_variant("lc=jl-onepass,comm=neighbour,au=fused,pred=direct", comm)).counts
    # the predictor's RHS, the LC from F_1, the RHS of the s vectors, 5 x (LC, RHS), APPROX+UPDATE
    assert ghost.barriers == 14 and ghost.exchanges == 7
    assert pack.barriers == 14 + pack.exchanges == 21

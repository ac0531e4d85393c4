"""Step forms and their method parts by value, for tests (specs.stepvalues, codegen.parts)."""
from autotune.codegen.parts import method_parts
from autotune.specs.stepvalues import step_form
from autotune.specs.variants import Variant


def form(method, lc="jli", au="split", pred="copy", buf="pack", rhs="stages", fuse="none", **more):
    return step_form(method, Variant(lc=lc, comm="neighbour", au=au, pred=pred, buf=buf, rhs=rhs, fuse=fuse, **more))


def parts(method, lc="jli", au="split", pred="copy", buf="pack", fuse="none"):
    """The rendered method parts of a form (what codegen.parts.method_parts gave by value)."""
    return method_parts(form(method, lc, au, pred, buf, fuse=fuse))

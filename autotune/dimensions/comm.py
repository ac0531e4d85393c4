"""comm: the communication scheme (those the IVP allows, specs.schemes)."""
from __future__ import annotations

from autotune.specs.dimension import Dimension, Value
from autotune.specs.schemes import SCHEMES


def _render(name: str, _) -> dict:
    scheme = SCHEMES[name]
    return {"comm": name, "scheme_template": scheme.template, "has_post": scheme.halo_only}


DIMENSION = Dimension("comm", 20, tuple(Value(n, s.template) for n, s in SCHEMES.items()), None,
                      "communication scheme (those the IVP allows)", render=_render)

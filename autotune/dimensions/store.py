"""store: how a fused sweep writes its argument vectors, through the caches or streaming."""
from __future__ import annotations

from autotune.specs.dimension import Dimension, PayFacts, values


def _cached(d, _: str) -> None:
    d.streaming = False


def _streaming(d, _: str) -> None:
    d.streaming = True


def _render(value: str, _) -> dict:
    return {"streaming": value == "nt"}


def streaming_pays(next_reads, vector_bytes: float, llc_reach: float) -> bool:
    """Whether some vector written with non-temporal stores would be gone from the last level
    anyway when the step reads it next (distance D in vectors: nothing of it is left where the
    D vectors touched since fill the level's reach, model.reuse); where none would, streaming
    only sends the next read to memory."""
    return any(d * vector_bytes >= llc_reach for d in next_reads)


def _pays(value: str, facts: PayFacts) -> str | None:
    if streaming_pays(facts.next_reads(), facts.vector_bytes, facts.llc_bytes):
        return None
    return (f"the vectors it streams would still be in the last-level cache ({facts.llc_bytes / 2**20:.3g} MiB) "
            f"when the step reads them again (n = {facts.n} on {facts.nodes} node{'s' if facts.nodes > 1 else ''})")


DIMENSION = Dimension(
    "store", 100,
    values(["none"], "solver.c.j2:streaming (false: stores through the caches)")
    + values(["nt"], "solver.c.j2:streaming (true: each row through stream_row)", fuse="rhs-lc"), "none",
    "how a fused sweep writes the argument vectors it computes: through the caches (none: "
    "the hardware reads every line first, write-allocate), or with non-temporal stores "
    "that go to memory without that read (nt: where the step reads them again only after "
    "the last-level cache would have evicted them)",
    step={"none": _cached, "nt": _streaming}, writes=("streaming",), render=_render, pays=_pays)

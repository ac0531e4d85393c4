"""What cannot run in a scenario, and why: a communication scheme that cannot exchange at that
size and node count (specs.scenario), or a dimension's value that does not pay there (its `pays`
hook; pipeline.applicable).  Typed records, never "key=value" strings to split again.  Pure."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Iterator, Mapping

COMM = "comm"     # the key of a communication scheme's exclusion


@dataclass(frozen=True)
class Exclusion:
    """One scheme (key COMM) or one value of a dimension (its key), and why it is left out; where:
    the values of other dimensions it holds for alone (an IVP stored two ways, specs.variants.
    spaces: a scheme one way of storing it cannot run), none where it holds for every variant."""
    key: str
    value: str
    why: str
    where: tuple[tuple[str, str], ...] = ()

    @property
    def item(self) -> str:
        """How names spell it: comm=allgather, store=nt (with where: comm=allgather,blocks=separate)."""
        return ",".join([f"{self.key}={self.value}", *(f"{k}={v}" for k, v in self.where)])

    @property
    def is_scheme(self) -> bool:
        return self.key == COMM

    def excludes(self, variant) -> bool:
        return getattr(variant, self.key) == self.value and all(getattr(variant, k) == v for k, v in self.where)


class Exclusions:
    """Exclusions in the order they were found, one per item; looked up by item ("store=nt")."""
    __slots__ = ("_by_item", "_where")

    def __init__(self, found: Iterable[Exclusion] = ()) -> None:
        self._by_item: dict[str, Exclusion] = {}
        for e in found:
            self._by_item[e.item] = e
        self._where = [e for e in self._by_item.values() if e.where]

    def merged(self, later: Exclusions) -> Exclusions:
        """These and `later`'s, in this order; where both name an item, later's reason stands."""
        return Exclusions({**self._by_item, **later._by_item}.values())

    def collapsed(self, ways: int | Mapping[tuple[str, str], int]) -> Exclusions:
        """These, an item that every way of storing the IVP that offers it excludes for the same
        reason written once, without where; ways: how many offer each (key, value), or one count
        for all."""
        groups: dict[tuple, list[Exclusion]] = {}
        for e in self._where:
            groups.setdefault((e.key, e.value), []).append(e)
        same = {k for k, es in groups.items()
                if len(es) == (ways if isinstance(ways, int) else ways[k]) and len({e.why for e in es}) == 1}
        if not same:
            return self
        out, done = [], set()
        for e in self:
            k = (e.key, e.value)
            if e.where and k in same:
                if k not in done:
                    done.add(k)
                    out.append(Exclusion(e.key, e.value, e.why))
            else:
                out.append(e)
        return Exclusions(out)

    def schemes(self) -> list[Exclusion]:
        return [e for e in self if e.is_scheme]

    def values(self) -> list[Exclusion]:
        return [e for e in self if not e.is_scheme]

    def why(self, variant, order: Iterable[str] = ()) -> str | None:
        """Why `variant` cannot run here (None: nothing excludes it): its scheme's reason, else
        that of the first of its values excluded, dimensions in `order` (keys)."""
        scheme = self._by_item.get(f"{COMM}={variant.comm}")
        if scheme is not None:
            return scheme.why
        held = [e for e in self._where if e.excludes(variant)]     # (few: an IVP stored two ways)
        scheme = next((e for e in held if e.is_scheme), None)
        if scheme is not None:
            return scheme.why
        for key in order:
            e = self._by_item.get(f"{key}={getattr(variant, key)}")
            if e is None:
                e = next((x for x in held if x.key == key), None)
            if e is not None and key != COMM:
                return e.why
        return None

    def __getitem__(self, item: str) -> Exclusion:
        return self._by_item[item]

    def __contains__(self, item: object) -> bool:
        return item in self._by_item

    def __iter__(self) -> Iterator[Exclusion]:
        return iter(self._by_item.values())

    def __len__(self) -> int:
        return len(self._by_item)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Exclusions) and list(self) == list(other)

    def __repr__(self) -> str:
        return f"Exclusions({list(self)!r})"

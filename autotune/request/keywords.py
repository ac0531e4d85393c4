"""Requests built from flat keywords.  The command line's option names are the Python API's
keywords (threads for --threads, min_bytes for --min-bytes): one builder per request, `of`,
turns either into the request object, so the two front ends assemble nothing themselves
(docs/design.md#the-python-api).

    TuneRequest.of("heat2d", nodes=8, top=3, steps=20)      # keywords
    TuneRequest.of(req, nodes=16)                           # req with its nodes replaced
    req.as_keywords()                                       # the keywords that build req again

A keyword given as None is not given: the request's value (or the default) stands.  Nothing else
is read as "not given": 0 is a value (refused where out of range), and an empty text is refused.
"""
from __future__ import annotations

import os
from dataclasses import fields, is_dataclass
from typing import Any, ClassVar

from autotune.errors import InputError


class Keywords:
    """A request that is built from, and reads back as, flat keywords.  A dataclass subclass
    takes its fields as keywords; a request of parts overrides keyword_names, _build and
    as_keywords."""

    PRIMARY: ClassVar[str]                          # what a bare name stands for (ivp, machine)
    EXCLUSIVE: ClassVar[tuple[tuple[str, ...], ...]] = ()   # one of each group replaces the others

    @classmethod
    def keyword_names(cls) -> tuple[str, ...]:
        assert is_dataclass(cls), f"{cls.__name__}: name its keywords"
        return tuple(f.name for f in fields(cls))

    @classmethod
    def _build(cls, given: dict[str, Any]):
        """The request from checked keywords (None values left out)."""
        return cls(**given)

    def as_keywords(self) -> dict[str, Any]:
        """The keywords that build this request again (`type(self).of(**them) == self`)."""
        return {name: getattr(self, name) for name in self.keyword_names()}

    @classmethod
    def of(cls, request=None, /, **changes):
        """The request from keywords, over `request`: None, a name (or a list of names) for
        PRIMARY, a request of this class, or one of its parts (a ScenarioRequest); a keyword
        given replaces that field.  An unknown keyword is a TypeError, as for a function."""
        names = cls.keyword_names()
        unknown = [k for k in changes if k not in names]
        if unknown:
            raise TypeError(f"{cls.__name__}: unexpected keyword {unknown[0]!r} (it takes {', '.join(names)})")
        base = cls._base(request)
        given = {k: v for k, v in changes.items() if v is not None}
        blank = next((k for k, v in given.items() if isinstance(v, str) and not v.strip()), None)
        if blank:
            raise InputError(f": expected a value, got {given[blank]!r}", field=blank)
        for group in cls.EXCLUSIVE:
            if any(given.get(k, False) is not False for k in group):   # a flag left False is not given
                for k in group:
                    base.pop(k, None)
        merged = {k: v for k, v in {**base, **given}.items() if v is not None}
        if cls.PRIMARY not in merged:
            raise InputError(": missing: give one", field=cls.PRIMARY)
        return cls._build(merged)

    @classmethod
    def _base(cls, request) -> dict[str, Any]:
        if request is None:
            return {}
        if isinstance(request, (str, os.PathLike, list, tuple)):
            return {cls.PRIMARY: request}
        if isinstance(request, Keywords):
            own = request.as_keywords()
            if set(own) <= set(cls.keyword_names()):    # this class or a part of it: nothing is lost
                return dict(own)
        raise TypeError(f"{cls.__name__}: expected a {cls.PRIMARY} name or a {cls.__name__}, "
                        f"got {type(request).__name__}")


def pick(given: dict[str, Any], names) -> dict[str, Any]:
    """The keywords of `given` that a part takes."""
    return {k: given[k] for k in names if k in given}

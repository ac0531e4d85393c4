"""Memoising on the identity of an object (pure).

Specs (IVP, Method) are frozen dataclasses of nested tuples: hashing one for an
lru_cache costs more than the lookup saves when a sweep asks thousands of times.
Loaded specs live for the whole run, so their identity is a sound key; the
cache keeps a reference to each, so an id is never reused while cached.
"""
from __future__ import annotations

from functools import wraps


def by_identity(fn):
    """Cache fn(obj, *rest) on (id(obj), *rest); rest must be hashable."""
    cache: dict = {}

    @wraps(fn)
    def wrapper(obj, *rest):
        key = (id(obj), *rest)
        hit = cache.get(key)
        if hit is not None and hit[0] is obj:
            return hit[1]
        value = fn(obj, *rest)
        cache[key] = (obj, value)
        return value

    wrapper.cache_clear = cache.clear
    return wrapper

"""Derived objects kept in the store between runs (a pool's pricing layout): read back as they
were built, never built twice, never stale, and never code of anyone else's."""
import pickle

import pytest

from autotune.pipeline import layout as laymod
from autotune.pipeline.layout import Session
from autotune.specs.ivp import load_ivp
from autotune.specs.method import load_method
from autotune.specs.variants import enumerate_variants
from autotune.storage import pickled
from autotune.storage.store import Store

IVP, METHOD = load_ivp("wave1d"), load_method("radauIIA5")
POOL = enumerate_variants(IVP.comm)[:40]


def test_a_layout_is_built_once_and_read_back_equal(tmp_path, monkeypatch):
    store = Store(tmp_path / "s.sqlite")
    built = Session(store).layout(IVP, METHOD, POOL)
    assert built == laymod.build_layout(IVP, METHOD, POOL, Session())
    monkeypatch.setattr(laymod, "build_layout", lambda *a: pytest.fail("built again"))
    assert Session(store).layout(IVP, METHOD, POOL) == built        # another run: from the store
    store.close()


def test_another_pool_or_other_code_is_another_layout(tmp_path, monkeypatch):
    store = Store(tmp_path / "s.sqlite")
    first = Session(store).layout(IVP, METHOD, POOL)
    assert Session(store).layout(IVP, METHOD, POOL[:20]).variants == tuple(POOL[:20])
    calls = []
    real = laymod.build_layout
    monkeypatch.setattr(laymod, "build_layout", lambda *a: calls.append(1) or real(*a))
    monkeypatch.setattr(pickled, "code_digest", lambda: "a changed module")
    assert Session(store).layout(IVP, METHOD, POOL) == first and calls == [1]
    store.close()


def test_an_unreadable_or_foreign_blob_is_derived_again(tmp_path):
    store = Store(tmp_path / "s.sqlite")
    Session(store).layout(IVP, METHOD, POOL)
    (kind, key), = store._read("SELECT kind, key FROM derived")
    store.put_derived(kind, key, b"not a pickle")
    assert Session(store).layout(IVP, METHOD, POOL).variants == tuple(POOL)
    store.close()
    # what another user could put there: a pickle that calls os.system when loaded
    evil = pickle.dumps(type("X", (), {"__reduce__": lambda self: (__import__("os").system, ("true",))})())
    import zlib
    assert pickled.loads(zlib.compress(evil)) is None
    assert pickled.loads(pickled.dumps((1, "a", frozenset({2.0})))) == (1, "a", frozenset({2.0}))


def test_the_code_digest_moves_with_a_module(tmp_path):
    import os
    (tmp_path / "pkg").mkdir()
    module = tmp_path / "pkg" / "mod.py"
    module.write_text("x = 1\n")
    (tmp_path / "notes.txt").write_text("not code")
    before = pickled.files_digest([tmp_path])
    (tmp_path / "notes.txt").write_text("still not code, longer")
    assert pickled.files_digest([tmp_path]) == before
    module.write_text("x = 2\n")
    os.utime(module, ns=(1, 1))
    assert pickled.files_digest([tmp_path]) != before
    assert len(pickled.code_digest()) == 32

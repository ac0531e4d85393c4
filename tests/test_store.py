import multiprocessing as mp

import pytest

from autotune.storage.store import Store, ecm_key


def _writer(path, start, count):
    st = Store(path)
    for i in range(start, start + count):
        st.put_ecm(f"k{i}", f"part{i}", "MEM", "m", {"ok": True, "i": i}, {"i": i})
    st.close()


def test_concurrent_writers_lose_nothing(tmp_path):
    path = tmp_path / "s.sqlite"
    Store(path).close()
    ctx = mp.get_context("fork")
    procs = [ctx.Process(target=_writer, args=(path, k * 100, 60)) for k in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    st = Store(path)
    assert st.count_ecm() == 180
    got = st.get_ecm([f"k{i}" for i in range(100, 160)])
    assert len(got) == 60 and got["k101"]["i"] == 101


def test_failed_transaction_leaves_nothing(tmp_path):
    st = Store(tmp_path / "s.sqlite")
    with pytest.raises(RuntimeError):
        with st.transaction() as db:
            db.execute("INSERT INTO ecm VALUES ('a', 'p', 'r', 'm', 1, '{}', '{}', 0)")
            raise RuntimeError("boom")
    assert st.count_ecm() == 0


def test_key_depends_on_every_input():
    base = {"code": "x", "machine": "m", "regime": "MEM", "kerncraft": "0.8.18"}
    keys = {ecm_key(base)} | {ecm_key(dict(base, **{k: "other"})) for k in base}
    assert len(keys) == 1 + len(base)
    assert ecm_key(dict(reversed(list(base.items())))) == ecm_key(base)


def test_unusable_store_path_is_input_error(tmp_path):
    from autotune.errors import InputError
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(InputError, match="cannot open"):
        Store(blocker / "sub" / "s.sqlite")


def test_default_store_location(monkeypatch, tmp_path):
    from autotune.storage.paths import default_store_path
    monkeypatch.delenv("AUTOTUNE_STORE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert default_store_path() == tmp_path / "cache" / "autotune" / "store.sqlite"
    monkeypatch.setenv("AUTOTUNE_STORE", str(tmp_path / "x.sqlite"))
    assert default_store_path() == tmp_path / "x.sqlite"

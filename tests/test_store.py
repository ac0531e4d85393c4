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
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))      # measured runs: data, not a cache
    assert default_store_path() == tmp_path / "data" / "autotune" / "store.sqlite"
    monkeypatch.setenv("AUTOTUNE_STORE", str(tmp_path / "x.sqlite"))
    assert default_store_path() == tmp_path / "x.sqlite"


# --- journal mode by file system --------------------------------------------------------------

import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from autotune.errors import InputError
from autotune.storage.filesystems import (Mount, classify, describe_mounts, filesystem_of, mount_for,
                                          parse_mountinfo, parse_proc_mounts)
from autotune.storage.store import StoreLockedError, StoreMode, choose_mode, mode_for_mount

MOUNTINFO = r"""22 1 0:21 / / rw,relatime - overlay overlay rw,lowerdir=/l,upperdir=/u,workdir=/w
23 22 0:22 / /proc rw,nosuid,nodev,noexec,relatime shared:5 - proc proc rw
24 22 0:23 / /tmp rw,nosuid,nodev shared:6 - tmpfs tmpfs rw,size=8g
25 22 0:50 / /home rw,relatime shared:40 - nfs4 fs1:/export/home rw,vers=4.2,hard,proto=tcp,local_lock=none
26 22 0:51 / /scratch rw,relatime shared:41 master:3 - lustre 10.0.0.1@o2ib:/scratch rw,flock,lazystatfs
27 22 0:52 / /proj rw - nfs srv:/proj rw,vers=3,local_lock=all
28 27 8:1 / /proj/local-ssd rw,relatime - ext4 /dev/sda1 rw
29 22 0:53 / /mnt/my\040data rw - xfs /dev/sdb1 rw
30 22 0:54 / /lustre rw - ext4 /dev/sdc1 rw
31 22 0:55 / /lustre rw - lustre mds:/lustre rw,localflock
32 22 0:56 / /net rw - fuse.sshfs me@host:/ rw,user_id=0
33 22 0:57 / /odd rw - fuse.mystery x rw
"""


def test_mountinfo_is_parsed_with_escapes_and_options():
    mounts = parse_mountinfo(MOUNTINFO + "garbage line\n")
    assert [m.point for m in mounts][:4] == ["/", "/proc", "/tmp", "/home"]
    assert len(mounts) == 12
    assert mounts[3] == Mount("/home", "nfs4", "fs1:/export/home", mounts[3].options)
    assert "vers=4.2" in mounts[3].options and "relatime" in mounts[3].options
    assert mounts[7].point == "/mnt/my data" and mounts[7].fstype == "xfs"
    assert parse_proc_mounts("fs1:/home /home nfs4 rw,vers=4.2 0 0\n/dev/sda1 /mnt/a\\040b ext4 rw 0 0\n") == [
        Mount("/home", "nfs4", "fs1:/home", frozenset({"rw", "vers=4.2"})),
        Mount("/mnt/a b", "ext4", "/dev/sda1", frozenset({"rw"}))]


@pytest.mark.parametrize("path, point, fstype, mode", [
    ("/home/alice/.cache/autotune/store.sqlite", "/home", "nfs4", "journal"),
    ("/homework/store.sqlite", "/", "overlay", "wal"),            # a prefix of the name is not the mount
    ("/home", "/home", "nfs4", "journal"),
    ("/scratch/run/store.sqlite", "/scratch", "lustre", "journal"),
    ("/tmp/store.sqlite", "/tmp", "tmpfs", "wal"),
    ("/proj/a/store.sqlite", "/proj", "nfs", "journal"),
    ("/proj/local-ssd/store.sqlite", "/proj/local-ssd", "ext4", "wal"),  # nested: the longest prefix wins
    ("/mnt/my data/s.sqlite", "/mnt/my data", "xfs", "wal"),
    ("/lustre/s.sqlite", "/lustre", "lustre", "journal"),              # stacked on one point: the last is visible
    ("/net/s.sqlite", "/net", "fuse.sshfs", "journal"),
    ("/odd/s.sqlite", "/odd", "fuse.mystery", "journal"),          # unknown: not trusted with WAL
])
def test_mount_lookup_and_mode(path, point, fstype, mode):
    mount = mount_for(path, parse_mountinfo(MOUNTINFO))
    assert (mount.point, mount.fstype) == (point, fstype)
    assert mode_for_mount(mount).mode == mode


def test_mode_reasons_name_the_file_system_and_weak_locks():
    mounts = parse_mountinfo(MOUNTINFO)
    assert mode_for_mount(mount_for("/home/a", mounts)) == StoreMode("journal", "nfs4 at /home")
    assert mode_for_mount(mount_for("/tmp/a", mounts)) == StoreMode("wal", "tmpfs at /tmp")
    assert "locks are per host" in mode_for_mount(mount_for("/proj/a", mounts)).reason
    assert "locks are per node" in mode_for_mount(mount_for("/lustre/a", mounts)).reason
    assert "not known to be a local" in mode_for_mount(mount_for("/odd/a", mounts)).reason
    assert mode_for_mount(None).mode == "journal"
    assert [classify(t) for t in ("nfs4", "gpfs", "beegfs", "cifs", "smb3", "9p", "ceph", "panfs", "afs",
                                  "ext4", "btrfs", "zfs", "overlay", "fuse")] == ["network"] * 9 + ["local"] * 4 + [
        "unknown"]


def test_detection_on_this_machine_uses_the_nearest_existing_folder(tmp_path):
    missing = tmp_path / "not" / "yet" / "store.sqlite"
    assert filesystem_of(missing) == filesystem_of(tmp_path)
    assert choose_mode(missing, mounts=[Mount("/", "nfs4")]) == StoreMode("journal", "nfs4 at /")


# statfs's f_type (linux/magic.h) -> the names the mount table gives that file system, and its kind
STATFS_MAGIC = {
    0xEF53: ({"ext2", "ext3", "ext4"}, "local"), 0x01021994: ({"tmpfs", "devtmpfs"}, "local"),
    0x858458F6: ({"ramfs", "devtmpfs"}, "local"), 0x794C7630: ({"overlay"}, "local"),
    0x58465342: ({"xfs"}, "local"), 0x9123683E: ({"btrfs"}, "local"), 0x2FC12FC1: ({"zfs"}, "local"),
    0x9FA0: ({"proc"}, "local"), 0x62656572: ({"sysfs"}, "local"), 0x1CD1: ({"devpts"}, "local"),
    0x27E0EB: ({"cgroup"}, "local"), 0x63677270: ({"cgroup2"}, "local"), 0x19800202: ({"mqueue"}, "local"),
    0x6969: ({"nfs", "nfs4"}, "network"), 0x01021997: ({"9p"}, "network"), 0x0BD00BD0: ({"lustre"}, "network"),
    0x47504653: ({"gpfs"}, "network"), 0xFF534D42: ({"cifs"}, "network"), 0xFE534D42: ({"smb3", "cifs"}, "network"),
}


def _statfs_magic(path) -> int | None:
    """The kernel's own answer to which file system holds `path` (coreutils' stat -f), independent
    of the mount table; None where it cannot be asked."""
    try:
        out = subprocess.run(["stat", "-f", "-c", "%t", str(path)], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return int(out.stdout, 16) if out.returncode == 0 and out.stdout.strip() else None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the mount table is Linux's")
def test_the_mount_table_of_this_machine_agrees_with_the_kernel(tmp_path):
    """Each mount point of this machine, /, the test's folder and the checkout: the mount found
    for it has the file system the kernel's statfs names, and the kind that file system has;
    the table read is /proc/mounts' (read here apart from the code's parser)."""
    rows = describe_mounts()
    with open("/proc/mounts", encoding="utf-8", errors="surrogateescape") as f:
        plain = [tuple(re.sub(r"\\([0-7]{3})", lambda m: chr(int(m[1], 8)), v) for v in line.split()[1:3])
                 for line in f if line.strip()]
    assert rows, "no mount table was read"
    assert [(point, fstype) for point, fstype, _ in rows] == plain
    assert ("/proc", "proc", "local") in rows
    checked = []
    points = [point for point, fstype, _ in rows if fstype != "autofs"]    # asking an automount point mounts it
    for path in dict.fromkeys(points + ["/", str(tmp_path), str(Path(__file__).parent)]):
        magic = _statfs_magic(path)
        if magic not in STATFS_MAGIC:
            continue
        names, kind = STATFS_MAGIC[magic]
        mount = filesystem_of(path)
        assert mount.fstype in names and mount.kind == kind, (path, hex(magic), mount)
        checked.append(path)
    assert "/proc" in checked and len(checked) >= 3, checked


def test_mode_override_by_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("AUTOTUNE_STORE_MODE", "journal")
    assert choose_mode(tmp_path, mounts=[Mount("/", "ext4")]) == ("journal", "AUTOTUNE_STORE_MODE=journal")
    monkeypatch.setenv("AUTOTUNE_STORE_MODE", "WAL")
    assert choose_mode(tmp_path, mounts=[Mount("/", "nfs")]).mode == "wal"
    assert choose_mode(tmp_path, "journal") == ("journal", "requested journal")
    monkeypatch.setenv("AUTOTUNE_STORE_MODE", "auto")
    assert choose_mode(tmp_path, mounts=[Mount("/", "nfs")]) == ("journal", "nfs at /")
    monkeypatch.setenv("AUTOTUNE_STORE_MODE", "fast")
    with pytest.raises(InputError, match="AUTOTUNE_STORE_MODE: expected wal, journal or auto, got 'fast'"):
        Store(tmp_path / "s.sqlite")


def _journal_mode(path):
    db = sqlite3.connect(path)
    try:
        return db.execute("PRAGMA journal_mode").fetchone()[0]
    finally:
        db.close()


def test_store_in_wal_is_switched_to_journal_mode(tmp_path):
    path = tmp_path / "s.sqlite"
    st = Store(path, "wal")
    assert st.mode == ("wal", "requested wal")
    st.put_run("k", "m", "heat2d", "v", 1.5, {"a": 1})
    st.close()
    assert _journal_mode(path) == "wal"
    st = Store(path, "journal")
    assert _journal_mode(path) == "delete" and st.mode.mode == "journal"
    assert st.get_runs("k") == [{"a": 1}]
    st.put_run("k", "m", "heat2d", "v", 2.5, {"a": 2})
    st.close()
    assert Store(path, "journal").get_runs("k") == [{"a": 1}, {"a": 2}]


def test_switch_refused_while_the_store_is_in_use_says_why(tmp_path):
    path = tmp_path / "s.sqlite"
    other = Store(path, "wal")
    with pytest.raises(StoreLockedError) as err:
        Store(path, "journal", retry_s=0.2)
    assert "is in WAL mode and could not be switched" in str(err.value) and "\n" not in str(err.value)
    other.close()
    assert Store(path, "journal").mode.mode == "journal"


def test_writes_retry_past_the_busy_timeout(tmp_path):
    path = tmp_path / "s.sqlite"
    st = Store(path, "journal", busy_timeout_s=0.01, retry_s=10)
    blocker = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    blocker.execute("BEGIN EXCLUSIVE")
    threading.Timer(0.4, lambda: blocker.execute("COMMIT")).start()
    t0 = time.monotonic()
    st.put_run("k", "m", "heat2d", "v", 1.0, {"i": 1})   # SQLite alone gives up after 10 ms
    assert time.monotonic() - t0 >= 0.3
    assert st.get_runs("k") == [{"i": 1}]
    blocker.close()


def test_a_store_that_stays_locked_gives_one_clear_line_and_writes_nothing(tmp_path):
    path = tmp_path / "s.sqlite"
    st = Store(path, "journal", busy_timeout_s=0.01, retry_s=0.3)
    blocker = sqlite3.connect(path, isolation_level=None)
    blocker.execute("BEGIN EXCLUSIVE")
    with pytest.raises(StoreLockedError, match=r"beginning a write failed, still locked after \d+ attempts") as err:
        st.put_run("k", "m", "heat2d", "v", 1.0, {"i": 1})
    assert "journal mode, requested journal" in str(err.value) and "AUTOTUNE_STORE" in str(err.value)
    blocker.execute("COMMIT")
    blocker.close()
    assert st.get_runs("k") == []
    st.put_run("k", "m", "heat2d", "v", 1.0, {"i": 2})
    assert st.get_runs("k") == [{"i": 2}]


WRITER = r"""
import sys, time, pathlib
from autotune.storage.store import Store
path, w, runs, series, busy_s = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
st = Store(path, busy_timeout_s=busy_s)
folder = pathlib.Path(path).parent
(folder / f"ready{w}").write_text(st.mode.mode)
while not (folder / "go").exists():
    time.sleep(0.002)
for i in range(runs):
    time.sleep(0.001)  # a little work between writes, as a tuner has, so that the writers interleave
    st.put_run(f"w{w}", "m", "heat2d", f"v{i % 3}", w + i / 1000, {"w": w, "i": i, "pad": "x" * (i % 50)})
    if i % (runs // series) == 0:
        j = i // (runs // series)
        st.put_measurements(f"w{w}-s{j}", "m", "allreduce", [{"w": w, "j": j, "r": r, "old": True} for r in range(3)])
        st.put_measurements(f"w{w}-s{j}", "m", "allreduce", [{"w": w, "j": j, "r": r} for r in range(5)])
st.close()
"""


@pytest.fixture()
def memory_dir(tmp_path):
    """A folder in memory where there is one (/dev/shm): the writers test locking, not the disk's fsync."""
    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK)):
        yield tmp_path
        return
    with tempfile.TemporaryDirectory(dir=shm, prefix="autotune-test-") as folder:
        yield Path(folder)


# busy timeout 1 ms: as on a network file system that answers SQLITE_BUSY at once, the retries do the waiting
@pytest.mark.parametrize("mode, busy_s", [("journal", 30.0), ("wal", 30.0), ("journal", 0.001)])
def test_eight_concurrent_writer_processes_lose_nothing(memory_dir, mode, busy_s):
    tmp_path = memory_dir
    writers, runs, series = 8, 200, 8
    path = tmp_path / "s.sqlite"
    env = dict(os.environ, AUTOTUNE_STORE_MODE=mode)
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(w), str(runs), str(series), str(busy_s)],
                              env=env)
             for w in range(writers)]
    deadline = time.monotonic() + 30
    while not all((tmp_path / f"ready{w}").exists() for w in range(writers)):
        assert time.monotonic() < deadline and all(p.poll() is None for p in procs)
        time.sleep(0.01)
    (tmp_path / "go").touch()
    assert [p.wait(60) for p in procs] == [0] * writers
    assert {(tmp_path / f"ready{w}").read_text() for w in range(writers)} == {mode}
    assert _journal_mode(path) == {"journal": "delete", "wal": "wal"}[mode]

    st = Store(path)
    for w in range(writers):
        assert st.get_runs(f"w{w}") == [{"w": w, "i": i, "pad": "x" * (i % 50)} for i in range(runs)]
        for j in range(series):
            assert st.get_measurements(f"w{w}-s{j}") == [{"w": w, "j": j, "r": r} for r in range(5)]
    rows = st._read("SELECT key, variant, measured_s FROM runs ORDER BY rowid")
    assert sum(a[0] != b[0] for a, b in zip(rows, rows[1:])) > 4 * writers  # the writes did interleave
    assert sorted(rows) == sorted((f"w{w}", f"v{i % 3}", w + i / 1000) for w in range(writers) for i in range(runs))
    assert st._read("SELECT COUNT(*) FROM measurements") == [(writers * series * 5,)]
    assert st._read("PRAGMA integrity_check") == [("ok",)]
    st.close()


def test_nfs_server_pseudo_fs_is_local_and_nfs_clients_are_network():
    from autotune.storage.filesystems import classify
    assert classify("nfsd") == "local" and classify("nfs4") == "network" and classify("nfs") == "network"


def test_a_machine_file_edited_in_place_keeps_every_number_it_did_not_touch():
    """ruamel alone writes 7.00683833402276e-11 back as ...275e-11: an edit of one section
    (calibrate --from-runs) would change the predictions that use another."""
    from autotune.specs.loading import parse_yaml
    from autotune.storage.yamlfile import dump_text, round_trip_yaml
    text = ("# comment kept\ncluster:\n  network:\n    per_byte_s: 7.00683833402276e-11\n    b: 7.730978613986903e-11\n"
            "    c: 5e-07\n    d: 2.0\n    e: .inf\n  barrier: {x: 1.2345678901234567}\n")
    yaml = round_trip_yaml()
    data = yaml.load(text)
    data["cluster"]["learned"] = {"factors": {"clock": 0.871234}}
    out = dump_text(yaml, data)
    assert out.startswith("# comment kept\n")
    before, after = parse_yaml(text, "a"), parse_yaml(out, "b")
    assert after["cluster"]["network"] == before["cluster"]["network"]
    assert after["cluster"]["barrier"] == before["cluster"]["barrier"]
    assert after["cluster"]["learned"] == {"factors": {"clock": 0.871234}}

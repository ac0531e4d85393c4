"""The SQLite store: ECM results, measurements, fits and runs.

Every write is one `BEGIN IMMEDIATE` transaction, so concurrent `autotune` processes never see
or leave a half-written store.  An ECM result is keyed by a hash of everything it depends on
(see ecm_key), so it replays exactly and is never stale.

Journal mode follows the file system (see filesystems.py): WAL on a local disk, where readers
never wait for writers; the rollback journal (DELETE) on network and cluster file systems (NFS,
Lustre, GPFS, ...), where WAL's shared-memory index would be corrupted by processes on different
hosts.  AUTOTUNE_STORE_MODE=wal|journal|auto overrides the choice; `Store.mode` tells which mode
and why.  Network file systems may answer a lock request with SQLITE_BUSY at once instead of
waiting, so beginning, committing and reading retry with backoff beyond the busy timeout, for a
bounded time, and then raise StoreLockedError with one line saying what to do.
"""
from __future__ import annotations

import hashlib
import json
import os
import random
import sqlite3
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, NamedTuple, TypeVar

from autotune.errors import InputError, ToolError
from autotune.storage.filesystems import Mount, filesystem_of

MODE_ENV = "AUTOTUNE_STORE_MODE"
_PRAGMA = {"wal": "wal", "journal": "delete"}
T = TypeVar("T")

SCHEMA_VERSION = 1
_TABLES = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS ecm (
    key TEXT PRIMARY KEY,
    part TEXT NOT NULL,
    regime TEXT NOT NULL,
    machine TEXT NOT NULL,
    ok INTEGER NOT NULL,
    result TEXT NOT NULL,
    inputs TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS measurements (
    series TEXT NOT NULL,
    machine TEXT NOT NULL,
    operation TEXT NOT NULL,
    record TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS measurements_series ON measurements (series);
CREATE TABLE IF NOT EXISTS runs (
    key TEXT NOT NULL,
    machine TEXT NOT NULL,
    ivp TEXT NOT NULL,
    variant TEXT NOT NULL,
    measured_s REAL,
    result TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_key ON runs (key);
CREATE TABLE IF NOT EXISTS comm_fits (
    machine TEXT NOT NULL,
    created REAL NOT NULL,
    result TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS derived (
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    value BLOB NOT NULL,
    created REAL NOT NULL,
    PRIMARY KEY (kind, key)
);
"""


def ecm_key(inputs: dict) -> str:
    """Hash of the analysis inputs: kernel code, machine file, compiler, versions, regime, constants."""
    return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()


class StoreMode(NamedTuple):
    """The store's journal mode ('wal' or 'journal') and why, e.g. ('journal', 'nfs4 at /home')."""
    mode: str
    reason: str


class StoreLockedError(ToolError):
    """The store stayed locked past the retries (another process, or locks that do not work)."""


def mode_for_mount(mount: Mount | None) -> StoreMode:
    """WAL only where the file system is known to be one host's own; the rollback journal elsewhere."""
    if mount is None:
        return StoreMode("journal", "file system unknown (no mount table)")
    kind, where = mount.kind, mount.describe()
    if kind == "local":
        return StoreMode("wal", where)
    if kind == "unknown":
        return StoreMode("journal", f"{where}, not known to be a local file system")
    warning = mount.lock_warning()
    return StoreMode("journal", f"{where}; {warning}" if warning else where)


def choose_mode(path: Path | str, requested: str | None = None, mounts: list[Mount] | None = None) -> StoreMode:
    """`requested`, else $AUTOTUNE_STORE_MODE, else (auto) the mode the file system of `path` calls for."""
    source = "requested" if requested else MODE_ENV
    value = (requested or os.environ.get(MODE_ENV) or "auto").strip().lower()
    if value in _PRAGMA:
        return StoreMode(value, f"{source} {value}" if requested else f"{MODE_ENV}={value}")
    if value != "auto":
        raise InputError(f"{source}: expected wal, journal or auto, got {value!r}")
    return mode_for_mount(filesystem_of(path, mounts))


def _is_busy(e: sqlite3.Error) -> bool:
    code = getattr(e, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
    return "locked" in str(e) or "busy" in str(e)


class Store:
    """The store at `path`.  `mode` ('wal', 'journal', 'auto') overrides $AUTOTUNE_STORE_MODE; SQLite waits
    `busy_timeout_s` for a lock, and the store retries for `retry_s` more before StoreLockedError."""

    def __init__(self, path: Path | str, mode: str | None = None, *, busy_timeout_s: float = 30.0,
                 retry_s: float = 60.0):
        self.path = Path(path)
        self.busy_timeout_s, self.retry_s = busy_timeout_s, retry_s
        self._leaving_wal = False
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.mode = choose_mode(self.path, mode)
            self._db = self._retrying(self._connect, "opening")
        except (OSError, sqlite3.Error) as e:
            raise InputError(f"store {self.path}: cannot open ({e})") from None
        try:
            with self.transaction() as db:
                for statement in _TABLES.split(";"):
                    if statement.strip():
                        db.execute(statement)
                db.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
        except BaseException as e:
            self._db.close()
            if not isinstance(e, sqlite3.Error):
                raise
            raise InputError(f"store {self.path}: cannot open ({e})") from None

    def _connect(self) -> sqlite3.Connection:
        """A connection in the chosen journal mode.  Leaving WAL needs the only connection to the file, so a
        failed switch closes this one before the retry lets another process's switch go through."""
        self._leaving_wal = False
        db = sqlite3.connect(str(self.path), timeout=self.busy_timeout_s, isolation_level=None)
        try:
            db.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_s * 1000)}")
            want = _PRAGMA[self.mode.mode]
            current = db.execute("PRAGMA journal_mode").fetchone()[0].lower()
            if current == want:
                return db
            self._leaving_wal = current == "wal"  # names the cause, should the retries run out
            got = db.execute(f"PRAGMA journal_mode = {want}").fetchone()[0].lower()
            self._leaving_wal = False
            if got == "wal" and want != "wal":
                raise InputError(f"store {self.path}: SQLite keeps it in WAL mode, which is unsafe here "
                                 f"({self.mode.reason}); copy it to a new file or set {MODE_ENV}=wal")
            if got != want:  # SQLite cannot do WAL here (no shared memory): the rollback journal it kept is safe
                self.mode = StoreMode("journal", f"{self.mode.reason}; SQLite kept journal mode {got}")
            return db
        except BaseException:
            db.close()
            raise

    def _retrying(self, work: Callable[[], T], what: str) -> T:
        """work(), again after 'database is locked' with growing, jittered pauses until retry_s has passed."""
        t0 = time.monotonic()
        pause, attempts = 0.005, 0
        while True:
            attempts += 1
            try:
                return work()
            except sqlite3.OperationalError as e:
                waited = time.monotonic() - t0
                if not _is_busy(e):
                    raise
                if waited >= self.retry_s:
                    raise StoreLockedError(self._locked_message(what, attempts, waited)) from None
            time.sleep(min(pause * random.uniform(0.5, 1.5), max(self.retry_s - waited, 0.0)))
            pause = min(pause * 2, 1.0)

    def _locked_message(self, what: str, attempts: int, waited: float) -> str:
        if self._leaving_wal:
            return (f"store {self.path}: is in WAL mode and could not be switched to journal mode "
                    f"({self.mode.reason}) because another process has it open; end the other autotune processes "
                    f"using it and run again (or set {MODE_ENV}=wal if they all run on this host)")
        return (f"store {self.path}: {what} failed, still locked after {attempts} attempts in {waited:.0f} s "
                f"({self.mode.mode} mode, {self.mode.reason}); another process holds it, or the file system's "
                f"locks do not work: set AUTOTUNE_STORE to a file on a local disk")

    @contextmanager
    def transaction(self):
        """One write transaction (BEGIN IMMEDIATE ... COMMIT); rolled back if the block raises.  Beginning and
        committing are retried; the block itself runs once."""
        db = self._db
        self._retrying(lambda: db.execute("BEGIN IMMEDIATE"), "beginning a write")
        try:
            yield db
            self._retrying(lambda: db.execute("COMMIT"), "committing a write")
        except BaseException:
            if db.in_transaction:
                try:
                    db.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
            raise

    def _read(self, sql: str, params=()) -> list[tuple]:
        return self._retrying(lambda: self._db.execute(sql, params).fetchall(), "reading")

    def get_ecm(self, keys: list[str]) -> dict[str, dict]:
        out: dict[str, dict] = {}
        keys = list(dict.fromkeys(keys))
        for i in range(0, len(keys), 500):
            chunk = keys[i:i + 500]
            rows = self._read(f"SELECT key, result FROM ecm WHERE key IN ({','.join('?' * len(chunk))})", chunk)
            out.update((k, json.loads(r)) for k, r in rows)
        return out

    def put_ecm(self, key: str, part: str, regime: str, machine: str, result: dict, inputs: dict) -> None:
        with self.transaction() as db:
            db.execute("INSERT OR REPLACE INTO ecm VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                       (key, part, regime, machine, int(bool(result.get("ok"))), json.dumps(result),
                        json.dumps(inputs, sort_keys=True), time.time()))

    def put_measurements(self, series: str, machine: str, operation: str, records: list[dict]) -> None:
        """All records of one benchmark run (one operation and process count), atomically."""
        with self.transaction() as db:
            db.execute("DELETE FROM measurements WHERE series = ?", (series,))
            db.executemany("INSERT INTO measurements VALUES (?, ?, ?, ?, ?)",
                           [(series, machine, operation, json.dumps(r), time.time()) for r in records])

    def get_measurements(self, series: str) -> list[dict]:
        rows = self._read("SELECT record FROM measurements WHERE series = ? ORDER BY rowid", (series,))
        return [json.loads(r) for (r,) in rows]

    def put_comm_fit(self, machine: str, result: dict) -> None:
        with self.transaction() as db:
            db.execute("INSERT INTO comm_fits VALUES (?, ?, ?)", (machine, time.time(), json.dumps(result)))

    def put_run(self, key: str, machine: str, ivp: str, variant: str, measured_s: float | None,
                result: dict) -> None:
        with self.transaction() as db:
            db.execute("INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?)",
                       (key, machine, ivp, variant, measured_s, json.dumps(result), time.time()))

    def get_runs(self, key: str) -> list[dict]:
        rows = self._read("SELECT result FROM runs WHERE key = ? ORDER BY rowid", (key,))
        return [json.loads(r) for (r,) in rows]

    def measured_runs(self, machine: str) -> list[tuple[str, str, str, dict]]:
        """(key, ivp, variant, result) of every finished measurement on a machine, oldest first."""
        rows = self._read("SELECT key, ivp, variant, result FROM runs WHERE machine = ? AND measured_s IS NOT NULL "
                          "ORDER BY rowid", (machine,))
        return [(k, ivp, v, json.loads(r)) for k, ivp, v, r in rows]

    def get_derived(self, kind: str, key: str) -> bytes | None:
        """An object derived from other inputs and kept to save deriving it again (storage.pickled)."""
        rows = self._read("SELECT value FROM derived WHERE kind = ? AND key = ?", (kind, key))
        return rows[0][0] if rows else None

    def put_derived(self, kind: str, key: str, value: bytes) -> None:
        with self.transaction() as db:
            db.execute("INSERT OR REPLACE INTO derived VALUES (?, ?, ?, ?)", (kind, key, value, time.time()))

    def count_ecm(self) -> int:
        return self._read("SELECT COUNT(*) FROM ecm")[0][0]

    def close(self) -> None:
        self._db.close()

"""The SQLite store: ECM results (and later measurements, fits and runs).

Every write is one transaction; WAL mode and a busy timeout make concurrent
`autotune` processes safe.  An ECM result is keyed by a hash of everything it
depends on (see ecm_key), so it replays exactly and is never stale.
"""
from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from pathlib import Path

from autotune.errors import InputError

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
"""


def ecm_key(inputs: dict) -> str:
    """Hash of the analysis inputs: kernel code, machine file, compiler, versions, regime, constants."""
    return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()


class Store:
    def __init__(self, path: Path | str):
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(self.path), timeout=60.0, isolation_level=None)
            self._db.execute("PRAGMA busy_timeout = 60000")
            self._db.execute("PRAGMA journal_mode = WAL")
            with self.transaction():
                for statement in _TABLES.split(";"):
                    if statement.strip():
                        self._db.execute(statement)
                self._db.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
        except (OSError, sqlite3.Error) as e:
            raise InputError(f"store {self.path}: cannot open ({e})") from None

    def transaction(self):
        db = self._db

        class _Tx:
            def __enter__(self_inner):
                db.execute("BEGIN IMMEDIATE")
                return db

            def __exit__(self_inner, exc_type, exc, tb):
                db.execute("ROLLBACK" if exc_type else "COMMIT")
                return False

        return _Tx()

    def get_ecm(self, keys: list[str]) -> dict[str, dict]:
        out: dict[str, dict] = {}
        keys = list(dict.fromkeys(keys))
        for i in range(0, len(keys), 500):
            chunk = keys[i:i + 500]
            rows = self._db.execute(
                f"SELECT key, result FROM ecm WHERE key IN ({','.join('?' * len(chunk))})", chunk)
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
        rows = self._db.execute("SELECT record FROM measurements WHERE series = ? ORDER BY rowid", (series,))
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
        rows = self._db.execute("SELECT result FROM runs WHERE key = ? ORDER BY rowid", (key,))
        return [json.loads(r) for (r,) in rows]

    def count_ecm(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM ecm").fetchone()[0]

    def close(self) -> None:
        self._db.close()

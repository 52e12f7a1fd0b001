"""The SQLite ledger: one file, WAL mode, ``synchronous=FULL``, append-only by trigger.

WAL lets status and audit readers in other processes read while the coordinator writes;
``synchronous=FULL`` syncs the WAL at every commit, so a committed batch survives a power cut
(https://www.sqlite.org/pragma.html#pragma_synchronous). The triggers in ``sqlite.sql`` make
the database itself refuse UPDATE and DELETE on ``records``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

from .. import errors, faults
from ..leases import LeaseEvent
from . import records as rec
from .storage import Storage

T = TypeVar("T")

SCHEMA_VERSION = 1
BUSY_TIMEOUT_MS = 30_000


def _load_queries() -> dict[str, str]:
    text = resources.files(__package__).joinpath("sqlite.sql").read_text(encoding="utf-8")
    queries: dict[str, str] = {}
    name = None
    for line in text.splitlines():
        if line.startswith("-- name: "):
            name = line[len("-- name: "):].strip()
            queries[name] = ""
        elif name is not None:
            queries[name] += line + "\n"
    return {key: value.strip() for key, value in queries.items()}


Q = _load_queries()


class _Cache:
    """What the writer knows of the ledger's tail: valid while no other connection commits.

    SQLite's ``PRAGMA data_version`` changes exactly when another connection commits
    (https://www.sqlite.org/pragma.html#pragma_data_version); a change empties the cache.
    """

    __slots__ = ("version", "last_seq", "heads", "leases")

    def __init__(self) -> None:
        self.version: int | None = None
        self.last_seq: int | None = None
        self.heads: dict[str, str | None] = {}
        self.leases: dict[tuple[str, str], LeaseEvent | None] = {}

    def reset(self, version: int | None) -> None:
        self.version = version
        self.last_seq = None
        self.heads.clear()
        self.leases.clear()


class _SQLiteTxn:
    __slots__ = ("_conn", "_cache")

    def __init__(self, conn: sqlite3.Connection, cache: _Cache) -> None:
        self._conn = conn
        self._cache = cache

    def last_seq(self) -> int:
        if self._cache.last_seq is None:
            self._cache.last_seq = self._conn.execute(Q["last_seq"]).fetchone()[0]
        return self._cache.last_seq

    def run_head(self, run_id: str) -> str | None:
        heads = self._cache.heads
        if run_id not in heads:
            row = self._conn.execute(Q["run_head"], (run_id,)).fetchone()
            heads[run_id] = row[0] if row else None
        return heads[run_id]

    def lease_state(self, run_id: str, task: str) -> LeaseEvent | None:
        leases = self._cache.leases
        key = (run_id, task)
        if key not in leases:
            row = self._conn.execute(Q["lease_state"], (run_id, task)).fetchone()
            leases[key] = LeaseEvent(row[0], row[1]) if row else None
        return leases[key]

    def insert(self, r: rec.Record) -> tuple[int, str] | None:
        try:
            self._conn.execute(Q["insert"], (
                r.seq, r.run_id, r.ts_ms, r.actor, r.kind, r.key, r.task, r.epoch, r.why,
                r.payload_json, r.policy_hash, r.prev_hash, r.hash))
        except sqlite3.IntegrityError:
            if r.kind not in rec.UNIQUE_KINDS:
                raise
            row = self._conn.execute(Q["find_unique"], (r.run_id, r.key, r.kind)).fetchone()
            if row is None:
                raise
            return (row[0], row[1])
        cache = self._cache
        cache.last_seq = r.seq
        cache.heads[r.run_id] = r.hash
        if r.task is not None and r.epoch is not None and (
            r.kind == "task.assigned" or r.kind in rec.LEASE_END_KINDS
        ):
            cache.leases[(r.run_id, r.task)] = LeaseEvent(r.kind, r.epoch)
        return None


def _row_to_record(row: tuple[Any, ...]) -> rec.Record:
    return rec.Record(
        seq=row[0], run_id=row[1], ts_ms=row[2], actor=row[3], kind=row[4], key=row[5],
        task=row[6], epoch=row[7], why=row[8], payload_json=row[9], policy_hash=row[10],
        prev_hash=row[11], hash=row[12])


class SQLiteStorage(Storage):
    """The ledger in one SQLite file.

    Args:
        path: The database file; created with its folder if missing.

    Raises:
        LedgerError: the file is not a SQLite database, or holds a newer ledger schema.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.url = f"sqlite:///{self.path}"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._cache = _Cache()
        try:
            self._conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False,
                                         timeout=BUSY_TIMEOUT_MS / 1000)
            self._conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            mode = self._conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if mode.lower() != "wal":
                raise errors.LedgerError(f"{self.path}: cannot switch the ledger to WAL mode (got {mode})")
            self._conn.execute("PRAGMA synchronous = FULL")
            self._conn.executescript(Q["schema"])
            version = int(self._conn.execute(Q["schema_version"]).fetchone()[0])
        except sqlite3.DatabaseError as exc:
            raise errors.LedgerError(
                f"{self.path} is not a usable fleetledger ledger ({exc}); "
                "move it aside or pass another --workspace", path=str(self.path)) from exc
        if version > SCHEMA_VERSION:
            raise errors.LedgerError(
                f"{self.path} has ledger schema {version}, newer than this fleetledger's "
                f"{SCHEMA_VERSION}; upgrade fleetledger", path=str(self.path))

    def _run_txn(self, body: Callable[[_SQLiteTxn], T]) -> T:
        conn = self._conn
        cache = self._cache
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                version = conn.execute("PRAGMA data_version").fetchone()[0]
                if version != cache.version:
                    cache.reset(version)
                result = body(_SQLiteTxn(conn, cache))
                conn.execute("COMMIT")
            except BaseException:
                cache.reset(None)
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        except sqlite3.IntegrityError as exc:
            raise errors.AppendOnlyViolation(f"the ledger refused the write: {exc}") from exc
        except (sqlite3.OperationalError, OSError) as exc:
            raise errors.LedgerError(f"ledger write failed at {self.path}: {exc}; nothing of the batch was stored",
                                     path=str(self.path)) from exc
        faults.hit("ledger.after_commit")
        return result

    def read(self, run_id: str | None = None, *, after_seq: int = 0) -> Iterator[rec.Record]:
        if run_id is None:
            cursor = self._conn.execute(Q["read_all"], (after_seq,))
        else:
            cursor = self._conn.execute(Q["read_run"], (run_id, after_seq))
        while rows := cursor.fetchmany(2048):
            for row in rows:
                yield _row_to_record(row)

    def runs(self) -> list[tuple[str, int, int, int]]:
        return [tuple(row) for row in self._conn.execute(Q["runs"]).fetchall()]  # type: ignore[misc]

    def execute_raw(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """Runs raw SQL on the ledger file; for tests and repair tools only (``unsafe``).

        Raises:
            AppendOnlyViolation: the statement tried to update or delete a record.
        """
        self._cache.reset(None)
        try:
            return self._conn.execute(sql, params).fetchall()
        except sqlite3.IntegrityError as exc:
            raise errors.AppendOnlyViolation(str(exc)) from exc

    def close(self) -> None:
        conn = getattr(self, "_conn", None)
        if conn is not None:
            conn.close()
            self._conn = None  # type: ignore[assignment]

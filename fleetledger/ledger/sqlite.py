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


class _SQLiteTxn:
    __slots__ = ("_conn",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def last_seq(self) -> int:
        return self._conn.execute(Q["last_seq"]).fetchone()[0]

    def run_head(self, run_id: str) -> str | None:
        row = self._conn.execute(Q["run_head"], (run_id,)).fetchone()
        return row[0] if row else None

    def find_unique(self, run_id: str, kind: str, key: str) -> tuple[int, str] | None:
        row = self._conn.execute(Q["find_unique"], (run_id, key, kind)).fetchone()
        return (row[0], row[1]) if row else None

    def lease_state(self, run_id: str, task: str) -> LeaseEvent | None:
        row = self._conn.execute(Q["lease_state"], (run_id, task)).fetchone()
        return LeaseEvent(row[0], row[1]) if row else None

    def insert(self, r: rec.Record) -> None:
        self._conn.execute(Q["insert"], (
            r.seq, r.run_id, r.ts_ms, r.actor, r.kind, r.key, r.task, r.epoch, r.why,
            r.payload_json, r.policy_hash, r.prev_hash, r.hash))


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
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                result = body(_SQLiteTxn(conn))
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        except sqlite3.IntegrityError as exc:
            raise errors.AppendOnlyViolation(f"the ledger refused the write: {exc}") from exc
        except sqlite3.OperationalError as exc:
            raise errors.LedgerError(f"ledger write failed at {self.path}: {exc}", path=str(self.path)) from exc
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
        try:
            return self._conn.execute(sql, params).fetchall()
        except sqlite3.IntegrityError as exc:
            raise errors.AppendOnlyViolation(str(exc)) from exc

    def close(self) -> None:
        conn = getattr(self, "_conn", None)
        if conn is not None:
            conn.close()
            self._conn = None  # type: ignore[assignment]

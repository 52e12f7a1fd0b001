"""The SQLite ledger: one file, WAL mode, ``synchronous=FULL``, append-only by trigger.

WAL lets status and audit readers in other processes read while the coordinator writes;
``synchronous=FULL`` syncs the WAL at every commit, so a committed batch survives a power cut
(https://www.sqlite.org/pragma.html#pragma_synchronous). The triggers in ``sqlite.sql`` make
the database itself refuse UPDATE and DELETE on ``records``.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import sqlite3
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from .. import errors, faults
from ..leases import LeaseEvent, remember_lease_event
from . import damage, migrations
from . import records as rec
from .storage import CachedLookups, Storage

T = TypeVar("T")

BUSY_TIMEOUT_MS = 30_000
SQLITE_BUSY, SQLITE_CORRUPT, SQLITE_FULL, SQLITE_NOTADB = 5, 11, 13, 26


Q = migrations.load_queries("sqlite.sql")
MIGRATIONS = migrations.ordered_migrations(Q)


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


class _SQLiteTxn(CachedLookups):
    __slots__ = ("_conn", "_cache")

    def __init__(self, conn: sqlite3.Connection, cache: _Cache) -> None:
        self._conn = conn
        self._cache = cache

    def last_seq(self) -> int:
        if self._cache.last_seq is None:
            self._cache.last_seq = self._conn.execute(Q["last_seq"]).fetchone()[0]
        return self._cache.last_seq

    def _fetchone(self, name: str, params: tuple[Any, ...] | dict[str, Any]) -> Any:
        return self._conn.execute(Q[name], params).fetchone()

    def insert(self, r: rec.Record) -> tuple[int, str] | None:
        try:
            self._conn.execute(Q["insert"], r)  # a Record's fields are the insert's columns, in order
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
        if r.task is not None:
            remember_lease_event(cache.leases, (r.run_id, r.task), r.kind, r.epoch)
        return None


class _SQLiteSchema:
    """``migrations.Schema`` on a connection inside a ``BEGIN IMMEDIATE`` transaction."""

    __slots__ = ("_conn",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def version(self) -> int:
        if not self._conn.execute(Q["has_meta"]).fetchone()[0]:
            return 0
        row = self._conn.execute(Q["schema_version"]).fetchone()
        return int(row[0]) if row else 0

    def run(self, script: str) -> None:
        # One statement at a time, inside the open transaction (``executescript`` would
        # commit it first).
        statement = ""
        for line in script.splitlines(keepends=True):
            statement += line
            if sqlite3.complete_statement(statement):
                self._conn.execute(statement)
                statement = ""
        if statement.strip():
            raise ValueError(f"unterminated SQL statement in a migration: {statement.strip()[:80]!r}")

    def set_version(self, version: int) -> None:
        self._conn.execute(Q["set_version"], (str(version),))


def _in_write_txn(conn: sqlite3.Connection, body: Callable[[_SQLiteSchema], T]) -> T:
    """Runs ``body`` on the schema in one ``BEGIN IMMEDIATE`` transaction, committed when it returns."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        result = body(_SQLiteSchema(conn))
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return result


def _scan_wal(path: Path, *, tries: int = 3) -> damage.WalScan:
    """Scans the ledger's WAL (``damage.scan_wal``). Damage counts only when it is seen at the
    same frames in ``tries`` reads in a row: a live writer that restarts the WAL while it is read
    (new header and first frames, old frames after them) must not look like damage."""
    wal = path.with_name(path.name + "-wal")
    scans = [damage.scan_wal(wal)]
    while scans[-1].broken and len(scans) < tries:
        scans.append(damage.scan_wal(wal))
    where = {(scan.header_lost, tuple(f.offset for f in scan.damaged)) for scan in scans}
    if len(where) > 1:
        scans[-1].damaged = []
        scans[-1].header_lost = False
    return scans[-1]


def _quick_check(conn: sqlite3.Connection) -> list[str]:
    """``PRAGMA quick_check``'s complaints about the file (none when "ok"): every page of every
    b-tree is read and its structure checked (O(N), without cross-checking indexes against rows)."""
    rows = conn.execute("PRAGMA quick_check").fetchall()
    return [] if rows and rows[0][0] == "ok" else [str(row[0]) for row in rows]


SPILL_MARGIN = 400
"""Bytes below the page size above which a record's text columns may not fit on its leaf page.
SQLite moves the rest of a row to overflow pages when the row is longer than the usable page
size minus 35 (https://www.sqlite.org/fileformat2.html#b_tree_pages); the row's header and
integer columns take at most 82 bytes and reserved bytes at most 255, so 400 errs towards
checking a few rows too many, which costs only their hashing."""


def _spilled_mismatches(conn: sqlite3.Connection) -> list[int]:
    """The seqs of records stored partly on overflow pages whose content no longer matches
    their hash, or no longer reads as text.

    ``quick_check`` checks the structure of every page, so a page overwritten as a whole (with
    NUL bytes, or with another file's block) fails it, except the last overflow page of a row:
    that page holds only a zero "next page" number and raw bytes of the row, so nothing but the
    record's own hash can tell its content was replaced. O(N) in the table's text (each value's
    length is read), plus one hash per record that may spill.

    Raises:
        sqlite3.DatabaseError: SQLite met damage it recognises while reading.
    """
    if not conn.execute(Q["has_records"]).fetchone()[0]:
        return []  # a new ledger: its schema is installed next
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    bad = []
    for (seq,) in conn.execute(Q["spilled_seqs"], (page_size - SPILL_MARGIN,)).fetchall():
        try:
            record = _row_to_record(conn.execute(Q["record_at"], (seq,)).fetchone())
        except sqlite3.OperationalError:  # bytes that are not UTF-8 where text was written
            bad.append(seq)
            continue
        if rec.expected_hash(record) != record.hash:
            bad.append(seq)
    return bad


def _damaged(path: Path, complaints: list[str], wal: damage.WalScan | None,
             corrupt: Sequence[int] = ()) -> errors.LedgerDamagedError:
    """The error for a damaged ledger file: what is damaged (pages, WAL frames) and which records
    cannot be read (computed on an image in a scratch folder; the ledger itself is not touched),
    or read back with content that does not match their hash (``corrupt``, their seqs)."""
    lost = ""
    try:
        with tempfile.TemporaryDirectory(prefix="fleetledger-check-") as work:
            spans, pages = damage.unreadable(path, wal or damage.scan_wal(path.with_name(path.name + "-wal")), Path(work))
        complaints = [*complaints, *(f"{page} does not read back" for page in pages)]
        lost = f"; unreadable records: {damage.text(spans)}" if spans else "" if corrupt else "; every record still reads back"
        if any(page.startswith("page 1 (") for page in pages):
            lost = "; salvage rebuilds page 1 from the ledger's own schema, then says which records, if any, are lost"
    except (OSError, sqlite3.DatabaseError) as exc:
        lost = f"; which records are lost could not be worked out ({exc})"
    shown = "; ".join(c.replace("\n", " ") for c in complaints[:5]) + (f" (+{len(complaints) - 5} more)" if len(complaints) > 5 else "")
    return errors.LedgerDamagedError(
        f"the ledger {path} is damaged: {shown}{lost}. Nothing was appended to it. Run `fleetledger salvage` (same "
        "--workspace) to copy every readable record into a new ledger, keep the damaged one aside and see exactly "
        "what was lost", path=str(path))


_row_to_record = rec.from_row
"""A row of the named queries that select whole records (their columns in ``Record``'s order)."""


def _refuse_links(path: Path) -> None:
    """Refuses a ledger file, or one of SQLite's side files, that is a symbolic link: SQLite
    follows links, so a planted one would make the ledger write wherever it points.

    Raises:
        LedgerError: one of them is a link; the message names it.
    """
    for name in (path, *(path.with_name(path.name + suffix) for suffix in ("-wal", "-shm", "-journal"))):
        if os.path.islink(name):
            raise errors.LedgerError(f"{name} is a symbolic link; the ledger is never opened through a link (it "
                                     "would write where the link points): remove it and run again", path=str(name))


def _switch_to_wal(conn: sqlite3.Connection) -> str:
    """Switches the database to WAL mode (a no-op when it is in it) and returns the mode it is
    in now.

    Switching a database still in rollback-journal mode (a ledger another process is creating)
    needs an exclusive lock; while another connection holds a write transaction, SQLite answers
    "database is locked" at once, without waiting through the busy timeout (its deadlock
    avoidance: this connection holds a shared lock the other one's commit waits for). So the
    switch is tried again, backing off, until ``BUSY_TIMEOUT_MS`` has passed, as every other
    statement waits.

    Raises:
        sqlite3.OperationalError: still locked after ``BUSY_TIMEOUT_MS``, or another error.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    delay_s = 0.001
    while True:
        try:
            return str(conn.execute("PRAGMA journal_mode = WAL").fetchone()[0])
        except sqlite3.OperationalError as exc:
            if getattr(exc, "sqlite_errorcode", None) != SQLITE_BUSY or time.monotonic() >= deadline:
                raise
        _backoff(delay_s)
        delay_s = min(delay_s * 2, 0.05)


def _backoff(seconds: float) -> None:
    """Waits before the WAL switch is tried again (a seam for the test that holds the lock)."""
    time.sleep(seconds)


class SQLiteStorage(Storage):
    """The ledger in one SQLite file.

    Args:
        path: The database file; created with its folder if missing.

    Raises:
        LedgerError: the file is not a SQLite database, or holds a ledger of another schema
            version (an older one needs `fleetledger upgrade`).
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.url = f"sqlite:///{self.path}"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        _refuse_links(self.path)
        self._cache = _Cache()
        self._conn = None  # type: ignore[assignment]
        wal = _scan_wal(self.path)
        if wal.broken:  # before SQLite opens it: its recovery would drop the frames after the damage
            raise _damaged(self.path, [str(wal.problem(self.path.with_name(self.path.name + "-wal")))], wal)
        try:
            self._conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False,
                                         timeout=BUSY_TIMEOUT_MS / 1000)
            self._conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            complaints = _quick_check(self._conn)
            corrupt = [] if complaints else _spilled_mismatches(self._conn)
            if corrupt:
                complaints = [f"the records at {damage.text(damage.ranges(corrupt))}, stored partly on overflow pages, read back "
                              "with content that does not match their hash (a page of theirs was overwritten)"]
            if complaints:
                self.close()
                raise _damaged(self.path, complaints, wal, corrupt)
            mode = _switch_to_wal(self._conn)
            if mode.lower() != "wal":
                raise errors.LedgerError(f"{self.path}: cannot switch the ledger to WAL mode (got {mode})")
            self._conn.execute("PRAGMA synchronous = FULL")
            _in_write_txn(self._conn, lambda schema: migrations.install_or_check(
                schema, Q["schema"], MIGRATIONS, str(self.path)))
        except sqlite3.DatabaseError as exc:
            self.close()
            if getattr(exc, "sqlite_errorcode", None) == SQLITE_CORRUPT:
                raise _damaged(self.path, [str(exc)], wal) from exc
            if getattr(exc, "sqlite_errorcode", None) == SQLITE_NOTADB and damage.headless_ledger(self.path):
                raise _damaged(self.path, [], wal) from exc
            if getattr(exc, "sqlite_errorcode", None) == SQLITE_BUSY:  # a healthy ledger, in use: not to move aside
                raise errors.LedgerError(
                    f"{self.path} is locked by another process (a run or command still using it) after "
                    f"{BUSY_TIMEOUT_MS // 1000} s; let it finish or stop it, then run the same command again "
                    "(nothing recorded was changed)", path=str(self.path)) from exc
            raise errors.LedgerError(
                f"{self.path} is not a usable fleetledger ledger ({exc}); "
                "move it aside or pass another --workspace", path=str(self.path)) from exc

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
            full = getattr(exc, "errno", None) == errno.ENOSPC or getattr(exc, "sqlite_errorcode", None) == SQLITE_FULL
            raise errors.LedgerError(f"ledger write failed at {self.path}: {exc}; nothing of the batch was stored",
                                     path=str(self.path), no_space=full) from exc
        except sqlite3.DatabaseError as exc:
            if getattr(exc, "sqlite_errorcode", None) not in (SQLITE_CORRUPT, SQLITE_NOTADB):
                raise errors.LedgerError(f"ledger write failed at {self.path}: {exc}; nothing of the batch was stored",
                                         path=str(self.path)) from exc
            raise _damaged(self.path, [f"a write failed: {exc}"], None) from exc
        faults.hit("ledger.after_commit")
        return result

    def read(self, run_id: str | None = None, *, after_seq: int = 0) -> Iterator[rec.Record]:
        with self._reading():
            if run_id is None:
                cursor = self._conn.execute(Q["read_all"], (after_seq,))
            else:
                cursor = self._run_cursor(run_id, after_seq)
            yield from map(_row_to_record, cursor)  # row by row: a replay's rows stay in the CPU's cache

    def _run_cursor(self, run_id: str, after_seq: int) -> sqlite3.Cursor:
        """A cursor over the run's records after ``after_seq``: by the table's order over the
        run's span when the run holds at least half of it (the usual case: one run at a time
        in a workspace's ledger), else through ``records_by_run``."""
        first, last, count = self._conn.execute(Q["run_span"], (run_id, after_seq)).fetchone()
        if count and 2 * count >= last - first + 1:
            return self._conn.execute(Q["read_span"], (first, last, run_id))
        return self._conn.execute(Q["read_run"], (run_id, after_seq))

    @contextlib.contextmanager
    def _reading(self) -> Iterator[None]:
        """Turns SQLite's "database disk image is malformed" met while reading (damage that
        appeared after the open's check) into ``LedgerDamagedError``."""
        try:
            yield
        except sqlite3.DatabaseError as exc:
            if getattr(exc, "sqlite_errorcode", None) not in (SQLITE_CORRUPT, SQLITE_NOTADB):
                raise
            raise _damaged(self.path, [f"a read failed: {exc}"], None) from exc

    def runs(self) -> list[tuple[str, int, int, int]]:
        with self._reading():
            return [tuple(row) for row in self._conn.execute(Q["runs"]).fetchall()]  # type: ignore[misc]

    def first_records(self) -> list[rec.Record]:
        with self._reading():
            return [_row_to_record(row) for row in self._conn.execute(Q["first_records"]).fetchall()]

    def task_records(self, run_id: str, tasks: Sequence[str], *, kind: str | None = None) -> Iterator[rec.Record]:
        ids = json.dumps(list(tasks))
        with self._reading():
            if kind is None:
                cursor = self._conn.execute(Q["task_records"], (run_id, ids))
            else:
                cursor = self._conn.execute(Q["task_records_of_kind"], (run_id, ids, kind))
            yield from map(_row_to_record, cursor)  # row by row: a replay's rows stay in the CPU's cache

    def kind_records(self, kind: str, *, containing: str = "") -> Iterator[rec.Record]:
        with self._reading():
            cursor = self._conn.execute(Q["kind_records"], (kind, containing))
            yield from map(_row_to_record, cursor)  # row by row: a replay's rows stay in the CPU's cache

    def latest_checkpoint(self, run_id: str) -> rec.Record | None:
        with self._reading():
            row = self._conn.execute(Q["latest_checkpoint"], (run_id,)).fetchone()
        return _row_to_record(row) if row else None

    def unique_record(self, run_id: str, kind: str, key: str) -> rec.Record | None:
        with self._reading():
            row = self._conn.execute(Q["unique_record"], (run_id, key, kind)).fetchone()
        return _row_to_record(row) if row else None

    def integrity_problems(self) -> list[str]:
        """Runs ``PRAGMA integrity_check`` and returns its complaints (none when "ok")."""
        rows = self._conn.execute("PRAGMA integrity_check").fetchall()
        return [] if rows and rows[0][0] == "ok" else [f"SQLite integrity_check: {row[0]}" for row in rows]

    def copy_in(self, records: Sequence[rec.Record]) -> None:
        """Inserts stored records exactly as they are (their seq, time and hashes), in one
        transaction; for ``salvage``, which copies a damaged ledger's verified prefix into a new,
        empty one (``unsafe``: the append rules are not applied; ``verify`` checks the result).

        Raises:
            LedgerError: the write failed; nothing was stored.
        """
        def body(txn: _SQLiteTxn) -> None:
            for r in records:
                self._conn.execute(Q["insert"], (
                    r.seq, r.run_id, r.ts_ms, r.actor, r.kind, r.key, r.task, r.epoch, r.why,
                    r.payload_json, r.policy_hash, r.prev_hash, r.hash))
        self._run_txn(body)

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


def upgrade(path: str | Path) -> tuple[int, int]:
    """Applies the missing migrations to the SQLite ledger at ``path`` in one transaction.

    Returns:
        The schema versions before and after.

    Raises:
        LedgerError: the file is not a SQLite database, a migration failed (the transaction is
            rolled back, the ledger keeps its version), or the ledger is newer.
    """
    conn = sqlite3.connect(path, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)
    try:
        return _in_write_txn(conn, lambda schema: migrations.migrate(schema, MIGRATIONS, str(path)))
    except sqlite3.DatabaseError as exc:
        raise errors.LedgerError(f"upgrade of {path} failed ({exc}); the ledger was left as it was",
                                 path=str(path)) from exc
    finally:
        conn.close()

"""The PostgreSQL ledger: one schema, many writers on many hosts, append-only by trigger.

Every write transaction first takes a transaction-level advisory lock keyed by the ledger's
schema (query ``lock``), so appends from every connection and every host run one at a time:
sequence numbers stay contiguous and each record's ``prev_hash`` is the hash of its run's
previous record. The transactions are READ COMMITTED and read the ledger only after the lock
is granted, in later statements, so each sees every commit before it (PostgreSQL releases the
lock only after the commit is visible). Commits are durable (``synchronous_commit = on``,
whatever the server's default).

The tail cache of the SQLite backend works here too: after taking the lock, the writer reads
the ledger's last record; when it is the one this writer last committed, nobody else wrote
since, and the cached run heads and lease states are still exact. When it is not, the cache
starts again from that record, which is the head of its run: writers on many hosts appending
to one run need no other lookup to chain their records.

The trigger in ``postgres.sql`` makes the database refuse UPDATE, DELETE and TRUNCATE on
``records`` from any client. A deployment can go further with privileges: let coordinators
connect as a role with only SELECT and INSERT on the ledger, and upgrade as its owner.

Select it with a libpq URL, ``postgresql://user@host:5432/db``; the ledger lives in the first
schema of the connection's search path (``?options=-csearch_path%3Dname`` picks another). Keep
passwords out of the URL (``PGPASSWORD`` or ``~/.pgpass``), since a URL may end up in the
run-state file or a log; the storage's own ``url`` has any password removed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import psycopg
from psycopg.conninfo import conninfo_to_dict

from .. import errors, faults
from ..leases import LeaseEvent, remember_lease_event
from . import migrations
from . import records as rec
from .storage import CachedLookups, Storage

T = TypeVar("T")

Q = migrations.load_queries("postgres.sql")
MIGRATIONS = migrations.ordered_migrations(Q)
LOCK_TIMEOUT_MS = 30_000
CONNECT_TIMEOUT_S = 10
READ_PAGE = 2048


class _Cache:
    """What the writer knows of the ledger's tail: exact while ``last_seq`` is the ledger's."""

    __slots__ = ("last_seq", "heads", "leases")

    def __init__(self) -> None:
        self.last_seq: int | None = None
        self.heads: dict[str, str | None] = {}
        self.leases: dict[tuple[str, str], LeaseEvent | None] = {}

    def reset(self, last_seq: int | None) -> None:
        self.last_seq = last_seq
        self.heads.clear()
        self.leases.clear()


class _PostgresTxn(CachedLookups):
    __slots__ = ("_cur", "_cache")

    def __init__(self, cur: psycopg.Cursor[Any], cache: _Cache) -> None:
        self._cur = cur
        self._cache = cache

    def last_seq(self) -> int:
        assert self._cache.last_seq is not None, "the transaction reads the tail first"
        return self._cache.last_seq

    def _fetchone(self, name: str, params: tuple[Any, ...] | dict[str, Any]) -> Any:
        return self._cur.execute(Q[name], params).fetchone()

    def insert(self, r: rec.Record) -> tuple[int, str] | None:
        cur = self._cur.execute(Q["insert"], r)  # a Record's fields are the insert's columns, in order
        if cur.rowcount == 0:
            row = self._cur.execute(Q["find_unique"], (r.run_id, r.key, r.kind)).fetchone()
            assert row is not None, "ON CONFLICT skipped a row only for a stored unique key"
            return (row[0], row[1])
        cache = self._cache
        cache.last_seq = r.seq
        cache.heads[r.run_id] = r.hash
        if r.task is not None:
            remember_lease_event(cache.leases, (r.run_id, r.task), r.kind, r.epoch)
        return None


class _PostgresSchema:
    """``migrations.Schema`` on a cursor inside a transaction that holds the ledger lock."""

    __slots__ = ("_cur",)

    def __init__(self, cur: psycopg.Cursor[Any]) -> None:
        self._cur = cur

    def version(self) -> int:
        if not self._cur.execute(Q["has_meta"]).fetchone()[0]:
            return 0
        row = self._cur.execute(Q["schema_version"]).fetchone()
        return int(row[0]) if row else 0

    def run(self, script: str) -> None:
        self._cur.execute(script)

    def set_version(self, version: int) -> None:
        self._cur.execute(Q["set_version"], (str(version),))


_row_to_record = rec.from_row
"""A row of the named queries that select whole records (their columns in ``Record``'s order)."""


def public_url(url: str) -> str:
    """Returns ``url`` without its password (in the user part or a ``password`` parameter)."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, hosts = netloc.rsplit("@", 1)
        netloc = f"{userinfo.split(':', 1)[0]}@{hosts}"
    query = urlencode([(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "password"])
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def _connect(url: str) -> psycopg.Connection[Any]:
    """Opens an autocommit connection whose explicit transactions are READ COMMITTED.

    Raises:
        LedgerError: the server cannot be reached, or refused the connection.
    """
    conn = None
    try:
        params = conninfo_to_dict(url)
        params.setdefault("connect_timeout", CONNECT_TIMEOUT_S)
        params.setdefault("application_name", "fleetledger")
        conn = psycopg.connect(**params, autocommit=True)
        conn.isolation_level = psycopg.IsolationLevel.READ_COMMITTED
        conn.execute(Q["session"], (f"{LOCK_TIMEOUT_MS}ms",))
    except psycopg.Error as exc:
        if conn is not None:
            conn.close()
        raise errors.LedgerError(f"cannot connect to the ledger at {public_url(url)}: {exc}".strip(),
                                 url=public_url(url)) from exc
    return conn


def _locked(conn: psycopg.Connection[Any], body: Callable[[psycopg.Cursor[Any]], T], where: str) -> T:
    """Runs ``body(cursor)`` in one transaction holding the ledger lock; commits when it returns.

    Raises:
        AppendOnlyViolation: a statement tried to change or remove records.
        LedgerError: the connection failed, a lock was not granted in time, or the transaction
            could not be serialised; the transaction was rolled back.
    """
    try:
        with conn.transaction(), conn.cursor() as cur:
            cur.execute(Q["lock"])
            return body(cur)
    except psycopg.errors.RestrictViolation as exc:
        raise errors.AppendOnlyViolation(f"the ledger refused the write: {exc}") from exc
    except (psycopg.Error, OSError) as exc:
        raise errors.LedgerError(f"ledger write failed at {where}: {exc}; nothing of it was stored",
                                 url=where) from exc


class PostgresStorage(Storage):
    """The ledger in a PostgreSQL schema, shared by any number of writers on any hosts.

    One instance holds one connection; use one per thread, as with ``SQLiteStorage``. A
    connection that broke (a server restart, a network cut) is opened again at the next call,
    so the coordinator's retry of a failed append reaches the server once it is back.

    Args:
        url: ``postgresql://...``, any libpq URL; a password in it is used but never shown.

    Raises:
        LedgerError: the server cannot be reached, or the schema holds a ledger of another
            schema version.
    """

    shared = True

    def __init__(self, url: str) -> None:
        self._dsn = url
        self.url = public_url(url)
        self._cache = _Cache()
        self._conn: psycopg.Connection[Any] | None = _connect(url)
        try:
            _locked(self._conn, lambda cur: migrations.install_or_check(
                _PostgresSchema(cur), Q["schema"], MIGRATIONS, self.url), self.url)
        except BaseException:
            self.close()
            raise

    def _connection(self) -> psycopg.Connection[Any]:
        if self._conn is None or self._conn.closed:
            self._conn = _connect(self._dsn)
        return self._conn

    def _run_txn(self, body: Callable[[_PostgresTxn], T]) -> T:
        cache = self._cache

        def locked_body(cur: psycopg.Cursor[Any]) -> T:
            version, last_seq, last_run, last_hash = cur.execute(Q["tail"]).fetchone()
            if int(version) != len(MIGRATIONS):
                raise errors.LedgerError(
                    f"{self.url} was changed to ledger schema {version} while this fleetledger "
                    f"(schema {len(MIGRATIONS)}) was writing it; restart with the fleetledger that upgraded it",
                    url=self.url)
            if (last_seq or 0) != cache.last_seq:
                cache.reset(last_seq or 0)
                if last_run is not None:
                    cache.heads[last_run] = last_hash
            return body(_PostgresTxn(cur, cache))

        try:
            result = _locked(self._connection(), locked_body, self.url)
        except BaseException:
            cache.reset(None)
            raise
        faults.hit("ledger.after_commit")
        return result

    def _query(self, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        try:
            return self._connection().execute(sql, params).fetchall()
        except psycopg.Error as exc:
            raise errors.LedgerError(f"ledger read failed at {self.url}: {exc}", url=self.url) from exc

    def read(self, run_id: str | None = None, *, after_seq: int = 0) -> Iterator[rec.Record]:
        # Pages by sequence number: appends commit in sequence order (one at a time, under the
        # lock), so no page can miss a record that a later page would skip.
        while True:
            if run_id is None:
                rows = self._query(Q["read_all"], (after_seq, READ_PAGE))
            else:
                rows = self._query(Q["read_run"], (run_id, after_seq, READ_PAGE))
            yield from map(_row_to_record, rows)
            if len(rows) < READ_PAGE:
                return
            after_seq = rows[-1][0]

    def runs(self) -> list[tuple[str, int, int, int]]:
        return [tuple(row) for row in self._query(Q["runs"], ())]  # type: ignore[misc]

    def first_records(self) -> list[rec.Record]:
        return [_row_to_record(row) for row in self._query(Q["first_records"], ())]

    def task_records(self, run_id: str, tasks: Sequence[str], *, kind: str | None = None) -> Iterator[rec.Record]:
        if kind is None:
            rows = self._query(Q["task_records"], (run_id, list(tasks)))
        else:
            rows = self._query(Q["task_records_of_kind"], (run_id, list(tasks), kind))
        return iter([_row_to_record(row) for row in rows])

    def kind_records(self, kind: str, *, containing: str = "") -> Iterator[rec.Record]:
        return iter([_row_to_record(row) for row in self._query(Q["kind_records"], (kind, containing))])

    def latest_checkpoint(self, run_id: str) -> rec.Record | None:
        rows = self._query(Q["latest_checkpoint"], (run_id,))
        return _row_to_record(rows[0]) if rows else None

    def unique_record(self, run_id: str, kind: str, key: str) -> rec.Record | None:
        rows = self._query(Q["unique_record"], (run_id, key, kind))
        return _row_to_record(rows[0]) if rows else None

    def execute_raw(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """Runs raw SQL (``%s`` placeholders) on the ledger; for tests and repair tools only.

        Raises:
            AppendOnlyViolation: the statement tried to update, delete or truncate records.
            LedgerError: any other failure of the statement.
        """
        self._cache.reset(None)  # a repair may change records without moving the ledger's tail
        try:
            cur = self._connection().execute(sql, params)
            return cur.fetchall() if cur.description else []
        except psycopg.errors.RestrictViolation as exc:
            raise errors.AppendOnlyViolation(str(exc)) from exc
        except psycopg.Error as exc:
            raise errors.LedgerError(f"{sql!r} failed at {self.url}: {exc}", url=self.url) from exc

    def close(self) -> None:
        conn = getattr(self, "_conn", None)
        if conn is not None:
            conn.close()
            self._conn = None


def upgrade(url: str) -> tuple[int, int]:
    """Applies the missing migrations to the ledger at ``url`` in one transaction.

    Returns:
        The schema versions before and after.

    Raises:
        LedgerError: the server cannot be reached, a migration failed (the transaction is
            rolled back, the ledger keeps its version), or the ledger is newer.
    """
    conn = _connect(url)
    try:
        return _locked(conn, lambda cur: migrations.migrate(_PostgresSchema(cur), MIGRATIONS, public_url(url)),
                       public_url(url))
    finally:
        conn.close()

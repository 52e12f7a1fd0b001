"""The PostgreSQL ledger, and the contract tests that matter most once writers are many.

The first tests run against every backend (``ledger_url`` is parametrized by ``BACKENDS``):
many writers, each with its own connection as if on its own host, append at once, and the
ledger must stay one contiguous, intact chain with each lease granted once. The rest are
PostgreSQL's own: append-only enforced by the database, connections lost mid-transaction,
lock waits, serialisation failures, paging, and passwords kept out of the recorded URL.
"""

from __future__ import annotations

import multiprocessing
import threading
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

import psycopg
import pytest

from fleetledger import errors, faults
from fleetledger.ledger import Appended, Duplicate, NewRecord, Refused, Storage, open_storage
from fleetledger.ledger import postgres
from fleetledger.leases import LEASE_END_KINDS
from fleetledger.ledger.records import UNIQUE_KINDS
from fleetledger.verify import verify_records

RUN = "run-1"
WRITERS = 8


def rec(kind: str, **fields: Any) -> NewRecord:
    return NewRecord(run_id=fields.pop("run_id", RUN), actor=fields.pop("actor", "coordinator"), kind=kind, **fields)


def in_threads(url: str, n: int, work: Callable[[int, Storage], Any]) -> list[Any]:
    """Runs ``work(i, storage)`` in ``n`` threads at once, each with its own connection."""
    barrier = threading.Barrier(n)
    results: list[Any] = [None] * n
    failures: list[BaseException] = []

    def run(i: int) -> None:
        try:
            with open_storage(url) as store:
                barrier.wait()
                results[i] = work(i, store)
        except BaseException as exc:  # reported below, in the test's thread
            failures.append(exc)
            barrier.abort()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise failures[0]
    return results


def assert_one_intact_ledger(url: str, expected_records: int) -> None:
    with open_storage(url) as store:
        records = list(store.read())
    assert [r.seq for r in records] == list(range(1, expected_records + 1))
    report = verify_records(records)
    assert report.ok, report.problems


# -- contract tests for many writers (every backend) --------------------------------------


def test_concurrent_writers_keep_seq_contiguous_and_the_chain_intact(ledger_url: str) -> None:
    batches = 20

    def work(i: int, store: Storage) -> list[Any]:
        outcomes = []
        for b in range(batches):
            outcomes += store.append([
                rec("step.intent", actor=f"w{i}", key=f"w{i}/s{b}"),
                rec("step.done", actor=f"w{i}", key=f"w{i}/s{b}", payload={"v": b}),
                rec("decision", run_id=f"own-{i}", actor=f"w{i}", why=f"batch {b}"),
            ], now_ms=b)
        return outcomes

    results = in_threads(ledger_url, WRITERS, work)
    assert all(isinstance(o, Appended) for outcomes in results for o in outcomes)
    assert_one_intact_ledger(ledger_url, WRITERS * batches * 3)


def test_concurrent_duplicates_are_stored_once(ledger_url: str) -> None:
    keys = 15

    def work(i: int, store: Storage) -> list[Any]:
        return [store.append([rec("step.intent", key=f"k{k}"), rec("step.done", key=f"k{k}", payload={"k": k})],
                             now_ms=k)[1] for k in range(keys)]

    results = in_threads(ledger_url, WRITERS, work)
    for k in range(keys):
        outcomes = [outcomes[k] for outcomes in results]
        assert sum(isinstance(o, Appended) for o in outcomes) == 1, outcomes
        assert sum(isinstance(o, Duplicate) for o in outcomes) == WRITERS - 1, outcomes
    assert_one_intact_ledger(ledger_url, keys * (WRITERS + 1))


def test_concurrent_claims_grant_each_lease_once(ledger_url: str) -> None:
    tasks = [f"t{n}" for n in range(12)]
    with open_storage(ledger_url) as store:
        store.append([rec("task.planned", key=t, task=t, payload={"sprint": "s"}) for t in tasks], now_ms=1)

    def work(i: int, store: Storage) -> list[tuple[str, Any]]:
        claims = []
        for t in tasks[i % len(tasks):] + tasks[:i % len(tasks)]:
            outcome = store.append([rec("task.assigned", actor=f"w{i}", task=t, epoch=1,
                                        payload={"worker": f"w{i}", "expires_ms": 9})], now_ms=2)[0]
            if isinstance(outcome, Appended):
                store.append([rec("task.finished", actor=f"w{i}", key=t, task=t, epoch=1)], now_ms=3)
            claims.append((t, outcome))
        return claims

    claims = [claim for result in in_threads(ledger_url, WRITERS, work) for claim in result]
    for t in tasks:
        outcomes = [o for task, o in claims if task == t]
        assert sum(isinstance(o, Appended) for o in outcomes) == 1
        assert all(isinstance(o.error, (errors.LeaseHeldError, errors.StaleEpochError))
                   for o in outcomes if isinstance(o, Refused))
    assert_one_intact_ledger(ledger_url, len(tasks) * 3)


def test_a_writer_continues_the_chain_another_writer_extended(ledger_url: str) -> None:
    with open_storage(ledger_url) as a, open_storage(ledger_url) as b:
        first = a.append([rec("decision", why="a1")], now_ms=1)[0]
        second = b.append([rec("decision", why="b1")], now_ms=2)[0]
        third = a.append([rec("decision", why="a2")], now_ms=3)[0]
    assert isinstance(first, Appended) and isinstance(second, Appended) and isinstance(third, Appended)
    assert second.record.prev_hash == first.record.hash
    assert (third.record.seq, third.record.prev_hash) == (3, second.record.hash)


def _append_in_process(url: str, worker: int, batches: int) -> int:
    with open_storage(url) as store:
        for b in range(batches):
            store.append([rec("step.intent", actor=f"p{worker}", key=f"p{worker}/{b}"),
                          rec("decision", actor=f"p{worker}", why=str(b))], now_ms=b)
    return worker


def test_concurrent_processes_keep_the_chain_intact(ledger_url: str) -> None:
    batches = 15
    with multiprocessing.get_context("spawn").Pool(4) as pool:
        done = pool.starmap(_append_in_process, [(ledger_url, w, batches) for w in range(4)])
    assert done == [0, 1, 2, 3]
    assert_one_intact_ledger(ledger_url, 4 * batches * 2)


# -- PostgreSQL's own ----------------------------------------------------------------------


@pytest.fixture
def pg(postgres_url: str) -> Iterator[Storage]:
    store = open_storage(postgres_url)
    store.append([rec("decision", why=f"n{i}", payload={"i": i}) for i in range(3)], now_ms=1)
    yield store
    store.close()


def _count(store: Storage) -> int:
    return len(list(store.read()))


def test_update_delete_and_truncate_are_refused_by_the_database(pg: Storage, postgres_url: str) -> None:
    for statement, verb in [("UPDATE records SET why = 'rewritten' WHERE seq = 2", "UPDATE"),
                            ("DELETE FROM records WHERE seq = 3", "DELETE"), ("TRUNCATE records", "TRUNCATE")]:
        with pytest.raises(errors.AppendOnlyViolation, match=f"{verb} refused"):
            pg.execute_raw(statement)  # type: ignore[attr-defined]
    with psycopg.connect(postgres_url, autocommit=True) as other:  # a client that bypasses fleetledger
        with pytest.raises(psycopg.errors.RestrictViolation):
            other.execute("DELETE FROM records")
    assert verify_records(pg.read()).ok and _count(pg) == 3


def test_sql_kind_lists_match_the_python_constants() -> None:
    unique = {"find_unique": postgres.Q["find_unique"], "unique_record": postgres.Q["unique_record"],
              "insert": postgres.Q["insert"].split("ON CONFLICT")[1]}
    for name, text in unique.items():
        assert {k for k in UNIQUE_KINDS if f"'{k}'" in text} == UNIQUE_KINDS, name
        assert text.count("'") // 2 == len(UNIQUE_KINDS), name
    lease_kinds = LEASE_END_KINDS | {"task.assigned"}
    events = postgres.Q["lease_state"].split("kind IN")[1].split(")")[0]  # the lease events: the partial index's kinds
    assert all(f"'{k}'" in events for k in lease_kinds) and events.count("'") // 2 == len(lease_kinds)
    for script in (postgres.Q["schema"], *postgres.MIGRATIONS):
        if "records_unique_key" in script:  # the scripts that create the partial indexes
            assert all(f"'{k}'" in script for k in UNIQUE_KINDS | lease_kinds)


def _terminate(url: str, pid: int) -> None:
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))


def test_a_connection_lost_mid_transaction_stores_nothing_and_the_next_append_reconnects(
        pg: Storage, postgres_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    pid = pg.execute_raw("SELECT pg_backend_pid()")[0][0]  # type: ignore[attr-defined]
    real_hit = faults.hit

    def cut(name: str) -> None:
        if name == "ledger.before_commit":
            _terminate(postgres_url, pid)
        real_hit(name)

    monkeypatch.setattr(faults, "hit", cut)
    with pytest.raises(errors.LedgerError, match="nothing of it was stored"):
        pg.append([rec("step.intent", key="k"), rec("step.done", key="k", payload={})], now_ms=2)
    monkeypatch.setattr(faults, "hit", real_hit)
    assert _count(pg) == 3
    again = pg.append([rec("step.intent", key="k"), rec("step.done", key="k", payload={})], now_ms=3)
    assert [o.record.seq for o in again] == [4, 5]  # type: ignore[union-attr]
    assert verify_records(pg.read()).ok


def test_a_connection_lost_between_appends_is_one_ledger_error_then_reconnects(pg: Storage, postgres_url: str) -> None:
    _terminate(postgres_url, pg.execute_raw("SELECT pg_backend_pid()")[0][0])  # type: ignore[attr-defined]
    with pytest.raises(errors.LedgerError):
        pg.append([rec("decision", why="first try")], now_ms=2)
    assert isinstance(pg.append([rec("decision", why="retry")], now_ms=3)[0], Appended)
    assert _count(pg) == 4 and verify_records(pg.read()).ok


def test_a_serialisation_failure_is_a_ledger_error_and_stores_nothing(pg: Storage, monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(name: str) -> None:
        if name == "ledger.before_commit":
            raise psycopg.errors.SerializationFailure("could not serialize access")

    monkeypatch.setattr(faults, "hit", fail)
    with pytest.raises(errors.LedgerError, match="could not serialize access"):
        pg.append([rec("decision", why="x")], now_ms=2)
    assert _count(pg) == 3


def test_a_held_ledger_lock_is_waited_for_a_bounded_time(postgres_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(postgres, "LOCK_TIMEOUT_MS", 200)
    with open_storage(postgres_url) as store, psycopg.connect(postgres_url) as holder:
        holder.execute(postgres.Q["lock"])  # another writer, stuck inside its transaction
        with pytest.raises(errors.LedgerError, match="lock timeout"):
            store.append([rec("decision")], now_ms=1)
        holder.rollback()
        assert isinstance(store.append([rec("decision")], now_ms=2)[0], Appended)
        assert [r.seq for r in store.read()] == [1]


def test_a_schema_changed_under_a_writer_stops_it(pg: Storage) -> None:
    pg.execute_raw("UPDATE meta SET value = '99' WHERE name = 'schema_version'")  # type: ignore[attr-defined]
    with pytest.raises(errors.LedgerError, match="changed to ledger schema 99"):
        pg.append([rec("decision")], now_ms=2)
    assert _count(pg) == 3


def test_reads_page_through_the_ledger(pg: Storage, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(postgres, "READ_PAGE", 2)
    pg.append([rec("decision", run_id="other"), *[rec("decision", why=str(i)) for i in range(4)]], now_ms=2)
    assert [r.seq for r in pg.read()] == list(range(1, 9))
    assert [r.seq for r in pg.read(RUN, after_seq=2)] == [3, 5, 6, 7, 8]
    assert pg.runs() == [(RUN, 1, 8, 7), ("other", 4, 4, 1)]


def test_the_recorded_url_has_no_password(postgres_url: str) -> None:
    assert postgres.public_url("postgresql://u:secret@h:5/db?password=secret&sslmode=require") == \
        "postgresql://u@h:5/db?sslmode=require"
    with open_storage(postgres_url) as store:
        assert store.url == postgres.public_url(postgres_url)
        password = urlsplit(postgres_url).password
        assert password is None or f":{password}@" not in store.url


def test_an_unreachable_server_is_a_ledger_error() -> None:
    with pytest.raises(errors.LedgerError, match="cannot connect to the ledger at postgresql://u@127.0.0.1:1/db"):
        open_storage("postgresql://u:secret@127.0.0.1:1/db")

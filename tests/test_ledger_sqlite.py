"""SQLite-specific ledger properties: the database itself refuses UPDATE and DELETE."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from fleetledger import errors
from fleetledger.ledger import NewRecord, open_storage
from fleetledger.leases import LEASE_END_KINDS
from fleetledger.ledger.records import UNIQUE_KINDS
from fleetledger.ledger.sqlite import Q
from fleetledger.verify import verify_records


def _ledger(tmp_path: Path):
    store = open_storage(f"sqlite:///{tmp_path / 'l.sqlite3'}")
    store.append([NewRecord(run_id="r", actor="coordinator", kind="decision", why=f"n{i}", payload={"i": i})
                  for i in range(3)], now_ms=1)
    return store


def test_update_and_delete_are_refused_by_the_database(tmp_path: Path) -> None:
    store = _ledger(tmp_path)
    with pytest.raises(errors.AppendOnlyViolation, match="UPDATE refused"):
        store.execute_raw("UPDATE records SET why = 'rewritten' WHERE seq = 2")
    with pytest.raises(errors.AppendOnlyViolation, match="DELETE refused"):
        store.execute_raw("DELETE FROM records WHERE seq = 3")
    store.close()
    # Another client, not going through fleetledger, is refused too.
    conn = sqlite3.connect(tmp_path / "l.sqlite3")
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute("DELETE FROM records")
    conn.close()


def test_verify_detects_an_edited_record(tmp_path: Path) -> None:
    _ledger(tmp_path).close()
    conn = sqlite3.connect(tmp_path / "l.sqlite3")
    conn.execute("DROP TRIGGER records_no_update")
    conn.execute("UPDATE records SET payload = '{\"i\":42}' WHERE seq = 2")
    conn.commit()
    conn.close()
    with open_storage(f"sqlite:///{tmp_path / 'l.sqlite3'}") as store:
        report = verify_records(store.read())
    assert not report.ok
    assert any("seq 2" in p and "edited" in p for p in report.problems)


def test_verify_detects_a_removed_record(tmp_path: Path) -> None:
    _ledger(tmp_path).close()
    conn = sqlite3.connect(tmp_path / "l.sqlite3")
    conn.execute("DROP TRIGGER records_no_delete")
    conn.execute("DELETE FROM records WHERE seq = 2")
    conn.commit()
    conn.close()
    with open_storage(f"sqlite:///{tmp_path / 'l.sqlite3'}") as store:
        problems = verify_records(store.read()).problems
    assert any("expected seq 2" in p for p in problems)
    assert any("prev_hash" in p for p in problems)


def test_wal_and_full_sync(tmp_path: Path) -> None:
    store = _ledger(tmp_path)
    assert store.execute_raw("PRAGMA journal_mode")[0][0] == "wal"
    assert store.execute_raw("PRAGMA synchronous")[0][0] == 2  # FULL


def test_sql_kind_lists_match_the_python_constants() -> None:
    for kind in UNIQUE_KINDS:
        assert f"'{kind}'" in Q["find_unique"] and f"'{kind}'" in Q["unique_record"]
    events = Q["lease_state"].split("AND (")[1].split(")")[0]  # the lease events: the partial index's kinds
    assert {k for k in LEASE_END_KINDS | {"task.assigned"} if f"'{k}'" in events} == LEASE_END_KINDS | {"task.assigned"}
    assert events.count("'") // 2 == len(LEASE_END_KINDS) + 1 and " ".join(events.split()) in " ".join(Q["schema"].split())
    assert Q["find_unique"].count("'") // 2 == Q["unique_record"].count("'") // 2 == len(UNIQUE_KINDS)


def test_the_queries_read_through_the_partial_indexes(tmp_path: Path) -> None:
    """A partial index serves a query only when the query repeats the index's condition
    (migration 3 wrote those conditions as OR chains, so the queries must say the same)."""
    with _ledger(tmp_path) as store:
        for name, params in (("find_unique", ("r", "k", "step.done")), ("unique_record", ("r", "k", "step.done")),
                             ("lease_state", {"run": "r", "task": "t"})):
            plan = " ".join(row[-1] for row in store.execute_raw("EXPLAIN QUERY PLAN " + Q[name], params))
            index = "records_lease_events" if name == "lease_state" else "records_unique_key"
            assert f"USING INDEX {index}" in plan, (name, plan)


def test_not_a_ledger_gives_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "junk.sqlite3"
    bad.write_bytes(b"this is not a database" * 100)
    with pytest.raises(errors.LedgerError, match="not a usable fleetledger ledger"):
        open_storage(f"sqlite:///{bad}")


def test_opening_waits_for_another_process_creating_the_ledger(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Regression (found as a failing run of four processes opening one new ledger): while
    another connection holds a write transaction on a database still in rollback-journal mode,
    SQLite refuses the switch to WAL at once, busy timeout or not, and the open failed with "not
    a usable fleetledger ledger ... move it aside". It now tries again until the lock is gone.
    Deterministic: the other writer commits only once the open has been refused and backs off."""
    import threading

    from fleetledger.ledger import sqlite as ledger_sqlite

    path = tmp_path / "ledger.sqlite3"
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("CREATE TABLE creating (x)")
    other.execute("BEGIN IMMEDIATE")
    other.execute("INSERT INTO creating VALUES (1)")
    refused = threading.Event()
    original = ledger_sqlite._backoff

    def backoff(seconds: float) -> None:
        refused.set()
        original(seconds)

    monkeypatch.setattr(ledger_sqlite, "_backoff", backoff)
    committer = threading.Thread(target=lambda: (refused.wait(30), other.execute("COMMIT")))
    committer.start()
    try:
        store = open_storage(f"sqlite:///{path}")
    finally:
        committer.join()
        other.close()
    assert refused.is_set()
    store.append([NewRecord(run_id="r", actor="coordinator", kind="decision", why="opened")], now_ms=1)
    assert [r.why for r in store.read()] == ["opened"]
    store.close()


def test_a_ledger_locked_past_the_busy_timeout_is_reported_as_in_use_not_damaged(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Regression: a ledger another process kept locked past the busy timeout was reported as
    "not a usable fleetledger ledger ... move it aside", advice that would set a healthy ledger
    aside. The error now says it is in use, and what to do."""
    from fleetledger.ledger import sqlite as ledger_sqlite

    monkeypatch.setattr(ledger_sqlite, "BUSY_TIMEOUT_MS", 200)
    path = tmp_path / "ledger.sqlite3"
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("CREATE TABLE creating (x)")
    other.execute("BEGIN IMMEDIATE")
    other.execute("INSERT INTO creating VALUES (1)")
    try:
        with pytest.raises(errors.LedgerError) as raised:
            open_storage(f"sqlite:///{path}")
    finally:
        other.execute("COMMIT")
        other.close()
    assert "is locked by another process" in str(raised.value) and "move it aside" not in str(raised.value)
    open_storage(f"sqlite:///{path}").close()  # once the other process is done, it opens

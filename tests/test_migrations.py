"""Schema versions and migrations, on every backend.

The key property: applying every migration in order to an empty database gives the same
schema (tables, columns, indexes, constraints, triggers, functions, privileges, the recorded
version) as a fresh install. Later migrations are simulated by adding to a backend's list.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import psycopg
import pytest
from click.testing import CliRunner

from fleetledger import errors
from fleetledger.cli import main
from fleetledger.ledger import NewRecord, backends, migrations, open_storage, postgres, sqlite
from fleetledger.ledger.storage import Duplicate
from fleetledger.verify import verify_records

EXTRA = "CREATE TABLE extra (x integer);\nINSERT INTO extra (x) VALUES (7);"


def backend(url: str) -> ModuleType:
    return sqlite if url.startswith("sqlite:") else postgres


def dump(url: str) -> dict[str, Any]:
    """The ledger's schema as comparable data, from ``sqlite_master`` or ``pg_catalog``."""
    if url.startswith("sqlite:"):
        return _sqlite_dump(Path(url[len("sqlite:///"):]))
    return _postgres_dump(url)


def _sqlite_dump(path: Path) -> dict[str, Any]:
    conn = sqlite3.connect(path)
    try:
        objects = [(kind, name, table, " ".join(text.split()) if text else None) for kind, name, table, text in
                   conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name")]
        columns = {name: conn.execute("SELECT * FROM pragma_table_xinfo(?)", (name,)).fetchall()
                   for kind, name, _, _ in objects if kind == "table"}
        meta = conn.execute("SELECT name, value FROM meta ORDER BY name").fetchall()
    finally:
        conn.close()
    return {"objects": objects, "columns": columns, "meta": meta}


_PG_CATALOG = {
    "relations": """SELECT c.relname, c.relkind, c.relpersistence, c.relacl::text FROM pg_class c
                    WHERE c.relnamespace = current_schema()::regnamespace ORDER BY 1""",
    "columns": """SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull,
                         pg_get_expr(d.adbin, d.adrelid), row_number() OVER (PARTITION BY c.oid ORDER BY a.attnum)
                  FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
                  LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
                  WHERE c.relnamespace = current_schema()::regnamespace AND a.attnum > 0 AND NOT a.attisdropped
                  ORDER BY 1, 6""",
    "indexes": """SELECT indexrelid::regclass::text, pg_get_indexdef(indexrelid) FROM pg_index i
                  JOIN pg_class c ON c.oid = i.indrelid
                  WHERE c.relnamespace = current_schema()::regnamespace ORDER BY 1""",
    "constraints": """SELECT conrelid::regclass::text, conname, contype, pg_get_constraintdef(oid) FROM pg_constraint
                      WHERE connamespace = current_schema()::regnamespace ORDER BY 1, 2""",
    "triggers": """SELECT tgname, pg_get_triggerdef(t.oid) FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
                   WHERE c.relnamespace = current_schema()::regnamespace AND NOT t.tgisinternal ORDER BY 1""",
    "functions": """SELECT proname, pg_get_functiondef(oid), proacl::text FROM pg_proc
                    WHERE pronamespace = current_schema()::regnamespace ORDER BY 1""",
    "rules": "SELECT tablename, rulename, definition FROM pg_rules WHERE schemaname = current_schema() ORDER BY 1, 2",
    "meta": "SELECT name, value FROM meta ORDER BY name",
}


def _postgres_dump(url: str) -> dict[str, Any]:
    with psycopg.connect(url) as conn:
        schema = conn.execute("SELECT current_schema()").fetchone()[0]
        return {part: [tuple(v.replace(f"{schema}.", "") if isinstance(v, str) else v for v in row)
                       for row in conn.execute(query).fetchall()]
                for part, query in _PG_CATALOG.items()}


def test_every_migration_in_order_gives_the_schema_of_a_fresh_install(new_ledger_url: Callable[[], str]) -> None:
    migrated, fresh = new_ledger_url(), new_ledger_url()
    newest = len(backend(migrated).MIGRATIONS)
    assert backends.upgrade(migrated) == (0, newest)
    open_storage(fresh).close()
    assert dump(migrated) == dump(fresh)
    assert dump(migrated)["meta"] == [("schema_version", str(newest))]
    with open_storage(migrated) as store:  # and the migrated ledger is a working ledger
        store.append([NewRecord(run_id="r", actor="coordinator", kind="run.started", key="r")], now_ms=1)
        assert verify_records(store.read()).ok


def test_upgrading_a_current_ledger_changes_nothing(ledger_url: str) -> None:
    with open_storage(ledger_url) as store:
        store.append([NewRecord(run_id="r", actor="coordinator", kind="decision", why="kept")], now_ms=1)
    before = dump(ledger_url)
    newest = len(backend(ledger_url).MIGRATIONS)
    assert backends.upgrade(ledger_url) == (newest, newest)
    assert dump(ledger_url) == before
    with open_storage(ledger_url) as store:
        assert [r.why for r in store.read()] == ["kept"]


def test_an_older_ledger_is_refused_until_upgraded(ledger_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with open_storage(ledger_url) as store:
        store.append([NewRecord(run_id="r", actor="coordinator", kind="decision", why="kept")], now_ms=1)
    module = backend(ledger_url)
    newest = len(module.MIGRATIONS)
    monkeypatch.setattr(module, "MIGRATIONS", (*module.MIGRATIONS, EXTRA))
    with pytest.raises(errors.LedgerError, match=f"schema {newest}, older .* run `fleetledger upgrade`"):
        open_storage(ledger_url)
    assert backends.upgrade(ledger_url) == (newest, newest + 1)
    with open_storage(ledger_url) as store:
        assert [r.why for r in store.read()] == ["kept"]
        assert store.execute_raw("SELECT x FROM extra") == [(7,)]  # type: ignore[attr-defined]
    assert dump(ledger_url)["meta"] == [("schema_version", str(newest + 1))]


def test_a_failing_migration_leaves_the_ledger_as_it_was(ledger_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    open_storage(ledger_url).close()
    before = dump(ledger_url)
    module = backend(ledger_url)
    monkeypatch.setattr(module, "MIGRATIONS", (*module.MIGRATIONS, EXTRA + "\nSELECT * FROM no_such_table;"))
    with pytest.raises(errors.LedgerError, match="no_such_table|no such table"):
        backends.upgrade(ledger_url)
    assert dump(ledger_url) == before


def test_a_newer_ledger_is_refused(ledger_url: str) -> None:
    with open_storage(ledger_url) as store:
        store.execute_raw("UPDATE meta SET value = '99' WHERE name = 'schema_version'")  # type: ignore[attr-defined]
    with pytest.raises(errors.LedgerError, match="schema 99, newer than this fleetledger's"):
        open_storage(ledger_url)
    with pytest.raises(errors.LedgerError, match="schema 99, newer"):
        backends.upgrade(ledger_url)


def test_the_upgrade_command(ledger_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    runner = CliRunner()
    open_storage(ledger_url).close()
    module = backend(ledger_url)
    newest = len(module.MIGRATIONS)
    result = runner.invoke(main, ["upgrade", "--ledger", ledger_url])
    assert result.exit_code == 0 and result.output == f"ledger schema {newest}: already current\n"
    assert "FLEETLEDGER_LEDGER" not in os.environ, "--ledger is for its command only (regression: it leaked into later ones)"
    monkeypatch.setattr(module, "MIGRATIONS", (*module.MIGRATIONS, EXTRA))
    result = runner.invoke(main, ["upgrade"], env={"FLEETLEDGER_LEDGER": ledger_url})
    assert result.exit_code == 0 and result.output == f"ledger schema {newest} -> {newest + 1}\n"


def test_the_upgrade_command_needs_a_ledger(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["upgrade", "--workspace", str(tmp_path / "none")])
    assert result.exit_code == 1 and "no ledger in" in result.output
    result = CliRunner().invoke(main, ["upgrade", "--ledger", "mysql://x"])
    assert result.exit_code == 2 and "unsupported ledger URL" in result.output


def test_migrations_are_numbered_without_gaps() -> None:
    assert migrations.ordered_migrations({"schema": "s", "migration_2": "b", "migration_1": "a"}) == ("a", "b")
    with pytest.raises(ValueError, match="without gaps"):
        migrations.ordered_migrations({"migration_1": "a", "migration_3": "c"})
    assert sqlite.MIGRATIONS[0] == sqlite.Q["migration_1"] and postgres.MIGRATIONS[0] == postgres.Q["migration_1"]


def test_a_sqlite_ledger_of_schema_2_keeps_its_records_and_its_idempotency_after_migration_3(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Migration 3 rebuilds the two partial indexes (their conditions as OR chains): a ledger
    written at schema 2 keeps every record, and a step already recorded is still found, not
    stored twice."""
    url = f"sqlite:///{tmp_path / 'l.sqlite3'}"
    monkeypatch.setattr(sqlite, "MIGRATIONS", sqlite.MIGRATIONS[:2])
    monkeypatch.setitem(sqlite.Q, "schema", "".join(sqlite.MIGRATIONS))
    intent = NewRecord(run_id="r", actor="w01", kind="step.intent", key="t/s@0", task="t")
    done = NewRecord(run_id="r", actor="w01", kind="step.done", key="t/s@0", task="t", payload={"v": 1})
    with open_storage(url) as store:
        store.append([NewRecord(run_id="r", actor="coordinator", kind="run.started", key="r"), intent, done], now_ms=1)
        assert "kind IN" in store.execute_raw(  # type: ignore[attr-defined]
            "SELECT sql FROM sqlite_master WHERE name = 'records_unique_key'")[0][0]
    monkeypatch.undo()
    with pytest.raises(errors.LedgerError, match="schema 2, older"):
        open_storage(url)
    assert backends.upgrade(url) == (2, 3)
    with open_storage(url) as store:
        assert [r.kind for r in store.read()] == ["run.started", "step.intent", "step.done"]
        again = store.append([done], now_ms=2)[0]
        assert isinstance(again, Duplicate) and again.seq == 3
        assert store.unique_record("r", "step.done", "t/s@0") is not None
        assert verify_records(store.read()).ok

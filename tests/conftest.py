"""Shared fixtures: a fresh ledger per test, for every storage backend.

The PostgreSQL backend needs a server: ``bash .ci/start-postgres`` starts one and writes its
URL to ``.cache/postgres-url``; export it as ``FLEETLEDGER_TEST_POSTGRES``. Each test gets a
schema of its own on that server, dropped afterwards. Without the variable, the PostgreSQL
tests fail (they are never skipped: a green run means both backends passed).
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

import psycopg
import pytest
from psycopg import sql

from fleetledger.ledger import Storage, open_storage

BACKENDS = ["sqlite", "postgres"]
POSTGRES_ENV = "FLEETLEDGER_TEST_POSTGRES"


@pytest.fixture(autouse=True)
def own_state_folder(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Gives each test a user state folder of its own (``XDG_STATE_HOME``, inherited by the
    processes it starts). Signed heads are kept there, keyed by the ledger's path; shared across
    tests, a head left by an earlier run at a reused temporary path made ``verify`` report that
    run's records as removed from this one."""
    folder = tmp_path_factory.mktemp("state")
    monkeypatch.setenv("XDG_STATE_HOME", str(folder))
    return folder


@pytest.fixture(scope="session")
def postgres_server() -> str:
    """The URL of the test PostgreSQL server (``FLEETLEDGER_TEST_POSTGRES``)."""
    url = os.environ.get(POSTGRES_ENV)
    if not url:
        pytest.fail(f"{POSTGRES_ENV} is not set, so the PostgreSQL tests cannot run: run `bash .ci/start-postgres` "
                    f"and `export {POSTGRES_ENV}=\"$(cat .cache/postgres-url)\"`", pytrace=False)
    return url


def in_schema(url: str, schema: str) -> str:
    """Returns ``url`` with the connection's search path set to ``schema`` alone."""
    parts = urlsplit(url)
    option = "options=" + quote(f"-csearch_path={schema}", safe="")
    query = f"{parts.query}&{option}" if parts.query else option
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, parts.fragment))


@pytest.fixture
def new_postgres_url(postgres_server: str) -> Iterator[Callable[[], str]]:
    """Makes fresh, empty schemas on the test server (one per call); drops them afterwards."""
    made: list[str] = []

    def make() -> str:
        schema = f"fl_test_{secrets.token_hex(6)}"
        with psycopg.connect(postgres_server, autocommit=True) as admin:
            admin.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
        made.append(schema)
        return in_schema(postgres_server, schema)

    yield make
    with psycopg.connect(postgres_server, autocommit=True) as admin:
        admin.execute("SET lock_timeout = '10s'")
        for schema in made:
            admin.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))


@pytest.fixture
def postgres_url(new_postgres_url: Callable[[], str]) -> str:
    """The URL of a fresh, empty schema on the test server (for PostgreSQL's own tests)."""
    return new_postgres_url()


@pytest.fixture(params=BACKENDS)
def new_ledger_url(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], str]:
    """Makes URLs of fresh, empty ledgers of each backend (one per call)."""
    if request.param == "sqlite":
        return lambda: f"sqlite:///{tmp_path / secrets.token_hex(4)}.sqlite3"
    assert request.param == "postgres", request.param
    return request.getfixturevalue("new_postgres_url")


@pytest.fixture
def ledger_url(new_ledger_url: Callable[[], str]) -> str:
    """The URL of a fresh, empty ledger of each backend."""
    return new_ledger_url()


@pytest.fixture
def storage(ledger_url: str) -> Iterator[Storage]:
    """A fresh, empty ledger of each backend (the contract tests run against all of them)."""
    store = open_storage(ledger_url)
    try:
        yield store
    finally:
        store.close()

"""Shared fixtures: a fresh ledger per test, for every storage backend."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from fleetledger.ledger import Storage, open_storage

BACKENDS = ["sqlite"]


@pytest.fixture(params=BACKENDS)
def storage(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Storage]:
    """A fresh, empty ledger of each backend (the contract tests run against all of them)."""
    if request.param == "sqlite":
        store = open_storage(f"sqlite:///{tmp_path / 'ledger.sqlite3'}")
    else:  # pragma: no cover - more backends come later
        raise AssertionError(request.param)
    try:
        yield store
    finally:
        store.close()

"""Which storage backend keeps a ledger, chosen from its URL.

The registry names each backend by module path; the module is imported only when a URL of its
scheme is opened (so a SQLite user never imports psycopg), and the backends, which import
``storage`` and ``migrations``, are never imported back by them.

A backend module provides a ``Storage`` class (named in its entry) and ``upgrade(target)``,
where ``target`` is what its entry says: the URL with its scheme cut off (SQLite: the path) or
the whole URL (PostgreSQL).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import errors

if TYPE_CHECKING:
    from .storage import Storage


@dataclass(frozen=True)
class Backend:
    """One storage backend.

    Attributes:
        prefixes: The URL prefixes it serves (``"sqlite:///"``).
        module: Its module path (``"fleetledger.ledger.sqlite"``).
        storage: The name of its ``Storage`` class in that module.
        strip_prefix: True when the backend is given the URL without its prefix (a path).
    """

    prefixes: tuple[str, ...]
    module: str
    storage: str
    strip_prefix: bool


BACKENDS: tuple[Backend, ...] = (
    Backend(("sqlite:///",), "fleetledger.ledger.sqlite", "SQLiteStorage", strip_prefix=True),
    Backend(("postgresql://", "postgres://"), "fleetledger.ledger.postgres", "PostgresStorage", strip_prefix=False),
)


def _find(url: str) -> tuple[Backend, str]:
    """Returns the backend that serves ``url`` and the target to give it.

    Raises:
        UsageError: no backend serves the URL's scheme.
    """
    for backend in BACKENDS:
        for prefix in backend.prefixes:
            if url.startswith(prefix):
                return backend, url[len(prefix):] if backend.strip_prefix else url
    raise errors.UsageError(f"unsupported ledger URL {url!r}: use sqlite:///PATH or postgresql://...")


def open_storage(url: str) -> Storage:
    """Opens the ledger at ``url``, creating it if needed.

    Args:
        url: ``sqlite:///relative/or/absolute/path.sqlite3`` (three slashes, then the path;
            four for an absolute path, as in SQLAlchemy), or ``postgresql://...`` (a libpq URL;
            the ledger lives in the first schema of the connection's search path).

    Returns:
        The backend for that URL.

    Raises:
        UsageError: the URL's scheme is not one fleetledger supports.
        LedgerError: the ledger cannot be opened (not a ledger, unreadable, unreachable, or of
            another schema version).
    """
    backend, target = _find(url)
    storage_class: type[Storage] = getattr(importlib.import_module(backend.module), backend.storage)
    return storage_class(target)


def upgrade(url: str) -> tuple[int, int]:
    """Migrates the ledger at ``url`` to the newest schema version, in one transaction.

    An empty database (or a missing SQLite file) is version 0 and gets every migration.

    Args:
        url: ``sqlite:///PATH`` or ``postgresql://...``, as for ``open_storage``.

    Returns:
        The versions before and after (equal when the ledger was already current).

    Raises:
        UsageError: the URL's scheme is not one fleetledger supports.
        LedgerError: the ledger cannot be reached, a migration failed (nothing of the upgrade
            is kept), or the ledger is newer than this fleetledger.
    """
    backend, target = _find(url)
    return importlib.import_module(backend.module).upgrade(target)

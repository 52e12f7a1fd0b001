"""Ledger schema versions, and the migrations that take a ledger from one to the next.

Each backend's SQL file (``sqlite.sql``, ``postgres.sql``) holds named queries (each after a
``-- name: NAME`` header), among them:

* ``schema``: a fresh install, at the newest version;
* ``migration_1``, ``migration_2``, ...: migration N takes a ledger from version N-1 to N, and
  migration 1 creates version 1 in an empty database. A released migration is never edited; a
  schema change is a new migration plus the same change in ``schema``, and
  ``tests/test_migrations.py`` proves that every migration applied in order gives the same
  schema as a fresh install.

A ledger's version is the ``schema_version`` row of its ``meta`` table (0: no ledger yet); the
newest version is the number of migrations. Opening a ledger installs ``schema`` into an empty
database, accepts a ledger at the newest version and refuses any other, saying what to do;
``backends.upgrade`` (the ``fleetledger upgrade`` command) applies the missing migrations, all in
one transaction, so a failing migration leaves the ledger as it was. This module imports no
backend: each backend passes in its schema access and its migrations (``migrate``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from importlib import resources
from typing import Protocol

from .. import errors

_MIGRATION = re.compile(r"migration_(\d+)")


def load_queries(filename: str) -> dict[str, str]:
    """Returns the named queries of one of this package's SQL files, by name, in file order.

    Args:
        filename: The file's name inside ``fleetledger/ledger`` (``sqlite.sql``).
    """
    text = resources.files(__package__).joinpath(filename).read_text(encoding="utf-8")
    queries: dict[str, str] = {}
    name = None
    for line in text.splitlines():
        if line.startswith("-- name: "):
            name = line[len("-- name: "):].strip()
            queries[name] = ""
        elif name is not None:
            queries[name] += line + "\n"
    return {key: value.strip() for key, value in queries.items()}


def ordered_migrations(queries: dict[str, str]) -> tuple[str, ...]:
    """Returns the scripts of ``migration_1`` .. ``migration_N`` from ``queries``, in order.

    Raises:
        ValueError: the numbers do not run 1, 2, ... N without a gap (a packaging mistake).
    """
    numbered = {int(m.group(1)): script for name, script in queries.items() if (m := _MIGRATION.fullmatch(name))}
    if sorted(numbered) != list(range(1, len(numbered) + 1)):
        raise ValueError(f"migrations must be numbered 1..N without gaps, found {sorted(numbered)}")
    return tuple(numbered[number] for number in range(1, len(numbered) + 1))


class Schema(Protocol):
    """A backend's access to one ledger's schema, inside a write transaction it holds."""

    def version(self) -> int:
        """Returns the ledger's schema version, 0 when the database holds no ledger."""

    def run(self, script: str) -> None:
        """Runs a script of one or more SQL statements."""

    def set_version(self, version: int) -> None:
        """Records the ledger's schema version."""


def install_or_check(db: Schema, schema: str, migrations: Sequence[str], where: str) -> None:
    """Installs a fresh ledger into an empty database, or checks that a ledger is current.

    Args:
        db: The database, inside a write transaction that serialises installs.
        schema: The backend's fresh-install script (at the newest version).
        migrations: The backend's migrations, in order (their number is the newest version).
        where: The ledger's path or URL, for messages.

    Raises:
        LedgerError: the ledger is at another version: an older one needs ``fleetledger
            upgrade``, a newer one a newer fleetledger.
    """
    version = db.version()
    if version == 0:
        db.run(schema)
        db.set_version(len(migrations))
    elif version < len(migrations):
        raise errors.LedgerError(
            f"{where} has ledger schema {version}, older than this fleetledger's {len(migrations)}; "
            "run `fleetledger upgrade` on it (with the same --workspace or --ledger) first", where=where)
    elif version > len(migrations):
        raise _newer(where, version, len(migrations))


def migrate(db: Schema, migrations: Sequence[str], where: str) -> tuple[int, int]:
    """Applies the migrations a ledger is missing, recording the version after each.

    Args:
        db: The database, inside the write transaction the whole upgrade runs in.
        migrations: The backend's migrations, in order.
        where: The ledger's path or URL, for messages.

    Returns:
        The versions before and after.

    Raises:
        LedgerError: the ledger is newer than this fleetledger, which cannot downgrade it.
    """
    before = db.version()
    if before > len(migrations):
        raise _newer(where, before, len(migrations))
    for number in range(before + 1, len(migrations) + 1):
        db.run(migrations[number - 1])
        db.set_version(number)
    return before, len(migrations)


def _newer(where: str, version: int, newest: int) -> errors.LedgerError:
    return errors.LedgerError(
        f"{where} has ledger schema {version}, newer than this fleetledger's {newest}; upgrade fleetledger",
        where=where)


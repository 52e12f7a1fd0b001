"""The ledger storage interface, and the append rules every backend shares.

A backend (``sqlite.py``, ``postgres.py``; ``backends.py`` picks one from the URL) implements a
handful of primitives that run inside one of its transactions (``Txn``). The rules that make the
ledger a ledger live here, once: fencing by lease epoch, idempotency keys (an equal duplicate is
a no-op, a different one a conflict), contiguous global sequence numbers and the per-run hash
chain. A whole batch is one transaction and one durable commit (group commit: many workers'
records share one fsync).

The shape follows DBOS's ``SystemDatabase`` (one interface, a backend picked from the URL) and
its transaction-inside / retry-outside split.
"""

from __future__ import annotations

import abc
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from .. import errors, faults
from . import records as rec
from ..leases import LeaseEvent, check_fence


@dataclass(frozen=True, slots=True)
class Appended:
    """The record was appended; ``record`` is its stored form."""

    record: rec.Record


@dataclass(frozen=True, slots=True)
class Duplicate:
    """An equal record with the same idempotency key was already stored at ``seq``: nothing added."""

    seq: int


@dataclass(frozen=True, slots=True)
class Refused:
    """The record was refused (stale epoch, held lease, conflicting result); nothing added."""

    error: errors.LedgerError


Outcome = Appended | Duplicate | Refused


class CachedLookups:
    """``Txn.run_head`` and ``Txn.lease_state`` for a backend's transaction, each looked up
    once and then answered from the backend's tail cache (``_cache.heads``, ``_cache.leases``),
    which the backend empties whenever another writer may have committed.

    A subclass sets ``_cache`` and implements ``_fetchone(name, params)``: the first row of its
    named query ``run_head`` (the run's last hash) or ``lease_state`` (kind and epoch of the
    task's last lease event), or None.
    """

    _cache: Any

    def _fetchone(self, name: str, params: tuple[Any, ...] | dict[str, Any]) -> Any:
        raise NotImplementedError

    def run_head(self, run_id: str) -> str | None:
        heads = self._cache.heads
        if run_id not in heads:
            row = self._fetchone("run_head", (run_id,))
            heads[run_id] = row[0] if row else None
        return heads[run_id]

    def lease_state(self, run_id: str, task: str) -> LeaseEvent | None:
        leases = self._cache.leases
        key = (run_id, task)
        if key not in leases:
            row = self._fetchone("lease_state", {"run": run_id, "task": task})
            leases[key] = LeaseEvent(row[0], row[1]) if row else None
        return leases[key]


class Txn(Protocol):
    """The primitives a backend offers inside one write transaction.

    Every primitive sees the records this transaction inserted so far (as SQL does on the
    transaction's own connection); a backend may answer from a cache that it keeps only while
    it is the ledger's only writer.
    """

    def last_seq(self) -> int:
        """Returns the highest sequence number in the ledger (0 when empty)."""

    def run_head(self, run_id: str) -> str | None:
        """Returns the hash of the run's last record, or None when the run has none."""

    def lease_state(self, run_id: str, task: str) -> LeaseEvent | None:
        """Returns the task's last lease event (assigned or ended) with its epoch, if any."""

    def insert(self, record: rec.Record) -> tuple[int, str] | None:
        """Inserts one sealed record.

        Returns:
            None when inserted; for a record of ``UNIQUE_KINDS`` whose (run, kind, key) is
            already stored, nothing is inserted and ``(seq, payload_json)`` of the stored one
            is returned (the database's unique index decides, so no lookup precedes inserts).
        """


class Storage(abc.ABC):
    """An append-only, hash-chained ledger store.

    Attributes:
        url: The ledger URL (``sqlite:///path``), recorded in the run-state file.
        shared: True when coordinators on other hosts may append to the same runs (PostgreSQL):
            a coordinator then folds every record appended after its last one, not only its own.
    """

    url: str
    shared: bool = False

    def append(self, batch: Sequence[rec.NewRecord], *, now_ms: int) -> list[Outcome]:
        """Appends a batch of records in one durable transaction.

        Records are checked in order; a refused or duplicate record does not stop the others.
        When this returns, every ``Appended`` record is durable (committed and synced).

        Args:
            batch: The records to append, in order.
            now_ms: The append time, epoch ms UTC, stamped on every appended record.

        Returns:
            One outcome per submitted record, in order.

        Raises:
            LedgerError: the storage failed (I/O error, disk full, locked for too long); the
                whole batch is then rolled back and nothing of it is stored.
        """
        if not batch:
            return []
        return self._run_txn(lambda txn: _apply(txn, batch, now_ms))

    @abc.abstractmethod
    def _run_txn(self, body):  # type: ignore[no-untyped-def]
        """Runs ``body(txn)`` in one write transaction, commits durably, returns its result."""

    @abc.abstractmethod
    def read(self, run_id: str | None = None, *, after_seq: int = 0) -> Iterator[rec.Record]:
        """Yields records in sequence order (read-only).

        Args:
            run_id: Only this run's records; all runs' when None.
            after_seq: Only records with ``seq`` greater than this.
        """

    @abc.abstractmethod
    def runs(self) -> list[tuple[str, int, int, int]]:
        """Returns ``(run_id, first_seq, last_seq, count)`` per run, oldest first (read-only;
        it counts every record: ``first_records`` lists the runs without reading them)."""

    @abc.abstractmethod
    def first_records(self) -> list[rec.Record]:
        """Returns the first record of every run, oldest run first (read-only; one index
        lookup per run, however long the ledger)."""

    @abc.abstractmethod
    def task_records(self, run_id: str, tasks: Sequence[str], *, kind: str | None = None) -> Iterator[rec.Record]:
        """Yields the run's records about any of ``tasks``, in sequence order (read-only; one
        index range per task, so the cost follows what is read, not the ledger's length).

        Args:
            run_id: The run.
            tasks: Task ids (the records' ``task`` field).
            kind: Only records of this kind (``task.planned`` for inputs, ``step.done`` for
                results, ``step.failed``, ``policy.denied``...); every kind when None.
        """

    @abc.abstractmethod
    def kind_records(self, kind: str, *, containing: str = "") -> Iterator[rec.Record]:
        """Yields every run's records of ``kind`` whose payload's canonical JSON text contains
        ``containing`` (every one when empty), newest first (read-only; one pass over the
        ledger, the text matched by the database: what ``reuse.Offers`` reads of earlier runs).
        """

    @abc.abstractmethod
    def latest_checkpoint(self, run_id: str) -> rec.Record | None:
        """Returns the run's last ``checkpoint`` record, or None (read-only; an index lookup)."""

    @abc.abstractmethod
    def unique_record(self, run_id: str, kind: str, key: str) -> rec.Record | None:
        """Returns the run's record of a ``UNIQUE_KINDS`` kind with this idempotency key, or
        None (read-only; an index lookup)."""

    def integrity_problems(self) -> list[str]:
        """Returns what the database's own consistency check finds (empty when sound; read-only).
        Backends without such a check return an empty list."""
        return []

    @abc.abstractmethod
    def close(self) -> None:
        """Releases the connection. Idempotent."""

    def __enter__(self) -> "Storage":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _apply(txn: Txn, batch: Sequence[rec.NewRecord], now_ms: int) -> list[Outcome]:
    outcomes: list[Outcome] = []
    for new in batch:
        if new.task is not None and new.epoch is not None:
            problem = check_fence(new, txn.lease_state(new.run_id, new.task))
            if problem is not None:
                outcomes.append(Refused(problem))
                continue
        head = txn.run_head(new.run_id) or rec.GENESIS_HASH
        if new.kind == "checkpoint" and new.payload.get("view", {}).get("last_hash", head) != head:
            outcomes.append(Refused(errors.StaleCheckpointError(
                f"checkpoint of run {new.run_id} was folded up to another record than the run's last one")))
            continue
        text = rec.canonical_json(new.payload) if new.payload_json is None else new.payload_json
        sealed = rec.seal(new, seq=txn.last_seq() + 1, ts_ms=now_ms,
                          prev_hash=head, payload_json=text)
        existing = txn.insert(sealed)
        if existing is None:
            outcomes.append(Appended(sealed))
        elif existing[1] == text:
            outcomes.append(Duplicate(existing[0]))
        else:
            outcomes.append(Refused(errors.ConflictingResultError(
                f"{new.kind} {new.key!r} already has a different result (seq {existing[0]}); "
                "the step is not deterministic, or its inputs changed since it was recorded",
                kind=new.kind, key=new.key, seq=existing[0])))
    faults.hit("ledger.before_commit")
    return outcomes


"""A ledger whose calls are retried while the storage fails for a while.

The coordinator reads and writes the ledger through this wrapper, so that a disk error, a lock
held too long, a dropped connection or a PostgreSQL restart costs a pause, not the session:
every call is retried with exponential backoff (50 ms doubling to 1 s) until it succeeds or the
retry window has passed since its first failure.

Retrying is safe because a failed call changed nothing: an append that raised was rolled back
as a whole, and reads change nothing. (One case is left to the ledger's own rules: a commit
whose acknowledgement was lost with the connection. Its retry finds the records there:
idempotency keys make it a no-op for results, and the fence refuses a second assignment.)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

from .. import errors
from . import records as rec
from .storage import Outcome, Storage

T = TypeVar("T")


class RetryingStorage(Storage):
    """Wraps a ``Storage``: the same calls, each retried while it raises ``LedgerError``.

    Reads (``read``, ``task_records``) are materialised in full before they are returned, so
    that a retry never yields a record twice.

    Args:
        inner: The storage to call.
        retry_s: Seconds after a call's first failure during which it is retried.
        sleep: Waits that many seconds (injectable for tests).

    Raises (from every call):
        LedgerError: the storage kept failing for ``retry_s`` seconds (the last error).
    """

    def __init__(self, inner: Storage, *, retry_s: float, sleep: Callable[[float], None] = time.sleep) -> None:
        self.inner = inner
        self.url = inner.url
        self.shared = inner.shared
        self.retry_s = retry_s
        self._sleep = sleep

    def _run_txn(self, body):  # type: ignore[no-untyped-def]
        return self.inner._run_txn(body)

    def _call(self, call: Callable[[], T]) -> T:
        started = time.monotonic()
        delay_s = 0.05
        while True:
            try:
                return call()
            except errors.LedgerError:
                if time.monotonic() - started + delay_s > self.retry_s:
                    raise
                self._sleep(delay_s)
                delay_s = min(1.0, delay_s * 2)

    def append(self, batch: Sequence[rec.NewRecord], *, now_ms: int) -> list[Outcome]:
        """``Storage.append``, retried."""
        return self._call(lambda: self.inner.append(batch, now_ms=now_ms))

    def read(self, run_id: str | None = None, *, after_seq: int = 0) -> Iterator[rec.Record]:
        """``Storage.read``, retried, read in full first."""
        return iter(self._call(lambda: list(self.inner.read(run_id, after_seq=after_seq))))

    def runs(self) -> list[tuple[str, int, int, int]]:
        """``Storage.runs``, retried."""
        return self._call(self.inner.runs)

    def first_records(self) -> list[rec.Record]:
        """``Storage.first_records``, retried."""
        return self._call(self.inner.first_records)

    def task_records(self, run_id: str, tasks: Sequence[str], *, kind: str | None = None) -> Iterator[rec.Record]:
        """``Storage.task_records``, retried, read in full first."""
        return iter(self._call(lambda: list(self.inner.task_records(run_id, tasks, kind=kind))))

    def kind_records(self, kind: str, *, containing: str = "") -> Iterator[rec.Record]:
        """``Storage.kind_records``, retried, read in full first."""
        return iter(self._call(lambda: list(self.inner.kind_records(kind, containing=containing))))

    def latest_checkpoint(self, run_id: str) -> rec.Record | None:
        """``Storage.latest_checkpoint``, retried."""
        return self._call(lambda: self.inner.latest_checkpoint(run_id))

    def unique_record(self, run_id: str, kind: str, key: str) -> rec.Record | None:
        """``Storage.unique_record``, retried."""
        return self._call(lambda: self.inner.unique_record(run_id, kind, key))

    def integrity_problems(self) -> list[str]:
        """``Storage.integrity_problems``, retried."""
        return self._call(self.inner.integrity_problems)

    def close(self) -> None:
        """Closes the wrapped storage."""
        self.inner.close()

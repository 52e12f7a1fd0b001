"""Reading a run back: its view from the latest checkpoint, and on demand what the view leaves in the ledger.

``load_view`` rebuilds a run's ``RunView`` from its latest ``checkpoint`` record and the records
after it, so status, audit, the hook, the watch and every start of the coordinator fold what
came after the last checkpoint, not the whole ledger. ``trust_checkpoints=False`` folds from the
first record instead (as ``verify`` does); both give the same view.

``RunReader`` pairs a view with its storage and reads, by task, what the compact view does not
hold: the inputs of planned tasks, the results and failures of their steps, and their policy
denials (``Storage.task_records``, an index lookup per task).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

from .jobs.base import TaskSpec
from .ledger.records import Record
from .ledger.storage import Storage
from .replay import CHECKPOINT_FORMAT, RunView

T = TypeVar("T")


def checkpoint_payload(view: RunView) -> dict[str, Any]:
    """Returns the payload of a ``checkpoint`` record of ``view`` (its fold state now)."""
    return {"format": CHECKPOINT_FORMAT, "view": view.to_json()}


def view_at(checkpoint: Record) -> RunView | None:
    """Returns the view a checkpoint record carries, or None when it cannot be used.

    A checkpoint is used only when it is of ``CHECKPOINT_FORMAT``, of its record's run, and
    folded exactly up to the record before it (its ``last_hash`` is the checkpoint's
    ``prev_hash``); a reader then applies the checkpoint record itself and what follows.
    """
    payload = checkpoint.payload
    if payload.get("format") != CHECKPOINT_FORMAT:
        return None
    try:
        view = RunView.from_json(payload["view"])
    except (KeyError, TypeError, ValueError):
        return None
    if view.run_id != checkpoint.run_id or view.last_hash != checkpoint.prev_hash or view.last_seq >= checkpoint.seq:
        return None
    return view


@dataclass(frozen=True, kw_only=True)
class Loaded:
    """A run rebuilt by ``load``.

    Attributes:
        view: The run's view at its last record.
        checkpoint_seq: The checkpoint record the fold started from, or None (from the first record).
        folded: Records folded after it (the cost of this load).
    """

    view: RunView
    checkpoint_seq: int | None
    folded: int


def load(storage: Storage, run_id: str, *, trust_checkpoints: bool = True) -> Loaded:
    """Folds a run from its latest usable checkpoint (read-only).

    Args:
        storage: The ledger.
        run_id: The run.
        trust_checkpoints: False folds every record from the first (what ``verify`` checks
            checkpoints against).

    Returns:
        The run's view (an empty one when the run has no records), and where its fold started.

    Raises:
        LedgerError: the ledger cannot be read.
    """
    checkpoint = storage.latest_checkpoint(run_id) if trust_checkpoints else None
    view = view_at(checkpoint) if checkpoint is not None else None
    if view is None:
        checkpoint, view = None, RunView(run_id=run_id)
    base = view.records
    for record in storage.read(run_id, after_seq=view.last_seq):
        view.apply(record)
    return Loaded(view=view, checkpoint_seq=checkpoint.seq if checkpoint is not None else None,
                  folded=view.records - base)


def load_view(storage: Storage, run_id: str, *, trust_checkpoints: bool = True) -> RunView:
    """Returns ``load(...).view``: the run folded from its latest usable checkpoint (read-only).

    Raises:
        LedgerError: the ledger cannot be read.
    """
    return load(storage, run_id, trust_checkpoints=trust_checkpoints).view


class RunReader:
    """A run as its readers see it: the compact ``view``, and reads of what it leaves in the ledger.

    Args:
        storage: The run's ledger (open while the reader is used).
        view: The run's view (read, never changed).
    """

    def __init__(self, storage: Storage, view: RunView) -> None:
        self.storage = storage
        self.view = view
        self._memo: dict[str, tuple[Hashable, Any]] = {}

    def memo(self, name: str, signature: Hashable, compute: Callable[[], T]) -> T:
        """Returns what ``compute()`` returned the last time this reader was asked for ``name``
        with an equal ``signature``, else computes it now. The signature must change whenever
        the records ``compute`` reads may have (a job derives it from the view: the tasks it
        reads and their step counts), since the view may be live (the coordinator keeps one
        reader per view). The value is shared between callers: read-only."""
        known = self._memo.get(name)
        if known is not None and known[0] == signature:
            return known[1]
        value = compute()
        self._memo[name] = (signature, value)
        return value

    def planned(self, task_ids: Iterable[str]) -> list[TaskSpec]:
        """Returns the tasks as planned (id, inputs, reason), in the order of ``task_ids``.

        Raises:
            KeyError: a task was never planned.
        """
        ids = list(task_ids)
        found = {r.task: TaskSpec(id=r.task, inputs=r.payload.get("inputs", {}), why=r.why)
                 for r in self._records(ids, "task.planned")}
        return [found[t] for t in ids]

    def step_results(self, task_ids: Iterable[str]) -> dict[str, dict[str, dict[str, Any]]]:
        """Returns ``{task: {step key: step.done payload}}`` (``name``, ``input_hash``,
        ``result``), the tasks in the order of ``task_ids``, each task's steps in the order
        they were recorded."""
        ids = list(task_ids)
        out: dict[str, dict[str, dict[str, Any]]] = {t: {} for t in ids}
        for r in self._records(ids, "step.done"):
            out[r.task][r.key] = r.payload
        return out

    def results(self, task_ids: Iterable[str]) -> Iterator[dict[str, Any]]:
        """Yields the ``result`` of every recorded step of the tasks, task by task in the order
        of ``task_ids``, each task's steps in the order they were recorded."""
        for steps in self.step_results(task_ids).values():
            for payload in steps.values():
                yield payload["result"]

    def step_failures(self, task_ids: Iterable[str]) -> list[Record]:
        """Returns the ``step.failed`` records of the tasks, oldest first."""
        return list(self._records(list(task_ids), "step.failed"))

    def denials(self, task_ids: Iterable[str]) -> list[Record]:
        """Returns the ``policy.denied`` records about the tasks, oldest first."""
        return list(self._records(list(task_ids), "policy.denied"))

    def history(self, task_ids: Iterable[str]) -> Iterator[Record]:
        """Yields every record about the tasks (any kind), oldest first."""
        return self._records(list(task_ids), None)

    def _records(self, task_ids: list[str], kind: str | None) -> Iterator[Record]:
        if not task_ids:
            return iter(())
        return self.storage.task_records(self.view.run_id, task_ids, kind=kind)

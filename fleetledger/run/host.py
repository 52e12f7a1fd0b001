"""The small interface a job's host-side code and ``effects`` get (``HostContext``): the run's
view and reader, its workspace and gate, the clock, and appends; and ``atomic``, the mark on
records that mean something only together."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..gate import Gate
from ..ledger import NewRecord, Outcome
from ..reader import RunReader
from ..replay import RunView
from ..workspace import Workspace

if TYPE_CHECKING:
    from ..coordinator import Coordinator


class HostContext:
    """What a job's host-side code (export) gets: the view and its reader, appends, and effects."""

    def __init__(self, coordinator: "Coordinator") -> None:
        self._c = coordinator

    @property
    def view(self) -> RunView:
        """The run view, current as of the last append."""
        return self._c.view

    @property
    def run(self) -> RunReader:
        """The run view with reads of what it leaves in the ledger (step results, inputs)."""
        return self._c.reader()

    @property
    def workspace(self) -> Workspace:
        """The run's workspace."""
        return self._c.workspace

    @property
    def gate(self) -> Gate:
        """The gate with the policy in force now."""
        return self._c.gate

    def now_ms(self) -> int:
        """The coordinator's clock: epoch ms UTC."""
        return self._c.clock()

    def append(self, records: Sequence[NewRecord]) -> list[Outcome]:
        """Appends coordinator records durably (see ``Coordinator.append``)."""
        return self._c.append(records)

    def record(self, kind: str, **fields: Any) -> list[Outcome]:
        """Appends one coordinator record of ``kind`` with ``fields`` (key, task, why, payload)."""
        return self._c.append([self._c.new_record(kind, **fields)])

    def effect(self, key: str, fn: Callable[[str], dict[str, Any]], *, reconcile: Callable[[str], dict[str, Any] | None] | None = None,
               idempotent: bool = False, kind: str = "effect", why: str = "", intent: dict[str, Any] | None = None) -> dict[str, Any]:
        """Performs an effect exactly once as seen from its target (see ``effects.perform``)."""
        from ..effects import perform

        return perform(self, key, fn, kind=kind, why=why or f"{kind} {key}", intent=intent, reconcile=reconcile,
                       idempotent=idempotent)


def atomic(records: list[NewRecord]) -> list[NewRecord]:
    """Marks records that mean something only together (a sprint's plan: its ``sprint.started``
    and every ``task.planned``; a session's first record and the upgrade decided with it): the
    first one's payload gets ``batch``, their number. SQLite commits them in one transaction
    anyway; the mark is for ``salvage``, which keeps a prefix of a damaged ledger and must not
    cut through them (a plan cut after its ``sprint.started`` would be a sprint with no tasks,
    finished at once). One record or none is returned as it is."""
    if len(records) < 2:
        return records
    return [replace(records[0], payload={**records[0].payload, "batch": len(records)}), *records[1:]]


"""Progress bars for a run on a terminal: one per sprint, fed from the run view (``rich``)."""

from __future__ import annotations

from typing import Any

from .replay import RunView


class ProgressBars:
    """Rich progress bars on stderr, one per sprint that has started, fed from the run view.

    Args:
        enabled: Show them; when False every method does nothing (and ``rich`` is not imported).

    Use as a context manager (the bars are shown inside it), calling ``update`` with each new view.
    """

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self._bars: dict[str, Any] = {}
        self._progress = None
        if enabled:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._progress = Progress(TextColumn("{task.description:<12}"), BarColumn(), MofNCompleteColumn(),
                                      TextColumn("tasks"), TimeElapsedColumn(), console=Console(stderr=True))

    def __enter__(self) -> "ProgressBars":
        if self._progress is not None:
            self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()

    def update(self, view: RunView) -> None:
        """Shows ``view``'s progress: a bar per sprint past ``pending``, ``done/total`` tasks (a
        sprint without tasks shows 1/1 once completed)."""
        if self._progress is None:
            return
        for sprint in view.sprints.values():
            if sprint.status == "pending":
                continue
            done, total = view.sprint_progress(sprint.id)
            if sprint.id not in self._bars:
                self._bars[sprint.id] = self._progress.add_task(sprint.id, total=max(total, 1))
            self._progress.update(self._bars[sprint.id], total=max(total, 1),
                                  completed=done if total else (1 if sprint.status == "completed" else 0))

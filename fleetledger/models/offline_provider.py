"""The offline analyst as a ``ModelProvider``: no network, no tokens, no cost."""

from __future__ import annotations

from ..jobs.scan.shapes import ModelRequest
from .provider import CallResult


class OfflineProvider:
    """Wraps ``OfflineAnalyst`` (program analysis on the Python AST) as a model provider."""

    name = "offline"
    runs_locally = True

    def __init__(self) -> None:
        from .offline import ANALYST_VERSION, OfflineAnalyst

        self.model = f"analyst-{ANALYST_VERSION}"
        self._analyst = OfflineAnalyst()

    def call(self, request: ModelRequest) -> CallResult:
        """Answers one request deterministically (see ``OfflineAnalyst.analyze``)."""
        return CallResult(answer=self._analyst.analyze(request))

    def close(self) -> None:
        """Nothing to release: the analyst holds no connection."""

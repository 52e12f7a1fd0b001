"""What every model provider shares: the ``ModelProvider`` interface and its ``CallResult``.

The providers (``offline_provider``, ``openai_provider``, ``anthropic_provider``) import these
from here, not from the package, which chooses among them (``get_provider``) and so must not be
imported back by them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from ..jobs.scan.shapes import ModelAnswer, ModelRequest


@dataclass(frozen=True, kw_only=True)
class CallResult:
    """One model call's answer and what it cost.

    Attributes:
        answer: The parsed answer.
        input_tokens, output_tokens: Tokens billed (0 for the offline analyst), over every
            attempt the call took (a malformed answer that was asked again is billed too).
        cost_usd: Price of the call in US dollars (0.0 offline, or when no price is configured).
        request: Summary of what was asked (prompt version, candidate, lines shown, prompt
            hash), recorded with ``model.call``; empty offline.
        attempts: Requests the call took (1 unless answers were malformed).
    """

    answer: ModelAnswer
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    request: dict[str, Any] = field(default_factory=dict)
    attempts: int = 1


class ModelProvider(Protocol):
    """A model that judges candidates.

    Attributes:
        name: Provider name, e.g. ``"offline"``.
        model: Model name, e.g. ``"analyst-1"``.
        runs_locally: True when the provider needs no network and no credentials, so it may
            run inside a worker (and its sandbox); False for paid APIs, which the coordinator
            calls on the host.
    """

    name: str
    model: str
    runs_locally: bool

    def call(self, request: ModelRequest) -> CallResult:
        """Answers one request (one HTTP request for a paid provider; the broker retries).

        Raises:
            ModelError: one of the kinds in ``fleetledger.models.failures``.
        """

    def close(self) -> None:
        """Releases the provider's connections (it makes no calls after this)."""

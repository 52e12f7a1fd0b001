"""The model seam: every investigation and revalidation goes through a ``ModelProvider``.

``offline`` (the default) is a deterministic program analyst that needs no network. Paid
providers plug in behind the same interface. Every call is a step: its request and answer are
recorded, and a recorded answer is handed back on resume instead of being asked again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from .. import errors
from ..jobs.scan.shapes import ModelAnswer, ModelRequest


@dataclass(frozen=True, kw_only=True)
class CallResult:
    """One model call's answer and what it cost.

    Attributes:
        answer: The parsed answer.
        input_tokens, output_tokens: Tokens billed (0 for the offline analyst).
        cost_usd: Price of the call in US dollars (0.0 offline).
    """

    answer: ModelAnswer
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0


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
        """Answers one request.

        Raises:
            QuotaExhausted: the provider's quota is used up (the run halts).
            ModelError: the call failed in a way retries did not fix.
        """


def get_provider(spec: str) -> ModelProvider:
    """Returns the provider named by ``spec`` (``"offline"`` or ``"offline:analyst-1"``).

    Raises:
        UsageError: the provider is unknown.
    """
    name, _, model = spec.partition(":")
    if name == "offline":
        from .offline_provider import OfflineProvider

        return OfflineProvider()
    raise errors.UsageError(f"unknown model provider {spec!r}; available: offline")

"""The model seam: every investigation and revalidation goes through a ``ModelProvider``.

``offline`` (the default) is a deterministic program analyst that needs no network; it runs
inside the workers. Paid providers (``openai:MODEL`` for any OpenAI-compatible endpoint,
``anthropic:MODEL``) plug in behind the same interface through their official SDKs; they need
credentials, so they run on the coordinator's host only (``runs_locally`` is False) and the
workers reach them through the coordinator (``fleetledger.model_broker``). Every call is a step:
its request and answer are recorded, and a recorded answer is handed back on resume instead of
being asked again.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from .. import errors
from ..jobs.scan.shapes import Candidate, ModelAnswer, ModelRequest
from .config import ModelConfig

PROVIDERS = ("offline", "openai", "anthropic")


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


@dataclass(frozen=True, kw_only=True)
class ModelSpec:
    """A parsed ``PROVIDER[:MODEL]`` spec: ``provider`` and ``model`` ("" when not given)."""

    provider: str
    model: str

    @property
    def runs_locally(self) -> bool:
        """True for the offline analyst, which runs inside the workers."""
        return self.provider == "offline"

    def __str__(self) -> str:
        return f"{self.provider}:{self.model}" if self.model else self.provider


def parse_spec(spec: str) -> ModelSpec:
    """Parses ``"offline"``, ``"openai:gpt-4o-mini"`` or ``"anthropic:claude-sonnet-4-5"``.

    Raises:
        UsageError: the provider is unknown, or a paid provider is given without a model.
    """
    name, _, model = spec.partition(":")
    if name not in PROVIDERS:
        raise errors.UsageError(f"unknown model provider {spec!r}; available: {', '.join(PROVIDERS)} "
                                "(e.g. --model openai:gpt-4o-mini)")
    if name != "offline" and not model:
        raise errors.UsageError(f"--model {spec!r} names no model; write {name}:MODEL")
    return ModelSpec(provider=name, model=model)


def get_provider(spec: str, config: ModelConfig | None = None, *, environ: Mapping[str, str] | None = None) -> ModelProvider:
    """Returns the provider named by ``spec``.

    A paid provider reads its key (and, when the configuration gives none, its base URL) from
    the environment of this process: call it on the coordinator's host only.

    Args:
        spec: ``"offline"``, ``"openai:MODEL"`` or ``"anthropic:MODEL"``.
        config: The ``ModelConfig`` (defaults when None).
        environ: Where keys are read (``os.environ`` when None).

    Raises:
        UsageError: the provider is unknown, or its key is not set.
    """
    parsed = parse_spec(spec)
    if parsed.provider == "offline":
        from .offline_provider import OfflineProvider

        return OfflineProvider()
    config = config or ModelConfig()
    env = os.environ if environ is None else environ
    settings = config.settings(parsed.provider)
    key = env.get(settings.api_key_env)
    if not key:
        raise errors.UsageError(f"{settings.api_key_env} is not set: the {parsed.provider} provider needs its key "
                                "in the coordinator's environment (any value for a local server that checks none)")
    base_url = settings.base_url or env.get(f"{parsed.provider.upper()}_BASE_URL") or None
    price = config.prices.get(str(parsed))
    if parsed.provider == "openai":
        from .openai_provider import OpenAIProvider

        return OpenAIProvider(parsed.model, settings=settings, api_key=key, base_url=base_url, price=price)
    from .anthropic_provider import AnthropicProvider

    return AnthropicProvider(parsed.model, settings=settings, api_key=key, base_url=base_url, price=price)


def request_to_json(request: ModelRequest) -> dict[str, Any]:
    """Returns a request as JSON-ready data (what a worker sends to the coordinator)."""
    return {"candidate": request.candidate.to_json(), "source": request.source, "brief": request.brief,
            "pass_name": request.pass_name, "prior": request.prior}


def request_from_json(data: Mapping[str, Any]) -> ModelRequest:
    """Builds a request from ``request_to_json`` output."""
    return ModelRequest(candidate=Candidate.from_json(data["candidate"]), source=data["source"], brief=data["brief"],
                        pass_name=data["pass_name"], prior=data.get("prior"))

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

import importlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .. import errors
from ..jobs.scan.shapes import Candidate, ModelRequest
from .config import ModelConfig
from .provider import CallResult, ModelProvider

#: Each provider's class, as ``module:Class``; imported when the provider is asked for (a paid
#: provider's SDK is imported only where it is used, the coordinator's host).
PROVIDER_CLASSES = {
    "offline": "fleetledger.models.offline_provider:OfflineProvider",
    "openai": "fleetledger.models.openai_provider:OpenAIProvider",
    "anthropic": "fleetledger.models.anthropic_provider:AnthropicProvider",
}
PROVIDERS = tuple(PROVIDER_CLASSES)

__all__ = ["PROVIDERS", "PROVIDER_CLASSES", "CallResult", "ModelProvider", "ModelSpec", "get_provider", "parse_spec",
           "request_from_json", "request_to_json"]


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
        return _provider_class(parsed.provider)()
    config = config or ModelConfig()
    env = os.environ if environ is None else environ
    settings = config.settings(parsed.provider)
    key = env.get(settings.api_key_env)
    if not key:
        raise errors.UsageError(f"{settings.api_key_env} is not set: the {parsed.provider} provider needs its key "
                                "in the coordinator's environment (any value for a local server that checks none)")
    base_url = settings.base_url or env.get(f"{parsed.provider.upper()}_BASE_URL") or None
    price = config.prices.get(str(parsed))
    return _provider_class(parsed.provider)(parsed.model, settings=settings, api_key=key, base_url=base_url, price=price)


def _provider_class(provider: str) -> Any:
    """Imports and returns the class of ``provider`` (a key of ``PROVIDER_CLASSES``)."""
    module, _, name = PROVIDER_CLASSES[provider].partition(":")
    return getattr(importlib.import_module(module), name)


def request_to_json(request: ModelRequest) -> dict[str, Any]:
    """Returns a request as JSON-ready data (what a worker sends to the coordinator)."""
    return {"candidate": request.candidate.to_json(), "source": request.source, "brief": request.brief,
            "pass_name": request.pass_name, "prior": request.prior}


def request_from_json(data: Mapping[str, Any]) -> ModelRequest:
    """Builds a request from ``request_to_json`` output."""
    return ModelRequest(candidate=Candidate.from_json(data["candidate"]), source=data["source"], brief=data["brief"],
                        pass_name=data["pass_name"], prior=data.get("prior"))

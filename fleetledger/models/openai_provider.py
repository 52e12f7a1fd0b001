"""OpenAI and every OpenAI-compatible endpoint (vLLM, Ollama, llama.cpp server) as a provider.

One ``call`` is one Chat Completions request through the official ``openai`` SDK, with the SDK's
own retries switched off (the broker retries, by kind). The answer is asked for with structured
outputs (``response_format`` ``json_schema``, strict) or, for servers without them, JSON mode.

Errors are classified from the SDK's exception classes and the HTTP body behind them: a 429
whose error code is ``insufficient_quota`` is an exhausted quota (the run halts), any other 429
a rate limit (waited out); 401/403/404 are refusals (the run halts); 5xx, 408, 409, timeouts and
dropped connections are transient; other 4xx reject this one request.
"""

from __future__ import annotations

import time
from typing import Any

import openai

from .. import errors
from ..jobs.scan.shapes import ModelRequest
from . import CallResult
from .config import Price, ProviderSettings
from .failures import (MalformedAnswer, ProviderQuotaExhausted, ProviderRefused, RateLimited, RequestRejected,
                       TransientModelError, reset_after_s)
from .prompts import ANSWER_SCHEMA, build_prompt, parse_answer

QUOTA_CODES = frozenset({"insufficient_quota", "billing_hard_limit_reached", "billing_not_active"})


class OpenAIProvider:
    """Chat Completions with a JSON answer.

    Args:
        model: Model name at the endpoint (``"gpt-4o-mini"``).
        settings: Endpoint settings (timeout, answer size, response format).
        api_key: The key (read from the environment by ``get_provider``).
        base_url: Endpoint, or None for the SDK's default.
        price: Price per million tokens, or None (cost 0).
    """

    name = "openai"
    runs_locally = False

    def __init__(self, model: str, *, settings: ProviderSettings, api_key: str, base_url: str | None,
                 price: Price | None) -> None:
        self.model = model
        self._settings = settings
        self._price = price
        self._client = openai.OpenAI(api_key=api_key, base_url=base_url, max_retries=0, timeout=settings.timeout_s)

    def _response_format(self) -> dict[str, Any]:
        if self._settings.response_format == "json_object":
            return {"type": "json_object"}
        return {"type": "json_schema", "json_schema": {"name": "verdict", "strict": True, "schema": ANSWER_SCHEMA}}

    def close(self) -> None:
        """Closes the SDK client's connections."""
        self._client.close()

    def call(self, request: ModelRequest) -> CallResult:
        """Asks the endpoint once.

        Raises:
            RateLimited, ProviderQuotaExhausted, ProviderRefused, TransientModelError,
            RequestRejected: the endpoint answered with an error (see the module docstring).
            MalformedAnswer: the answer is not a JSON object that follows the schema (its
                tokens are in ``input_tokens``/``output_tokens``).
        """
        prompt = build_prompt(request)
        try:
            completion = self._client.chat.completions.create(
                model=self.model, messages=[{"role": "system", "content": prompt.system},
                                            {"role": "user", "content": prompt.user}],
                response_format=self._response_format(),  # type: ignore[arg-type]
                max_completion_tokens=self._settings.max_output_tokens)
        except openai.APIError as exc:
            raise classify(exc) from exc
        usage = completion.usage
        tokens_in, tokens_out = (usage.prompt_tokens, usage.completion_tokens) if usage is not None else (0, 0)
        cost = self._price.cost_usd(tokens_in, tokens_out) if self._price is not None else 0.0
        message = completion.choices[0].message if completion.choices else None
        try:
            if message is not None and message.refusal:
                raise MalformedAnswer(f"the model refused: {message.refusal[:200]}")
            answer = parse_answer(message.content if message is not None else None)
        except MalformedAnswer as exc:
            raise MalformedAnswer(str(exc), input_tokens=tokens_in, output_tokens=tokens_out, cost_usd=cost) from exc
        return CallResult(answer=answer, input_tokens=tokens_in, output_tokens=tokens_out, cost_usd=cost,
                          request=prompt.summary)


def classify(exc: openai.APIError) -> errors.ModelError:
    """Maps an SDK error to a failure kind (``fleetledger.models.failures``)."""
    if isinstance(exc, openai.APIConnectionError):  # includes APITimeoutError
        return TransientModelError(f"openai: {exc.message}", provider="openai")
    if not isinstance(exc, openai.APIStatusError):
        return TransientModelError(f"openai: {exc.message}", provider="openai")
    status, code = exc.status_code, exc.code or exc.type
    headers, now_s = exc.response.headers, time.time()
    text = f"openai {status} {code or ''}: {exc.message}"[:500]
    facts = {"provider": "openai", "status": status, "code": code}
    if code in QUOTA_CODES or status == 402:
        return ProviderQuotaExhausted(text, reset_after_s=reset_after_s(headers, now_s=now_s), **facts)
    if isinstance(exc, openai.RateLimitError):
        return RateLimited(text, retry_after_s=reset_after_s(headers, now_s=now_s), **facts)
    if isinstance(exc, (openai.AuthenticationError, openai.PermissionDeniedError, openai.NotFoundError)):
        return ProviderRefused(text, **facts)
    if isinstance(exc, (openai.InternalServerError, openai.ConflictError)) or status == 408:
        return TransientModelError(text, **facts)
    return RequestRejected(text, **facts)

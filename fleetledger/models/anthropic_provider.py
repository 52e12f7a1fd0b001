"""Anthropic's Messages API as a provider.

One ``call`` is one Messages request through the official ``anthropic`` SDK, with the SDK's own
retries switched off (the broker retries, by kind). The answer is asked for as a forced tool
call whose input schema is the answer schema (tool use), so it arrives as a JSON object; a text
answer holding the JSON is accepted too.

Errors are classified by their content (``failures.classify``), in whichever envelope they
come: an HTTP error status, a 200 whose body is ``{"type": "error", "error": {...}}``, or that
object as the answer's text. Billing errors (402, ``billing_error``, the spend-limit codes, a
credit balance too low) are an exhausted quota (the run halts) whatever the status; any other
rate limit is waited out; authentication, permission and unknown-model errors are refusals (the
run halts); server errors, 529 overloaded, timeouts and dropped connections are transient;
other bad requests reject this one request.
"""

from __future__ import annotations

import time
from typing import Any

import anthropic

from .. import errors
from ..jobs.scan.shapes import ModelRequest
from .provider import CallResult
from .config import Price, ProviderSettings
from .failures import MalformedAnswer, TransientModelError, classify as classify_error, classify_object, error_object
from .passes import request_prompt

TOOL = "record_verdict"
FIX_TOOL = "record_patch"


class AnthropicProvider:
    """Messages with a forced tool call that carries the answer.

    Args:
        model: Model name (``"claude-sonnet-4-5"``).
        settings: Endpoint settings (timeout, answer size).
        api_key: The key (read from the environment by ``get_provider``).
        base_url: Endpoint, or None for the SDK's default.
        price: Price per million tokens, or None (cost 0).
    """

    name = "anthropic"
    runs_locally = False

    def __init__(self, model: str, *, settings: ProviderSettings, api_key: str, base_url: str | None,
                 price: Price | None) -> None:
        self.model = model
        self._settings = settings
        self._price = price
        self._client = anthropic.Anthropic(api_key=api_key, base_url=base_url, max_retries=0, timeout=settings.timeout_s)

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
        prompt, schema, parse = request_prompt(request)
        tool = TOOL if request.pass_name != "fix" else FIX_TOOL
        try:
            message = self._client.messages.create(
                model=self.model, max_tokens=self._settings.max_output_tokens, system=prompt.system,
                messages=[{"role": "user", "content": prompt.user}],
                tools=[{"name": tool, "description": "Record the verdict on the finding." if tool == TOOL
                        else "Record the patch for the finding.", "input_schema": schema}],
                tool_choice={"type": "tool", "name": tool})
        except anthropic.APIError as exc:
            raise classify(exc) from exc
        error = error_object({"type": message.type, **(getattr(message, "model_extra", None) or {})})
        if error is not None:  # a 200 whose body is an error object, not a message
            raise classify_object(error, provider="anthropic", envelope="body")
        tokens_in, tokens_out = message.usage.input_tokens, message.usage.output_tokens
        cost = self._price.cost_usd(tokens_in, tokens_out) if self._price is not None else 0.0
        raw: Any = None
        for block in message.content:
            if block.type == "tool_use" and block.name == tool:
                raw = block.input
                break
            if block.type == "text" and raw is None:
                raw = block.text
        try:
            error = error_object(raw)
            if error is not None:  # an upstream error passed through as the answer
                raise classify_object(error, provider="anthropic", envelope="text")
            answer = parse(raw)
        except MalformedAnswer as exc:
            raise MalformedAnswer(str(exc), input_tokens=tokens_in, output_tokens=tokens_out, cost_usd=cost) from exc
        return CallResult(answer=answer, input_tokens=tokens_in, output_tokens=tokens_out, cost_usd=cost,
                          request=prompt.summary)


def classify(exc: anthropic.APIError) -> errors.ModelError:
    """Maps an SDK error to a failure kind (``fleetledger.models.failures``), by its content."""
    if isinstance(exc, anthropic.APIConnectionError):  # includes APITimeoutError
        return TransientModelError(f"anthropic: {exc.message}", provider="anthropic", envelope="status")
    if not isinstance(exc, anthropic.APIStatusError):
        return TransientModelError(f"anthropic: {exc.message}", provider="anthropic", envelope="status")
    return classify_error(provider="anthropic", envelope="status", status=exc.status_code, kind=exc.type,
                          code=exc.error_code, message=exc.api_message or exc.message, headers=exc.response.headers,
                          now_s=time.time())

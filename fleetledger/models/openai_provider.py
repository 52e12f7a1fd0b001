"""OpenAI and every OpenAI-compatible endpoint (vLLM, Ollama, llama.cpp server) as a provider.

One ``call`` is one Chat Completions request through the official ``openai`` SDK, with the SDK's
own retries switched off (the broker retries, by kind). The answer is asked for with structured
outputs (``response_format`` ``json_schema``, strict) or, for servers without them, JSON mode.

Errors are classified by their content (``failures.classify``), in whichever envelope they
come: an HTTP error status, a 200 whose body is ``{"error": {...}}``, or that object as the
message text. ``insufficient_quota`` is an exhausted quota (the run halts) whatever the status,
any other 429 a rate limit (waited out); invalid keys and unknown models are refusals (the run
halts); server errors, timeouts and dropped connections are transient; other bad requests
reject this one request.
"""

from __future__ import annotations

import time
from typing import Any

import openai

from .. import errors
from ..jobs.scan.shapes import ModelRequest
from .provider import CallResult
from .config import Price, ProviderSettings
from .failures import MalformedAnswer, TransientModelError, classify as classify_error, classify_object, error_object
from .passes import request_prompt


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

    def _response_format(self, schema: dict[str, Any], name: str) -> dict[str, Any]:
        if self._settings.response_format == "json_object":
            return {"type": "json_object"}
        return {"type": "json_schema", "json_schema": {"name": name, "strict": True, "schema": schema}}

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
        try:
            completion = self._client.chat.completions.create(
                model=self.model, messages=[{"role": "system", "content": prompt.system},
                                            {"role": "user", "content": prompt.user}],
                response_format=self._response_format(schema, "patch" if request.pass_name == "fix" else "verdict"),  # type: ignore[arg-type]
                max_completion_tokens=self._settings.max_output_tokens)
        except openai.APIError as exc:
            raise classify(exc) from exc
        error = error_object(getattr(completion, "model_extra", None) or {})
        if error is not None:  # a 200 whose body is an error object, not a completion
            raise classify_object(error, provider="openai", envelope="body")
        usage = completion.usage
        tokens_in, tokens_out = (usage.prompt_tokens, usage.completion_tokens) if usage is not None else (0, 0)
        cost = self._price.cost_usd(tokens_in, tokens_out) if self._price is not None else 0.0
        message = completion.choices[0].message if completion.choices else None
        try:
            if message is not None and message.refusal:
                raise MalformedAnswer(f"the model refused: {message.refusal[:200]}")
            error = error_object(message.content) if message is not None else None
            if error is not None:  # an upstream error passed through as the message text
                raise classify_object(error, provider="openai", envelope="text")
            answer = parse(message.content if message is not None else None)
        except MalformedAnswer as exc:
            raise MalformedAnswer(str(exc), input_tokens=tokens_in, output_tokens=tokens_out, cost_usd=cost) from exc
        return CallResult(answer=answer, input_tokens=tokens_in, output_tokens=tokens_out, cost_usd=cost,
                          request=prompt.summary)


def classify(exc: openai.APIError) -> errors.ModelError:
    """Maps an SDK error to a failure kind (``fleetledger.models.failures``), by its content."""
    if isinstance(exc, openai.APIConnectionError):  # includes APITimeoutError
        return TransientModelError(f"openai: {exc.message}", provider="openai", envelope="status")
    if not isinstance(exc, openai.APIStatusError):
        return TransientModelError(f"openai: {exc.message}", provider="openai", envelope="status")
    return classify_error(provider="openai", envelope="status", status=exc.status_code, kind=exc.type, code=exc.code,
                          message=exc.message, headers=exc.response.headers, now_s=time.time())

"""How a model call fails, classified from the provider's own response.

Each provider maps its SDK's exceptions (and the HTTP status, body and headers behind them) to
one of these kinds; the broker (``fleetledger.model_broker``) and the coordinator act on the
kind, never on a provider's wording:

==========================  ===========================================  =======================
kind                        examples                                     what the run does
==========================  ===========================================  =======================
``RateLimited``             429 ``rate_limit_exceeded`` with retry-after  wait, retry; RUNNING
``ProviderQuotaExhausted``  429 ``insufficient_quota``, 402, Anthropic    no new calls; HALTED
                            ``billing_error`` or spend-limit codes        with the reset time
``ProviderRefused``         401, 403, 404 (unknown model)                 no new calls; HALTED
``TransientModelError``     5xx, 529 overloaded, 408, timeouts,           bounded retries, then
                            dropped connections                           the step fails
``RequestRejected``         other 4xx (e.g. the prompt is too long)       the step fails
``MalformedAnswer``         the answer does not follow the schema         bounded retries, then
                                                                          the step fails
``Withheld``                (no call made: the run is halting)            the task is handed back
==========================  ===========================================  =======================

The kind is read from the error's content first (its ``type``, ``code`` and message), the HTTP
status only when the content names nothing known, so one error is one kind whatever envelope
it arrives in (``classify``): an HTTP status with the provider's error body; a 200 whose body is
that error object instead of an answer (some OpenAI-compatible gateways); or the error object
as the model's message text (a proxy that passes an upstream error through as the completion,
``error_in_answer``). A model's text is untrusted: a repository can make the model write such
an object, which at worst halts the run (HALTED, resumable, with the reason); it never turns a
candidate into a finding or drops one.

Waits and resets come from the headers the providers send: ``retry-after-ms`` and
``retry-after`` (seconds or an HTTP date), OpenAI's ``x-ratelimit-reset-*`` (durations such as
``6m0s``) and Anthropic's ``anthropic-ratelimit-*-reset`` (RFC 3339 times).
"""

from __future__ import annotations

import datetime as dt
import email.utils
import json
import re
from collections.abc import Mapping
from typing import Any

from .. import errors


class RateLimited(errors.ModelError):
    """The provider asks to slow down (HTTP 429, a rate limit); the call is retried after the wait it names."""


class ProviderQuotaExhausted(errors.QuotaExhausted):
    """The provider's quota, credit or spend limit is used up; no new model calls are made and the run is HALTED until it resets."""


class ProviderRefused(errors.ModelError):
    """The provider refused the credentials or the model (authentication, permission, unknown model); the run is HALTED until the configuration is fixed."""


class TransientModelError(errors.ModelError):
    """The provider failed for a moment (server error, overload, timeout, dropped connection); the call is retried a few times."""


class RequestRejected(errors.ModelError):
    """The provider rejected this one request (for example, it is too long); the step fails."""


class MalformedAnswer(errors.ModelError):
    """The model's answer does not follow the answer schema; the call is retried a few times, then the step fails."""


class Withheld(errors.ModelError):
    """No model call was made: the run is halting, and no new calls start after a terminal error."""


_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_UNIT_S = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
_RESET_HEADERS = ("x-ratelimit-reset-requests", "x-ratelimit-reset-tokens",
                  "anthropic-ratelimit-requests-reset", "anthropic-ratelimit-tokens-reset",
                  "anthropic-ratelimit-input-tokens-reset", "anthropic-ratelimit-output-tokens-reset")


def _seconds_until(text: str, now_s: float) -> float | None:
    """Parses a header value into seconds from now: a number of seconds, a duration (``1h2m3s``,
    ``20ms``), an RFC 3339 time or an HTTP date; None when it is none of these."""
    text = text.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    parts = _DURATION.findall(text)
    if parts and "".join(n + u for n, u in parts) == text:
        return sum(float(n) * _UNIT_S[u] for n, u in parts)
    try:
        moment = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        try:
            moment = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError):
            return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.timezone.utc)
    return max(0.0, moment.timestamp() - now_s)


def retry_after_s(headers: Mapping[str, str], *, now_s: float) -> float | None:
    """Returns the wait the provider asks for before the next call, in seconds, or None.

    Args:
        headers: The response headers (case-insensitive mapping, as the SDKs give them).
        now_s: The current time, epoch seconds (for header values that are times).
    """
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    return _seconds_until(value, now_s) if value is not None else None


def reset_after_s(headers: Mapping[str, str], *, now_s: float) -> float | None:
    """Returns when an exhausted limit resets, in seconds from now, or None when the provider
    does not say: ``retry-after``, else the latest of the rate-limit reset headers."""
    wait = retry_after_s(headers, now_s=now_s)
    if wait is not None:
        return wait
    resets = [s for name in _RESET_HEADERS if (v := headers.get(name)) is not None
              and (s := _seconds_until(v, now_s)) is not None]
    return max(resets) if resets else None


# What each kind is named in the providers' error objects (``type`` or ``code``), as data.
QUOTA_CODES = frozenset({"insufficient_quota", "billing_hard_limit_reached", "billing_not_active", "billing_error",
                         "quota_exceeded", "contract_spend_limit_reached", "enforced_spend_limit_reached",
                         "linked_organization_spend_limit_reached", "linked_organization_billing_unavailable"})
QUOTA_MESSAGES = ("credit balance is too low", "exceeded your current quota")
RATE_LIMIT_CODES = frozenset({"rate_limit_exceeded", "rate_limit_error", "requests", "tokens", "too_many_requests"})
REFUSED_CODES = frozenset({"invalid_api_key", "authentication_error", "permission_error", "permission_denied",
                           "not_found_error", "model_not_found", "invalid_authentication", "unauthorized"})
TRANSIENT_CODES = frozenset({"server_error", "api_error", "overloaded_error", "timeout_error", "service_unavailable",
                             "internal_error"})
REJECTED_CODES = frozenset({"invalid_request_error", "request_too_large", "context_length_exceeded",
                            "string_above_max_length", "invalid_value", "bad_request"})
SIZE_CODES = frozenset({"context_length_exceeded", "request_too_large", "string_above_max_length"})
"""Bad requests that name the prompt's own size: the same request fails again, every time."""


def classify(*, provider: str, envelope: str, status: int | None, kind: str | None, code: str | None,
             message: str, headers: Mapping[str, str] | None = None, now_s: float = 0.0) -> errors.ModelError:
    """Returns the failure kind of one provider error, from its content first, then its status.

    Args:
        provider: ``"openai"`` or ``"anthropic"``.
        envelope: How it arrived: ``"status"`` (an HTTP error), ``"body"`` (an error object in a
            200) or ``"text"`` (an error object as the model's message text); kept in ``facts``.
        status: The HTTP status (200 for the last two envelopes), or None.
        kind, code: The error object's ``type`` and ``code`` (Anthropic's ``details.error_code``).
        message: Its message.
        headers: The response headers (waits and resets), or None.
        now_s: The current time, epoch seconds (for header values that are times).

    Returns:
        ``ProviderQuotaExhausted``, ``RateLimited``, ``ProviderRefused``, ``TransientModelError``
        or ``RequestRejected``; a 200 whose error names nothing known is transient.
    """
    names = {n for n in (kind, code) if n}
    text = f"{provider} {status if envelope == 'status' else f'{status} ({envelope})'} {code or kind or ''}: {message}"[:500]
    facts: dict[str, Any] = {"provider": provider, "status": status, "code": code or kind, "envelope": envelope}
    headers = headers or {}
    lowered = (message or "").lower()
    if names & QUOTA_CODES or any(m in lowered for m in QUOTA_MESSAGES) or status == 402:
        return ProviderQuotaExhausted(text, reset_after_s=reset_after_s(headers, now_s=now_s), **facts)
    if names & RATE_LIMIT_CODES or (status == 429 and not names & (REFUSED_CODES | TRANSIENT_CODES | REJECTED_CODES)):
        return RateLimited(text, retry_after_s=reset_after_s(headers, now_s=now_s), **facts)
    if names & REFUSED_CODES:
        return ProviderRefused(text, **facts)
    if names & TRANSIENT_CODES:
        return TransientModelError(text, **facts)
    if names & REJECTED_CODES:
        return RequestRejected(text, **facts)
    if status in (401, 403, 404):
        return ProviderRefused(text, **facts)
    if status is not None and (status >= 500 or status in (408, 409)):
        return TransientModelError(text, **facts)
    if status is not None and 400 <= status < 500:
        return RequestRejected(text, **facts)
    return TransientModelError(text, **facts)


def error_object(data: Any) -> dict[str, Any] | None:
    """Returns the error object a response body or an answer holds instead of an answer:
    ``{"error": {...}}`` (OpenAI), ``{"type": "error", "error": {...}}`` (Anthropic), or
    ``{"error": "text"}``; None when ``data`` is not one (an answer holds no ``error`` key).

    Args:
        data: A parsed JSON value, or text that may be one (a Markdown code fence allowed).
    """
    if isinstance(data, str):
        text = data.strip()
        if text.startswith("```"):
            text = text.split("\n", 1)[1] if "\n" in text else ""
            text = text.rsplit("```", 1)[0].strip()
        if not text.startswith("{") or '"error"' not in text:
            return None
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            return None
    if not isinstance(data, Mapping) or "error" not in data or "verdict" in data:
        return None
    error = data["error"]
    if isinstance(error, str):
        return {"message": error}
    if not isinstance(error, Mapping):
        return None
    return dict(error)


def classify_object(error: Mapping[str, Any], *, provider: str, envelope: str, headers: Mapping[str, str] | None = None,
                    now_s: float = 0.0) -> errors.ModelError:
    """Returns the failure kind of an error object found in a 200 body or an answer's text
    (``error_object``); see ``classify``. An object as text that names no kind and no code is
    a malformed answer (the model wrote it), one in a body a provider failure."""
    details = error.get("details") if isinstance(error.get("details"), Mapping) else {}
    kind = error.get("type") if isinstance(error.get("type"), str) else None
    code = error.get("code") if isinstance(error.get("code"), str) else details.get("error_code")
    code = code if isinstance(code, str) else None
    message = str(error.get("message") or "")[:300]
    status = error.get("status") if isinstance(error.get("status"), int) else None
    if envelope == "text" and not (kind or code or status):
        return MalformedAnswer(f"the answer is an error object, not a verdict: {message[:200]!r}")
    named = status if status is not None and status >= 400 else None
    if named is None:
        return classify(provider=provider, envelope=envelope, status=200, kind=kind, code=code, message=message,
                        headers=headers, now_s=now_s) if (kind or code) else \
            TransientModelError(f"{provider} 200 ({envelope}): {message}"[:500], provider=provider, status=200,
                                code=None, envelope=envelope)
    return classify(provider=provider, envelope=envelope, status=named, kind=kind, code=code, message=message,
                    headers=headers, now_s=now_s)

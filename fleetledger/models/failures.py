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

Waits and resets come from the headers the providers send: ``retry-after-ms`` and
``retry-after`` (seconds or an HTTP date), OpenAI's ``x-ratelimit-reset-*`` (durations such as
``6m0s``) and Anthropic's ``anthropic-ratelimit-*-reset`` (RFC 3339 times).
"""

from __future__ import annotations

import datetime as dt
import email.utils
import re
from collections.abc import Mapping

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

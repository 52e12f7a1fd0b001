"""Provider errors are classified by their content, whatever the envelope (issue 14 item 2).

An error reaches fleetledger in one of three envelopes: an HTTP status with the provider's error
body; a 200 whose body is that error object instead of an answer (some OpenAI-compatible
gateways); or the error JSON as the model's own message text (a proxy that passes an upstream
error through as the completion). Each class (quota, rate limit, authentication, bad request,
server error, malformed answer) is the same failure kind in every envelope, for the
OpenAI-compatible and the Anthropic protocols alike. The endpoint is ``ScriptedAPI`` (a real
socket), never a mocked client.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from e2e import normalized_sarif, records, sarif_differences
from fleetledger.coordinator import wall_clock_ms
from fleetledger.models.failures import (MalformedAnswer, ProviderQuotaExhausted, ProviderRefused, RateLimited,
                                         RequestRejected, TransientModelError)
from fleetledger.verify import verify_records
from test_models import (REQUEST, Asked, Reply, failure, handler_repo, keys, provider_for, scan, serve, success,
                         verdict)

__all__ = ["keys", "serve"]  # fixtures shared with test_models

# class -> per dialect: (HTTP status, error type, code, message)
ERRORS: dict[str, dict[str, tuple[int, str, str | None, str]]] = {
    "quota": {"openai": (429, "insufficient_quota", "insufficient_quota",
                         "You exceeded your current quota, please check your plan and billing details."),
              "anthropic": (400, "invalid_request_error", None,
                            "Your credit balance is too low to access the Anthropic API.")},
    "rate_limit": {"openai": (429, "requests", "rate_limit_exceeded", "Rate limit reached for requests."),
                   "anthropic": (429, "rate_limit_error", None, "Number of requests has exceeded your rate limit.")},
    "authentication": {"openai": (401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided."),
                       "anthropic": (401, "authentication_error", None, "invalid x-api-key")},
    "bad_request": {"openai": (400, "invalid_request_error", "context_length_exceeded",
                               "This model's maximum context length is 128000 tokens."),
                    "anthropic": (400, "invalid_request_error", None, "messages: text content blocks must be non-empty")},
    "server_error": {"openai": (500, "server_error", None, "The server had an error while processing your request."),
                     "anthropic": (529, "overloaded_error", None, "Overloaded")},
}
KINDS = {"quota": ProviderQuotaExhausted, "rate_limit": RateLimited, "authentication": ProviderRefused,
         "bad_request": RequestRejected, "server_error": TransientModelError}
ENVELOPES = ("status", "body", "text")


def error_body(dialect: str, kind: str, code: str | None, message: str) -> dict[str, Any]:
    """The provider's own error object: OpenAI ``{"error": {...}}``, Anthropic ``{"type": "error", ...}``."""
    return failure(dialect, 400, kind, message, code=code).body


def enveloped(dialect: str, error_class: str, envelope: str) -> Reply:
    """The error of ``error_class`` in ``envelope``: its HTTP status, a 200 carrying the error
    body, or a 200 answer whose message text is the error body."""
    status, kind, code, message = ERRORS[error_class][dialect]
    if envelope == "status":
        return failure(dialect, status, kind, message, code=code)
    body = error_body(dialect, kind, code, message)
    if envelope == "body":
        return Reply(status=200, body=body)
    return success(dialect, json.dumps(body))


@pytest.mark.parametrize("envelope", ENVELOPES)
@pytest.mark.parametrize("error_class", sorted(KINDS))
@pytest.mark.parametrize("dialect", ["openai", "anthropic"])
def test_each_error_class_is_one_kind_in_every_envelope(serve, dialect: str, error_class: str, envelope: str) -> None:
    api = serve(dialect, lambda asked: enveloped(dialect, error_class, envelope))
    with pytest.raises(KINDS[error_class]) as raised:
        provider_for(api).call(REQUEST)
    assert type(raised.value) is KINDS[error_class], f"{error_class} in a {envelope} envelope"
    assert raised.value.facts.get("provider") == dialect and raised.value.facts.get("envelope") == envelope
    assert api.calls == 1


@pytest.mark.parametrize("envelope", ["body", "text"])
@pytest.mark.parametrize("dialect", ["openai", "anthropic"])
def test_an_unrecognised_answer_is_still_malformed(serve, dialect: str, envelope: str) -> None:
    """A verdict-less JSON object is a malformed answer, not an error; an error object that names
    nothing known is a provider failure in a body, and a malformed answer as text."""
    answer = {"error": {"message": "something odd"}} if envelope == "body" else {"looks": "fine"}
    reply = Reply(status=200, body=answer if dialect == "openai" else {"type": "error", **answer}) \
        if envelope == "body" else success(dialect, json.dumps(answer))
    api = serve(dialect, lambda asked: reply)
    expected = TransientModelError if envelope == "body" else MalformedAnswer
    with pytest.raises(expected):
        provider_for(api).call(REQUEST)


FIVE_HOURS_MS = 5 * 3600 * 1000


def outputs(ws: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """findings.json and the SARIF log, without what differs between two runs of one scan."""
    data = json.loads((ws / "findings.json").read_text(encoding="utf-8"))
    data["run"].pop("run_id")
    data["run"].pop("started_utc")
    data["run"].pop("target")
    return data, normalized_sarif(ws / "findings.sarif")


@pytest.mark.parametrize("envelope", ENVELOPES)
@pytest.mark.parametrize("dialect", ["openai", "anthropic"])
def test_a_quota_error_in_any_envelope_halts_and_a_resume_after_the_reset_equals_an_uninterrupted_run(
        serve, tmp_path: Path, dialect: str, envelope: str) -> None:
    restored = {"now": False}
    refused: set[int] = set()

    def script(asked: Asked) -> Reply:
        if asked.n >= 3 and not restored["now"]:
            refused.add(asked.n)
            return enveloped(dialect, "quota", envelope)
        return success(dialect, verdict())

    api = serve(dialect, script)
    repo = handler_repo(tmp_path / "repo", folders=1, handlers=3)
    _, first = scan(api, repo, tmp_path / "ws", workers=1)

    assert first.exit_code == 75 and first.state == "HALTED", first.message
    assert "model quota exhausted" in first.message
    calls_at_halt = api.calls
    assert calls_at_halt == 3, "no new call after the quota error"
    halted = [r for r in records(tmp_path / "ws") if r.kind == "run.halted"][-1]
    assert halted.payload["kind"] == "model_quota" and halted.payload["envelope"] == envelope
    assert not json.loads((tmp_path / "ws" / "findings.json").read_text())["run"]["complete"]

    restored["now"] = True
    _, final = scan(api, repo, tmp_path / "ws", workers=1, clock=lambda: wall_clock_ms() + FIVE_HOURS_MS)
    assert final.exit_code == 0 and final.state == "JACKED_OUT", final.message
    answered = Counter(a.finding for a in api.asked if a.n not in refused)
    assert len(answered) == 6 and set(answered.values()) == {1}, "no finding was asked twice"

    reference = serve(dialect, lambda asked: success(dialect, verdict()))
    _, whole = scan(reference, repo, tmp_path / "ws-reference", workers=1)
    assert whole.exit_code == 0, whole.message
    resumed, uninterrupted = outputs(tmp_path / "ws"), outputs(tmp_path / "ws-reference")
    assert resumed[0] == uninterrupted[0]
    assert not sarif_differences(resumed[1], uninterrupted[1]), sarif_differences(resumed[1], uninterrupted[1])
    for ws in (tmp_path / "ws", tmp_path / "ws-reference"):
        assert verify_records(records(ws)).ok

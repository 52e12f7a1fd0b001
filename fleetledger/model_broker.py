"""The broker: paid model calls, made on the coordinator's host on behalf of the workers.

Credentials and the host's environment never enter a worker or its sandbox, so a provider that
does not run locally is called here. A worker sends ``{"op": "model", "key", "task", "epoch",
"request"}`` after its ``step.intent``; the coordinator hands back the recorded answer when a
``model.call`` for that step key exists, refuses when the run is halting or a budget is reached,
and otherwise submits a ``Ticket``. The broker's threads make the calls concurrently (the
coordinator's loop never waits on a provider) and retry by kind (``models.failures``):

* rate limits are waited out (the provider's retry-after), ``rate_limit_retries`` times; a wait
  longer than ``max_rate_limit_wait_s`` is treated like an exhausted quota, with its reset time;
* transient errors are tried ``transient_attempts`` times with a doubling backoff;
* malformed answers are asked again, ``malformed_attempts`` tries in all;
* an exhausted quota or a refusal is not retried, and after it ``stop()`` lets no thread start
  another request (waits end at once; requests already on the wire finish).

The coordinator collects ``Settled`` outcomes with ``drain()``, appends ``model.call`` (request
summary, answer, tokens, cost) under the step key, and only then answers the worker. The helper
functions below decide what an outcome means for the run (halts, budgets, resets).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

from . import errors
from .jobs.scan.shapes import ModelRequest
from .ledger.records import iso_utc
from .models.provider import CallResult, ModelProvider
from .models.config import RetryPolicy
from .models.failures import (MalformedAnswer, ProviderQuotaExhausted, ProviderRefused, RateLimited,
                              TransientModelError, Withheld)
from .policy import Policy


@dataclass(frozen=True, kw_only=True)
class Ticket:
    """One model call a worker asked for: its step ``key``, the ``task`` and lease ``epoch`` it
    was asked under, the ``worker`` id, and the ``request``."""

    key: str
    task: str
    epoch: int
    worker: str
    request: ModelRequest


@dataclass(frozen=True, kw_only=True)
class Settled:
    """How a ticket ended: ``result`` when answered, else ``error`` (a ``ModelError``)."""

    ticket: Ticket
    result: CallResult | None = None
    error: errors.ModelError | None = None


@dataclass(frozen=True, kw_only=True)
class Halt:
    """A reason to halt the run: ``kind`` (recorded), ``reason`` (for the person), ``extra``
    facts for the ``run.halted`` payload (figures, reset time)."""

    kind: str
    reason: str
    extra: dict[str, Any] = field(default_factory=dict)


class ModelBroker:
    """A small thread pool that makes one provider's calls.

    Args:
        provider: The host-side provider.
        retry: How calls are retried.
        threads: Calls made at the same time (one per worker is enough).
    """

    def __init__(self, provider: ModelProvider, *, retry: RetryPolicy, threads: int) -> None:
        self.provider = provider
        self.retry = retry
        self._pool = ThreadPoolExecutor(max_workers=max(1, threads), thread_name_prefix="model-call")
        self._settled: queue.SimpleQueue[Settled] = queue.SimpleQueue()
        self._stopping = threading.Event()
        self._in_flight = 0

    @property
    def spec(self) -> str:
        """``provider:model``, as the policy and the job name it."""
        return f"{self.provider.name}:{self.provider.model}"

    @property
    def busy(self) -> bool:
        """True while a submitted ticket has not been drained."""
        return self._in_flight > 0

    def submit(self, ticket: Ticket) -> None:
        """Queues a call (from the coordinator's thread); its outcome comes out of ``drain``."""
        self._in_flight += 1
        self._pool.submit(self._run, ticket)

    def drain(self) -> list[Settled]:
        """Returns the outcomes settled since the last drain, without waiting."""
        out: list[Settled] = []
        while True:
            try:
                out.append(self._settled.get_nowait())
            except queue.Empty:
                break
        self._in_flight -= len(out)
        return out

    def stop(self) -> None:
        """No new requests from now on: waiting calls and queued tickets end as ``Withheld``."""
        self._stopping.set()

    def close(self) -> None:
        """Stops, lets a request still on the wire return (its answer is dropped), and closes
        the provider's connections."""
        self.stop()
        self._pool.shutdown(wait=True, cancel_futures=True)
        self.provider.close()

    def _run(self, ticket: Ticket) -> None:
        try:
            outcome = Settled(ticket=ticket, result=self.call(ticket.request))
        except errors.ModelError as exc:
            outcome = Settled(ticket=ticket, error=exc)
        except Exception as exc:  # noqa: BLE001 - an SDK bug must not lose the ticket
            outcome = Settled(ticket=ticket, error=TransientModelError(f"{type(exc).__name__}: {exc}"[:500]))
        self._settled.put(outcome)

    def call(self, request: ModelRequest) -> CallResult:
        """Calls the provider until an answer or a failure that retries do not fix (in the
        calling thread; the pool's threads run this for submitted tickets).

        Returns:
            The answer, with the tokens and cost of every try (malformed answers are billed).

        Raises:
            ModelError: the call failed (the kinds of ``models.failures``).
        """
        transient = rate_limited = malformed = 0
        spent = (0, 0, 0.0)
        while True:
            if self._stopping.is_set():
                raise Withheld("no new model calls: the run is halting")
            try:
                result = self.provider.call(request)
                return replace(result, input_tokens=result.input_tokens + spent[0],
                               output_tokens=result.output_tokens + spent[1], cost_usd=result.cost_usd + spent[2],
                               attempts=malformed + 1)
            except RateLimited as exc:
                wait_s = exc.facts.get("retry_after_s")
                wait_s = self.retry.backoff_s * 2 ** min(rate_limited, 6) if wait_s is None else wait_s
                if wait_s > self.retry.max_rate_limit_wait_s:
                    raise ProviderQuotaExhausted(f"{exc} (the limit resets in {wait_s:.0f} s, longer than "
                                                 f"max_rate_limit_wait_s {self.retry.max_rate_limit_wait_s:g})",
                                                 **{**exc.facts, "reset_after_s": wait_s}) from exc
                rate_limited += 1
                if rate_limited > self.retry.rate_limit_retries:
                    raise TransientModelError(f"still rate limited after {rate_limited - 1} waits: {exc}") from exc
            except TransientModelError as exc:
                transient += 1
                if transient >= self.retry.transient_attempts:
                    raise TransientModelError(f"{exc} (after {transient} tries)", **exc.facts) from exc
                wait_s = self.retry.backoff_s * 2 ** (transient - 1)
            except MalformedAnswer as exc:
                spent = (spent[0] + exc.facts.get("input_tokens", 0), spent[1] + exc.facts.get("output_tokens", 0),
                         spent[2] + exc.facts.get("cost_usd", 0.0))
                malformed += 1
                if malformed >= self.retry.malformed_attempts:
                    raise MalformedAnswer(f"{exc} (after {malformed} tries)", input_tokens=spent[0],
                                          output_tokens=spent[1], cost_usd=spent[2]) from exc
                continue
            self._stopping.wait(wait_s)


def call_payload(spec: str, ticket: Ticket, result: CallResult) -> dict[str, Any]:
    """The ``model.call`` payload of an answered ticket: request summary, answer, spend."""
    provider, _, model = spec.partition(":")
    return {"provider": provider, "model": model, "pass": ticket.request.pass_name, "request": result.request,
            "input_tokens": result.input_tokens, "output_tokens": result.output_tokens, "cost_usd": result.cost_usd,
            "attempts": result.attempts, "answer": result.answer.to_json()}


def malformed_spend(ticket: Ticket, error: errors.ModelError) -> dict[str, Any] | None:
    """The payload that records what malformed answers cost (they are billed), or None when
    the error billed nothing."""
    if not isinstance(error, MalformedAnswer) or not error.facts.get("input_tokens"):
        return None
    return {"step_key": ticket.key, "pass": ticket.request.pass_name, "answer": None, "error": str(error)[:500],
            **{k: error.facts.get(k, 0) for k in ("input_tokens", "output_tokens", "cost_usd")}}


def halt_for(error: errors.ModelError, *, spec: str, now_ms: int) -> Halt | None:
    """Says whether a failed call halts the run (an exhausted quota, a refusal), and how.

    Args:
        error: What the call raised.
        spec: The model (``openai:gpt-4o-mini``), for the reason.
        now_ms: The coordinator's clock, epoch ms UTC (a reset is recorded as a time).
    """
    facts = {k: error.facts[k] for k in ("provider", "status", "code", "envelope")
             if error.facts.get(k) is not None}
    if isinstance(error, ProviderQuotaExhausted):
        reset_s = error.facts.get("reset_after_s")
        if reset_s is None:
            when = "the provider gives no reset time; run the same command once the quota is restored"
        else:
            reset_ms = now_ms + int(reset_s * 1000)
            facts.update(reset_ms=reset_ms, reset_at=iso_utc(reset_ms))
            when = f"it resets at {iso_utc(reset_ms)}; run the same command after that"
        return Halt(kind="model_quota", reason=f"model quota exhausted at {spec}: {error}; {when}", extra=facts)
    if isinstance(error, ProviderRefused):
        return Halt(kind="model_refused", reason=f"{spec} refused the call: {error}; fix the key, the permission or "
                    "the model name, then `fleetledger resume`", extra=facts)
    return None


def _budgets(policy: Policy, spend: Mapping[str, float]) -> Iterable[tuple[str, float | None, float]]:
    yield "max_input_tokens", policy.max_input_tokens, spend["input_tokens"]
    yield "max_output_tokens", policy.max_output_tokens, spend["output_tokens"]
    yield "max_cost_usd", policy.max_cost_usd, spend["cost_usd"]


def budget_halt(policy: Policy, spend: Mapping[str, float]) -> Halt | None:
    """Returns the halt for the first token or cost budget of the policy that the run's spend
    (``RunView.model``) has reached, or None. (The calls budget, ``max_model_calls``, is held
    by the coordinator's call reservations.)"""
    for name, limit, spent in _budgets(policy, spend):
        if limit is not None and spent >= limit:
            return Halt(kind="budget", reason=f"budget {name} reached: spent {_figure(name, spent)} of "
                        f"{_figure(name, limit)} ({describe_spend(spend)}); raise {name} in the policy and run the "
                        "same command to continue",
                        extra={"budget": name, "limit": limit, "spent": spent, "spend": dict(spend)})
    return None


def _figure(name: str, value: float) -> str:
    return f"${value:.4f}" if name.endswith("_usd") else f"{int(value):,} tokens"


def describe_spend(spend: Mapping[str, float]) -> str:
    """Says what the run spent on models: ``"12 calls, 3,400 input tokens, 800 output tokens, $0.0021"``."""
    return (f"{int(spend['calls'])} calls, {int(spend['input_tokens']):,} input tokens, "
            f"{int(spend['output_tokens']):,} output tokens, ${spend['cost_usd']:.4f}")


def before_reset(halt: Mapping[str, Any] | None, now_ms: int) -> str | None:
    """Returns why a HALTED run must stay halted because its provider's limit has not reset
    yet (``halt`` is the ``run.halted`` payload), or None when it may resume."""
    reset_ms = (halt or {}).get("reset_ms")
    if reset_ms is None or now_ms >= reset_ms:
        return None
    left_min = (reset_ms - now_ms + 59_999) // 60_000
    return (f"the model quota resets at {iso_utc(reset_ms)} (in {left_min // 60} h {left_min % 60} min); "
            "nothing was spent; run the same command after that")


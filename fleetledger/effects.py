"""Effects: actions whose result lives outside the ledger, done exactly once as seen from outside.

``perform`` records ``effect.intent`` with the idempotency key and commits it durably *before*
the effect starts (write-ahead), then runs it, then records ``effect.done``. On a later start an
intent without ``effect.done`` is uncertain: ``reconcile(key)`` asks the target whether it
happened; an effect declared idempotent is repeated with the same key; anything else halts the
run and names the effect, because only a person can say whether it happened.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from . import errors, faults
from .gate import Action
from .ledger import Appended, Duplicate

if TYPE_CHECKING:
    from .coordinator import HostContext


class EffectUncertain(errors.FleetledgerError):
    """An effect was started but its result was never recorded, and it can neither be reconciled nor safely repeated; a person must check its target, then record the outcome or approve a retry."""

    exit_code = 75


class EffectDenied(errors.FleetledgerError):
    """The policy does not allow this effect now; it did not happen."""

    exit_code = 75


def perform(host: "HostContext", key: str, fn: Callable[[str], dict[str, Any]], *, kind: str, why: str,
            intent: dict[str, Any] | None = None, reconcile: Callable[[str], dict[str, Any] | None] | None = None,
            idempotent: bool = False, attempts: int = 3, backoff_s: float = 0.2) -> dict[str, Any]:
    """Performs an effect at most once per idempotency key, as far as its target can tell.

    The order is: gate check, ``effect.intent`` committed durably, ``fn(key)``, ``effect.done``.
    An intent found without a result (a crash in between), an attempt that raised (the target
    may have acted and then failed to answer), or any effect of a run that lost records to
    damage (``salvage``: its intent and result may be among them) is uncertain, and is settled by
    ``reconcile`` when given, else by repeating ``fn`` with the same key when the effect is
    idempotent, else by a person (``EffectUncertain``).

    Args:
        host: The coordinator's host context (appends, view, gate).
        key: Idempotency key; the same key is handed to ``fn`` on every attempt, and a target
            that deduplicates by it (an ``Idempotency-Key`` header) acts once.
        fn: Does the effect given the key; returns its result (JSON-ready), e.g. what it created.
        kind: Effect kind, checked by the gate (``policy.approval_required``).
        why: The reason, recorded with the intent.
        intent: Facts recorded with the intent (what is about to be done).
        reconcile: Asks the target whether the effect with ``key`` happened: returns its result
            if it did, None if it did not.
        idempotent: Repeating ``fn`` with the same key is harmless (the target deduplicates).
        attempts: Tries of ``fn`` in this call when an attempt raises and the effect may be
            repeated (idempotent, or reconciled as not done).
        backoff_s: Seconds before the second try, doubled for each further one.

    Returns:
        The effect's result: recorded, reconciled, or new.

    Raises:
        EffectDenied: the gate denies the effect now (the denial is recorded).
        EffectUncertain: the outcome of an earlier or failed attempt is unknown and cannot be
            settled here; the run must halt and name the effect.
        LedgerError: the intent or the result could not be recorded.
    """
    recorded = host.view.effects.get(key)
    if recorded is not None and recorded.get("done") is not None:
        return recorded["done"]
    decision = host.gate.check(Action(kind="effect", target=kind, detail={"key": key}))
    if not decision.allowed and not _approved(host, kind, key):
        host.record("policy.denied", key=key, why=decision.rule, payload={"action": "effect", "target": kind, "key": key})
        raise EffectDenied(f"effect {kind} {key!r} denied: {decision.rule}; approve it with `fleetledger approve`",
                           key=key)
    if recorded is not None:
        settled = _settle(host, key, kind, reconcile, idempotent, "its intent is recorded but its result is not")
        if settled is not None:
            return settled
    else:
        outcome = host.record("effect.intent", key=key, why=why, payload={"kind": kind, **(intent or {})})[0]
        if not isinstance(outcome, (Appended, Duplicate)):
            raise errors.LedgerError(f"effect intent for {key!r} was refused: {outcome}")
        if host.view.salvaged:  # records of the run were lost to damage: this effect's may be among them
            settled = _settle(host, key, kind, reconcile, idempotent,
                              "`fleetledger salvage` could not keep every record of this run, so it may have happened")
            if settled is not None:
                return settled
    delay_s = backoff_s
    for attempt in range(1, attempts + 1):
        faults.hit("effect.after_intent")
        try:
            result = fn(key)
        except Exception as exc:  # noqa: BLE001 - the target's failure is recorded, then settled
            host.record("effect.failed", key=key, why=f"attempt {attempt}: {type(exc).__name__}: {exc}"[:500],
                        payload={"kind": kind, "attempt": attempt})
            settled = _settle(host, key, kind, reconcile, idempotent, f"attempt {attempt} failed ({exc})")
            if settled is not None:
                return settled
            if attempt == attempts:
                raise EffectUncertain(f"effect {kind} {key!r} failed {attempts} times; last: {exc}", key=key, kind=kind) from exc
            time.sleep(delay_s)
            delay_s *= 2
            continue
        faults.hit("effect.before_done")
        host.record("effect.done", key=key, why=f"{kind} done", payload=result)
        return result
    raise AssertionError("unreachable")


def _settle(host: "HostContext", key: str, kind: str, reconcile: Callable[[str], dict[str, Any] | None] | None,
            idempotent: bool, situation: str) -> dict[str, Any] | None:
    """Decides an uncertain effect: returns its result if the target says it happened, None
    if it may be (re)done with the same key.

    Raises:
        EffectUncertain: neither a reconcile hook nor idempotency can settle it.
    """
    if reconcile is not None:
        settled = reconcile(key)
        if settled is not None:
            host.record("effect.done", key=key, why=f"reconciled: the target says {key} happened", payload=settled)
            return settled
        return None
    if idempotent:
        return None
    raise EffectUncertain(
        f"effect {kind} {key!r} is uncertain: {situation}; it has no reconcile hook and is not idempotent, so "
        "only a person can say whether it happened: check the target, then approve a retry or record the outcome",
        key=key, kind=kind)


def _approved(host: "HostContext", kind: str, key: str) -> bool:
    """True when an ``approval.granted`` record's scope covers this effect and has not lapsed."""
    now = host.now_ms()
    for approval in host.view.approvals:
        scope = approval.get("scope", {})
        expires = scope.get("expires_ms")
        if scope.get("action") == "effect" and scope.get("target") in (kind, key) and (expires is None or now < expires):
            return True
    return False

"""Steps: the unit of recorded work inside a task, as a worker runs it.

A step has a deterministic key: the task, the step's name, and a hash of its inputs
(``step_key``). Before acting, the worker looks the step up in what the ledger already holds
for the task: a recorded step is skipped, and a recorded step of the same name whose input
hash differs is a ``NondeterminismError`` naming the step. Otherwise the worker sends
``step.intent``, runs the step, and sends ``step.done`` (or ``step.failed``). Pure steps send
their records without waiting: losing the intent in a crash only means the step runs again.

A step may instead be *reused*: when the coordinator offers results recorded by earlier runs
(``reuse``) and one of them has the step's reuse key (``reuse_key``: what decides the result,
its code and the policy included) and still holds (the step's ``still_valid`` check, e.g. that
the files an analysis read are unchanged), the worker records ``step.done`` with that result
and a ``reused`` pointer to where it was first recorded, and does not run the step (a reused
result is no effect and needs no intent).

A model call is a step too; it spends one call of the task's allowance, which the coordinator
reserves from the run's quota when it assigns the task, and is recorded as ``model.call``. A
paid model is called on the coordinator's host, never in the worker: the step asks for it with
``TaskContext.ask_model`` (after its intent) and waits for the coordinator's answer.
"""

from __future__ import annotations

import errno
import hashlib
import queue
import threading
from collections.abc import Callable, Iterable
from typing import Any, Protocol

from . import errors
from .ledger.records import canonical_json


MAX_STEP_FAILURES = 2
"""Failures (an exception, or the worker dying in it) after which a step is given up."""


def input_hash(*parts: Any) -> str:
    """Returns SHA-256 hex of the canonical JSON of ``parts``: a step's input hash."""
    return hashlib.sha256(canonical_json(list(parts)).encode("utf-8")).hexdigest()


def reuse_key(salt: str, name: str, inputs_hash: str) -> str:
    """Returns a step result's reuse key: SHA-256 hex of the canonical JSON of the sprint's
    salt (``reuse.sprint_salt``: the code that decides the sprint and the policy), the step's
    name and its full input hash. Equal keys mean equal results, whatever the run."""
    return input_hash("reuse", salt, name, inputs_hash)


def reuse_claim(salt: str, name: str, inputs_hash: str) -> dict[str, str]:
    """Returns a step's ``reuse`` field: ``{"salt", "inputs", "key"}`` (the sprint's salt, the
    step's full input hash and its ``reuse_key``), recorded with its ``step.done``."""
    return {"salt": salt, "inputs": inputs_hash, "key": reuse_key(salt, name, inputs_hash)}


def pick_offer(offers: Iterable[dict[str, Any]], reuse: dict[str, str] | None,
               still_valid: Callable[[dict[str, Any]], bool] | None) -> dict[str, Any] | None:
    """Returns the first of a step's offered results (``reuse.Offers``) with the step's reuse
    key that still holds (``still_valid``; None: it always does), or None. The worker
    (``TaskContext.step``) and the coordinator settling a task itself
    (``run.reusing.ReuseMixin``) choose the same way.

    Args:
        offers: The step's offers, ``[{"key", "result", "from"}]``, the preferred first.
        reuse: The step's ``reuse_claim``, or None when its sprint's results are not keyed.
        still_valid: Says whether a result still holds now.
    """
    if reuse is None:
        return None
    for offer in offers:
        if offer.get("key") == reuse["key"] and isinstance(offer.get("result"), dict) \
                and (still_valid is None or still_valid(offer["result"])):
            return offer
    return None


def reused_payload(name: str, inputs_hash: str, reuse: dict[str, str],
                   offer: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """Returns the ``why`` and the payload of the ``step.done`` that records an offered result
    as this step's: the result, the step's ``reuse`` claim and the ``reused`` pointer to the
    record it was first recorded in (``offer["from"]``: ``{"run", "seq"}``, with ``"cache"``
    when it came from the shared cache)."""
    origin = offer["from"]
    return (f"reused from run {origin.get('run')} (record {origin.get('seq')})",
            {"name": name, "input_hash": inputs_hash[:16], "result": offer["result"], "reuse": reuse, "reused": origin})


def reused_payload_text(stored: str, origin: dict[str, Any]) -> str:
    """Returns ``canonical_json`` of ``reused_payload``'s payload without encoding the result
    again, from ``stored``: the canonical JSON of the payload of the record the offer was read
    from, of the usual layout (``reuse.stored_step``). An equal reuse key means the same salt,
    step name and input hash, so that payload has this step's ``input_hash``, ``name`` and
    ``reuse``, and its result; it lacks only the ``reused`` pointer when it was computed there
    (``reused``, the last key in canonical order, is then added), and has this one when it was
    itself a copy (``origin`` is then its pointer)."""
    if stored.endswith('},"reused":' + canonical_json(origin) + "}"):
        return stored
    return f'{stored[:-1]},"reused":{canonical_json(origin)}}}'


def step_key(task: str, name: str, inputs_hash: str) -> str:
    """Returns a step's idempotency key: ``<task>/<name>@<first 16 hex of the input hash>``."""
    return f"{task}/{name}@{inputs_hash[:16]}"


class Fenced(BaseException):
    """The coordinator says this worker's lease on the task is gone; stop working on it.

    A BaseException so that step code cannot swallow it with ``except Exception``.
    """


class OutOfCalls(Exception):
    """The task's model-call allowance is spent, or the coordinator makes no model calls now
    (an exhausted quota, a budget, a halt); the task is handed back unfinished.

    Args:
        task: The task.
        why: What the worker tells the coordinator (recorded with ``lease.released``).
    """

    def __init__(self, task: str, why: str = "the model calls reserved for this task are spent") -> None:
        super().__init__(task, why)
        self.why = why


class OutOfSpace(Exception):
    """A step met a full disk (ENOSPC, EDQUOT): it is not failed, since the cause clears once
    space is freed; the task is handed back and the run halts (exit 75) until it is resumed.

    Args:
        task: The task.
        why: What the worker tells the coordinator (recorded with ``lease.released``).
    """

    def __init__(self, task: str, why: str) -> None:
        super().__init__(task, why)
        self.why = why


NO_SPACE = (errno.ENOSPC, errno.EDQUOT)
"""The errors of a full disk (or an exhausted quota on it)."""


class StepFailed(Exception):
    """A step raised; its ``step.failed`` record was sent and the task goes on with the others."""


def failure_kind(name: Any) -> type[errors.ModelError]:
    """The ``models.failures`` kind named in a coordinator's reply (``ModelError`` when it names
    none), so that the step's ``step.failed`` record says which kind of failure it was."""
    from .models import failures

    kind = getattr(failures, name, None) if isinstance(name, str) else None
    return kind if isinstance(kind, type) and issubclass(kind, errors.ModelError) else errors.ModelError


class Channel(Protocol):
    """Where a worker sends its messages (the coordinator, over a pipe)."""

    def send(self, message: dict[str, Any]) -> None:
        """Sends one message; raises OSError when the coordinator is gone."""


class TaskContext:
    """What a task's code gets from the runtime: its inputs, and ``step`` to do recorded work.

    Args:
        channel: Where records go.
        worker: This worker's id.
        assignment: The ``assign`` message: ``task``, ``epoch``, ``sprint``, ``inputs``,
            ``done`` ({step name: input hash} already recorded), ``calls_allowed`` and the
            job's ``context``.
        fenced: Set by the worker's reader thread when the coordinator fences this task.
        replies: Where the worker's reader thread puts the coordinator's answers to model
            requests (and ``{"op": "fenced", "task"}`` or ``{"op": "stop"}`` to end a wait).

    The assignment's ``reuse`` (optional) is ``{"salt": str, "offers": {step name: [{"key",
    "result", "from"}]}}`` (``reuse.Offers``).
    """

    def __init__(self, channel: Channel, worker: str, assignment: dict[str, Any], fenced: threading.Event,
                 replies: "queue.Queue[dict[str, Any]] | None" = None) -> None:
        self.channel = channel
        self.worker = worker
        self.task: str = assignment["task"]
        self.epoch: int = assignment["epoch"]
        self.sprint: str = assignment["sprint"]
        self.inputs: dict[str, Any] = assignment["inputs"]
        self.context: dict[str, Any] = assignment.get("context", {})
        self.done: dict[str, str] = assignment.get("done", {})
        self.calls_left: int = assignment.get("calls_allowed", 0)
        self.failures: dict[str, int] = assignment.get("failures", {})
        self.denied: dict[str, str] = assignment.get("denied", {})
        self.denied_steps: list[str] = []
        self.failed_steps: list[str] = []
        self.given_up: list[str] = []
        self.ran_steps = 0
        self.reused_steps = 0
        reuse = assignment.get("reuse") or {}
        self.reuse_salt: str | None = reuse.get("salt")
        self.offers: dict[str, list[dict[str, Any]]] = reuse.get("offers") or {}
        self._fenced = fenced
        self._replies = replies

    def record(self, kind: str, *, key: str | None = None, why: str = "", payload: dict[str, Any] | None = None) -> None:
        """Sends a record under this task's lease (the coordinator appends it, fenced)."""
        self.channel.send({"op": "record", "kind": kind, "key": key, "task": self.task,
                           "epoch": self.epoch, "why": why, "payload": payload or {}})

    def check_fenced(self) -> None:
        """Raises ``Fenced`` if the coordinator took the task away."""
        if self._fenced.is_set():
            raise Fenced(self.task)

    def step(self, name: str, inputs_hash: str, fn: Callable[[str], dict[str, Any]], *, why: str = "",
             spends_call: bool = False, outcome: Callable[[dict[str, Any]], str] | None = None,
             still_valid: Callable[[dict[str, Any]], bool] | None = None) -> dict[str, Any] | None:
        """Runs a pure step once per key, recording intent and result.

        Args:
            name: Step name, unique in the task (e.g. ``"detect:pkg/mod.py"``).
            inputs_hash: Hash of everything the result depends on (``input_hash(...)``).
            fn: Computes the result (a JSON-ready dict); it is given the step key, which a
                model call records its ``model.call`` under.
            why: The reason recorded with the intent (for the audit).
            spends_call: The step makes one model call: it takes one call of the task's
                allowance before its intent is recorded.
            outcome: Says in a few words what the result means (the ``why`` of ``step.done``,
                shown by the audit).
            still_valid: Says whether an offered result with the step's reuse key still holds
                now (what it depended on besides its inputs is unchanged); None: it always does.

        Returns:
            The result (recorded now, or reused: ``reused_steps`` counts those), or None when
            the step was already recorded (skipped), when the
            policy in force denies what it reads (the denial was recorded by the
            coordinator; the step stays undone so a looser policy can run it), or when it
            already failed ``MAX_STEP_FAILURES`` times (given up: a poison step, e.g. a file
            that kills the worker; it stays failed in the ledger and the task goes on).

        Raises:
            NondeterminismError: a step of this name was recorded with other inputs.
            StepFailed: ``fn`` raised; the failure was recorded.
            OutOfCalls: the step needs a model call and the allowance is spent.
            OutOfSpace: ``fn`` met a full disk; the step stays undone, not failed.
            Fenced: the lease is gone.
        """
        self.check_fenced()
        recorded = self.done.get(name)
        if recorded is not None:
            if recorded != inputs_hash[:16]:
                raise errors.NondeterminismError(
                    f"step {name!r} of task {self.task} was recorded with input hash {recorded}, "
                    f"but its inputs now hash to {inputs_hash[:16]}: the code or the scanned files "
                    "changed since the run was recorded; start a new run with --new",
                    step=name, task=self.task)
            return None
        if name in self.denied:
            self.denied_steps.append(name)
            return None
        if self.failures.get(name, 0) >= MAX_STEP_FAILURES:
            self.given_up.append(name)
            return None
        key = step_key(self.task, name, inputs_hash)
        reuse = reuse_claim(self.reuse_salt, name, inputs_hash) if self.reuse_salt else None
        offer = pick_offer(self.offers.get(name, ()), reuse, still_valid)
        if offer is not None:
            why, payload = reused_payload(name, inputs_hash, reuse, offer)
            self.record("step.done", key=key, why=why, payload=payload)
            self.done[name] = inputs_hash[:16]
            self.reused_steps += 1
            return offer["result"]
        if spends_call:
            self.spend_call()
        self.record("step.intent", key=key, why=why, payload={"name": name})
        try:
            result = fn(key)
        except (Fenced, errors.Cancelled, KeyboardInterrupt, OutOfCalls):
            raise
        except Exception as exc:  # noqa: BLE001 - every step error is recorded, never lost
            if isinstance(exc, OSError) and exc.errno in NO_SPACE:  # not the step's fault: done once there is space
                raise OutOfSpace(self.task, f"the disk is full in step {name!r} ({exc})"[:500]) from exc
            message = f"{type(exc).__name__}: {exc}"
            facts = exc.facts if isinstance(exc, errors.FleetledgerError) else {}
            self.record("step.failed", key=key, why=message[:500],
                        payload={"name": name, "error": type(exc).__name__, "code": facts.get("code")})
            self.failed_steps.append(name)
            raise StepFailed(message) from exc
        payload = {"name": name, "input_hash": inputs_hash[:16], "result": result}
        if reuse is not None:
            payload["reuse"] = reuse
        self.record("step.done", key=key, why=outcome(result) if outcome is not None else "", payload=payload)
        self.done[name] = inputs_hash[:16]
        self.ran_steps += 1
        return result

    def ask_model(self, key: str, request: dict[str, Any]) -> dict[str, Any]:
        """Asks the coordinator to make a step's model call on the host, and waits for it.

        The coordinator records the call (``model.call`` under ``key``) before it answers, and
        hands back a recorded answer instead of calling again.

        Args:
            key: The step key (given to the step's ``fn``).
            request: The request (``fleetledger.models.request_to_json``).

        Returns:
            The answer (``ModelAnswer.to_json()``).

        Raises:
            Fenced: the lease is gone.
            OutOfCalls: the coordinator makes no model calls now (an exhausted quota, a budget,
                a halt): the task is handed back unfinished, and the step is not failed.
            ModelError: the call failed after the broker's retries (the step fails); its kind
                (``models.failures``) as the coordinator classified it.
        """
        if self._replies is None:
            raise errors.ModelError("this worker has no channel to a host-side model")
        self.channel.send({"op": "model", "key": key, "task": self.task, "epoch": self.epoch, "request": request})
        while True:
            reply = self._replies.get()
            op = reply.get("op")
            if op == "stop":
                raise OutOfCalls(self.task, "the worker was asked to stop while it waited for a model answer")
            if op == "fenced":
                if reply.get("task") == self.task:
                    raise Fenced(self.task)
                continue
            if reply.get("key") != key:
                continue
            if op == "model.answer":
                return reply["answer"]
            if reply.get("kind") == "unavailable":
                raise OutOfCalls(self.task, f"no model call now: {reply.get('error') or 'the run is halting'}"[:500])
            kind = failure_kind(reply.get("failure"))
            raise kind(reply.get("error") or "the model call failed", code=reply.get("code"))

    def spend_call(self) -> None:
        """Takes one model call from the task's allowance.

        Raises:
            OutOfCalls: the allowance is spent; the task must be handed back.
        """
        if self.calls_left <= 0:
            raise OutOfCalls(self.task)
        self.calls_left -= 1


def each(items: Iterable[Any], body: Callable[[Any], None]) -> None:
    """Calls ``body`` on every item in turn; a ``StepFailed`` (the step's failure is already
    recorded) moves on to the next item, so one failed step does not end its task."""
    for item in items:
        try:
            body(item)
        except StepFailed:
            continue

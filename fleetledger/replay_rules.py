"""The fold's rules: what each kind of record does to a run view (``replay.RunView.apply``).

Holds the parts of a view that records create (``TaskView``, ``SprintView``, a worker's entry)
and one handler per record kind (``HANDLERS``). ``replay`` keeps the view itself, its queries,
its checkpoint layout and ``fold``; it imports this module, never the other way round.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .leases import LEADER_TASK, Lease

if TYPE_CHECKING:
    from .ledger.records import Record
    from .replay import RunView

APPROVER = "person"
"""The actor of the only ``approval.granted`` records that approve (``fleetledger approve``)."""

COORDINATOR = "coordinator"
"""The coordinator's actor name; a task it settles itself (every step reused, ``run.reusing``)
is leased to it under this name, which is no worker's."""

GONE_WITH_SESSION = "gone with the previous coordinator session"
"""The exit noted for a worker whose coordinator session ended (a resume started a new one)."""


@dataclass(kw_only=True, slots=True)
class TaskView:
    """A task as the ledger tells it (its inputs stay in its ``task.planned`` record).

    Attributes:
        id: Task id, unique in the run.
        sprint: The sprint the task belongs to.
        status: ``pending`` (unassigned), ``leased``, ``finished``, ``failed`` (given up) or
            ``superseded`` (its sprint was planned again under other code, ``upgrade``; it is
            no longer in its sprint's ``tasks``).
        epoch: Epoch of the latest assignment (0 if never assigned).
        lease: The open lease, or None.
        attempts: Number of assignments so far.
        steps_done: Number of ``step.done`` records of the task (one per step key).
        steps_failed: Number of ``step.failed`` records of the task.
        result: The ``task.finished`` payload, once finished.
        errors: Messages of the ``task.failed`` records, oldest first.
    """

    id: str
    sprint: str
    status: str = "pending"
    epoch: int = 0
    lease: Lease | None = None
    attempts: int = 0
    steps_done: int = 0
    steps_failed: int = 0
    result: dict[str, Any] | None = None
    errors: list[str] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class SprintView:
    """A sprint: ``status`` is pending, in_progress or completed; ``tasks`` in plan order."""

    id: str
    status: str = "pending"
    tasks: list[str] = field(default_factory=list)




def new_worker(ts_ms: int) -> dict[str, Any]:
    """A worker's entry in ``RunView.workers``, first seen at ``ts_ms``."""
    return {"last_seen_ms": ts_ms, "task": None, "pid": None, "exited": None}


# -- handlers, one per kind ---------------------------------------------------------------


def _run_started(v: RunView, r: Record) -> None:
    p = r.payload
    v.job = p["job"]
    v.state = "RUNNING"
    for sprint in p.get("sprints", ()):
        v.sprints.setdefault(sprint, SprintView(id=sprint))
    v.sessions.append({"kind": "started", "ts_ms": r.ts_ms, **p.get("session", {})})
    v.policy = p.get("policy", {})


def _run_resumed(v: RunView, r: Record) -> None:
    v.state = "RUNNING"
    v.halt = None
    v.sessions.append({"kind": "resumed", "ts_ms": r.ts_ms, **r.payload.get("session", {})})
    v.policy = r.payload.get("policy", {})
    for worker in v.workers.values():
        if worker["exited"] is None:
            worker["exited"] = GONE_WITH_SESSION


def _run_joined(v: RunView, r: Record) -> None:
    v.sessions.append({"kind": "joined", "ts_ms": r.ts_ms, **r.payload.get("session", {}), "target": r.payload.get("target")})


def _run_halted(v: RunView, r: Record) -> None:
    v.state = "HALTED"
    v.halt = {"reason": r.why, "ts_ms": r.ts_ms, **r.payload}


def _run_finished(v: RunView, r: Record) -> None:
    v.state = "JACKED_OUT"
    v.halt = None
    v.finished_ms = r.ts_ms


def _sprint_of(r: Record) -> str:
    """The sprint a sprint record is about: its key, or for a later round of a reopened sprint
    (whose key must differ from the first round's) the payload's ``sprint``."""
    return r.payload.get("sprint") or r.key


def _sprint_started(v: RunView, r: Record) -> None:
    sid = _sprint_of(r)
    v.sprints.setdefault(sid, SprintView(id=sid)).status = "in_progress"


def _sprint_finished(v: RunView, r: Record) -> None:
    sid = _sprint_of(r)
    v.sprints.setdefault(sid, SprintView(id=sid)).status = "completed"


def _sprint_reopened(v: RunView, r: Record) -> None:
    sid = _sprint_of(r)
    sprint = v.sprints.setdefault(sid, SprintView(id=sid))
    sprint.status = "pending"
    if r.payload.get("supersede"):  # ``resume --upgrade``: the sprint is planned afresh under other code
        for tid in sprint.tasks:
            t = v.tasks[tid]
            _release(v, t)
            t.status = "superseded"
        sprint.tasks = []


def _task_planned(v: RunView, r: Record) -> None:
    sprint = r.payload["sprint"]
    v.tasks[r.task] = TaskView(id=r.task, sprint=sprint)
    v.sprints.setdefault(sprint, SprintView(id=sprint)).tasks.append(r.task)


def _task_assigned(v: RunView, r: Record) -> None:
    p = r.payload
    if r.task == LEADER_TASK:
        v.leader = Lease(task=r.task, worker=p["worker"], epoch=r.epoch, expires_ms=p["expires_ms"],
                         renewed_ms=r.ts_ms, session=p.get("session", ""), ttl_ms=p["ttl_ms"])
        v.leader_epoch = r.epoch
        return
    t = v.tasks[r.task]
    t.status = "leased"
    t.epoch = r.epoch
    t.attempts += 1
    t.lease = Lease(task=r.task, worker=p["worker"], epoch=r.epoch, expires_ms=p["expires_ms"],
                    renewed_ms=r.ts_ms, session=p.get("session", ""),
                    ttl_ms=p.get("ttl_ms", p["expires_ms"] - r.ts_ms))
    if p["worker"] != COORDINATOR:
        v.workers.setdefault(p["worker"], new_worker(r.ts_ms))["task"] = r.task


def _lease_renewed(v: RunView, r: Record) -> None:
    if r.task == LEADER_TASK:
        if v.leader is not None and v.leader.epoch == r.epoch:
            v.leader = dataclasses.replace(v.leader, expires_ms=r.payload["expires_ms"], renewed_ms=r.ts_ms)
        return
    t = v.tasks[r.task]
    if t.lease is not None and t.lease.epoch == r.epoch:
        t.lease = dataclasses.replace(t.lease, expires_ms=r.payload["expires_ms"], renewed_ms=r.ts_ms)


def _release(v: RunView, t: TaskView) -> None:
    if t.lease is not None:
        worker = v.workers.get(t.lease.worker)
        if worker is not None and worker.get("task") == t.id:
            worker["task"] = None
    t.lease = None
    v.open_steps.pop(t.id, None)


def _lease_expired(v: RunView, r: Record) -> None:
    if r.task == LEADER_TASK:
        v.leader = None
        return
    t = v.tasks[r.task]
    _release(v, t)
    t.status = "pending"


def _task_finished(v: RunView, r: Record) -> None:
    t = v.tasks[r.task]
    _release(v, t)
    t.status = "finished"
    t.result = r.payload


def _task_failed(v: RunView, r: Record) -> None:
    t = v.tasks[r.task]
    _release(v, t)
    t.errors.append(r.why)
    t.status = "pending" if r.payload.get("retry", True) else "failed"


def _task_reopened(v: RunView, r: Record) -> None:
    v.tasks[r.task].status = "pending"


def _step_intent(v: RunView, r: Record) -> None:
    t = v.tasks.get(r.task) if r.task is not None else None
    if t is not None and t.lease is not None:
        v.open_steps.setdefault(t.id, {})[r.key] = intent_name(r.payload_json)


def intent_name(payload_json: str) -> str:
    """Returns the ``name`` of a ``step.intent`` payload (``""`` when it has none).

    A worker's intent is ``{"name": NAME}``, whose canonical text is ``{"name":"NAME"}``: when
    NAME holds no quote and no backslash (no escape), it is that text's middle, read without
    decoding the JSON (one intent in two records of a replay); any other text is decoded.
    """
    if payload_json.startswith('{"name":"') and payload_json.endswith('"}'):
        name = payload_json[9:-2]
        if '"' not in name and "\\" not in name:
            return name
    value = json.loads(payload_json).get("name", "")
    return value


def _close_step(v: RunView, r: Record) -> TaskView | None:
    if r.task is None:
        return None
    steps = v.open_steps.get(r.task)
    if steps is not None:
        steps.pop(r.key, None)
        if not steps:
            del v.open_steps[r.task]
    return v.tasks.get(r.task)


def _step_done(v: RunView, r: Record) -> None:
    v.steps_done += 1
    t = _close_step(v, r)
    if t is not None:
        t.steps_done += 1


def _step_failed(v: RunView, r: Record) -> None:
    v.steps_failed += 1
    t = _close_step(v, r)
    if t is not None:
        t.steps_failed += 1


def _model_call(v: RunView, r: Record) -> None:
    p = r.payload
    m = v.model
    m["calls"] += 1
    m["input_tokens"] += p.get("input_tokens", 0)
    m["output_tokens"] += p.get("output_tokens", 0)
    m["cost_usd"] += p.get("cost_usd", 0.0)


def _effect_intent(v: RunView, r: Record) -> None:
    v.effects[r.key] = {"intent": r.payload, "done": None, "why": r.why}


def _effect_done(v: RunView, r: Record) -> None:
    v.effects.setdefault(r.key, {"intent": None, "why": ""})["done"] = r.payload


def _approval_granted(v: RunView, r: Record) -> None:
    if r.actor != APPROVER:  # only `fleetledger approve` approves; ``verify`` reports the others
        return
    v.approvals.append({"seq": r.seq, "why": r.why, **r.payload})


def _worker_started(v: RunView, r: Record) -> None:
    worker = v.workers.setdefault(r.payload["worker"], new_worker(r.ts_ms))
    worker["pid"] = r.payload.get("pid")
    worker["exited"] = None


def _worker_exited(v: RunView, r: Record) -> None:
    v.workers.setdefault(r.payload["worker"], new_worker(r.ts_ms))["exited"] = r.why


def _checkpoint(v: RunView, r: Record) -> None:
    v.checkpointed = v.records


def _decision(v: RunView, r: Record) -> None:
    if isinstance(r.payload.get("salvage"), dict):
        v.salvaged.append(r.payload["salvage"])


#: Record kind -> what a record of that kind does to the view (other kinds change nothing but
#: the counters ``RunView.apply`` keeps for every record).
HANDLERS = {
    "run.started": _run_started, "run.resumed": _run_resumed, "run.joined": _run_joined, "run.halted": _run_halted,
    "run.finished": _run_finished, "sprint.started": _sprint_started,
    "sprint.finished": _sprint_finished, "sprint.reopened": _sprint_reopened, "task.planned": _task_planned,
    "task.assigned": _task_assigned, "task.reopened": _task_reopened, "lease.renewed": _lease_renewed,
    "lease.expired": _lease_expired, "lease.released": _lease_expired, "task.finished": _task_finished,
    "task.failed": _task_failed, "step.intent": _step_intent, "step.done": _step_done,
    "step.failed": _step_failed, "model.call": _model_call, "effect.intent": _effect_intent,
    "effect.done": _effect_done, "approval.granted": _approval_granted,
    "worker.started": _worker_started, "worker.exited": _worker_exited, "checkpoint": _checkpoint,
    "decision": _decision,
}

"""Replay: the run rebuilt from its records, ``RunView = fold(records)``.

Status, resume, audit and export all read a ``RunView``; none of them keeps state of its own.
The fold is pure: its result depends only on the records, in sequence order. The coordinator
keeps a live view by applying each record it appends, which is the same fold done
incrementally (``RunView.apply``).

A ``checkpoint`` record carries ``RunView.to_json()`` at a sequence number; ``fold`` can start
from one (``RunView.from_json``) and apply only the records after it.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from .leases import Lease
from .ledger.records import Record

RunStateName = Literal["RUNNING", "HALTED", "JACKED_OUT"]


@dataclass(kw_only=True, slots=True)
class TaskView:
    """A task as the ledger tells it.

    Attributes:
        id: Task id, unique in the run.
        sprint: The sprint the task belongs to.
        inputs: The ``task.planned`` payload (what the task covers).
        status: ``pending`` (unassigned), ``leased``, ``finished`` or ``failed`` (given up).
        epoch: Epoch of the latest assignment (0 if never assigned).
        lease: The open lease, or None.
        attempts: Number of assignments so far.
        result: The ``task.finished`` payload, once finished.
        errors: Messages of the ``task.failed`` records, oldest first.
    """

    id: str
    sprint: str
    inputs: dict[str, Any]
    status: str = "pending"
    epoch: int = 0
    lease: Lease | None = None
    attempts: int = 0
    result: dict[str, Any] | None = None
    errors: list[str] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class SprintView:
    """A sprint: ``status`` is pending, in_progress or completed; ``tasks`` in plan order."""

    id: str
    status: str = "pending"
    tasks: list[str] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class RunView:
    """One run, folded from its records.

    Attributes:
        run_id: The run's id.
        job: The job description from ``run.started`` (kind, target, argv, options).
        state: RUNNING, HALTED or JACKED_OUT (None before ``run.started``).
        halt: The ``run.halted`` payload (``reason``, ``kind``, maybe ``reset_at``) while HALTED.
        started_ms, last_activity_ms, finished_ms: Epoch ms UTC of the first record, the last
            record, and ``run.finished``.
        sprints: Sprints in plan order (dict order).
        tasks: Tasks by id.
        steps: Recorded step results by step key (``step.done`` payloads).
        steps_by_task: Step keys recorded per task.
        step_intents: Number of ``step.intent`` records per step key.
        step_failures: Error messages of ``step.failed`` records per step key.
        open_steps: Per task, ``{step key: step name}`` of intents with no result yet (the step
            a worker was in when it died).
        model: Model spend: ``calls``, ``input_tokens``, ``output_tokens``, ``cost_usd``.
        effects: Per effect key: ``{"intent": payload, "done": payload or None}``.
        workers: Per worker id: ``{"last_seen_ms", "task", "pid"}``.
        sessions: Coordinator sessions, oldest first (``run.started``/``run.resumed`` payloads).
        denials: ``policy.denied`` payloads; approvals: ``approval.granted`` payloads.
        last_seq, last_hash: The last folded record.
        policy_hash: Policy hash of the last coordinator record.
        records: Number of records folded.
    """

    run_id: str
    job: dict[str, Any] = field(default_factory=dict)
    state: RunStateName | None = None
    halt: dict[str, Any] | None = None
    started_ms: int = 0
    last_activity_ms: int = 0
    finished_ms: int | None = None
    sprints: dict[str, SprintView] = field(default_factory=dict)
    tasks: dict[str, TaskView] = field(default_factory=dict)
    steps: dict[str, dict[str, Any]] = field(default_factory=dict)
    steps_by_task: dict[str, list[str]] = field(default_factory=dict)
    step_intents: dict[str, int] = field(default_factory=dict)
    step_failures: dict[str, list[str]] = field(default_factory=dict)
    open_steps: dict[str, dict[str, str]] = field(default_factory=dict)
    model: dict[str, float] = field(
        default_factory=lambda: {"calls": 0, "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0})
    effects: dict[str, dict[str, Any]] = field(default_factory=dict)
    workers: dict[str, dict[str, Any]] = field(default_factory=dict)
    sessions: list[dict[str, Any]] = field(default_factory=list)
    denials: list[dict[str, Any]] = field(default_factory=list)
    approvals: list[dict[str, Any]] = field(default_factory=list)
    last_seq: int = 0
    last_hash: str = ""
    policy_hash: str = ""
    records: int = 0

    # -- queries (read-only) -------------------------------------------------------------

    def current_sprint(self) -> str | None:
        """Returns the first sprint that is not completed, or None when all are."""
        for sprint in self.sprints.values():
            if sprint.status != "completed":
                return sprint.id
        return None

    def sprint_progress(self, sprint_id: str) -> tuple[int, int]:
        """Returns ``(finished tasks, planned tasks)`` of a sprint."""
        sprint = self.sprints[sprint_id]
        done = sum(1 for t in sprint.tasks if self.tasks[t].status in ("finished", "failed"))
        return done, len(sprint.tasks)

    def leases(self) -> list[Lease]:
        """Returns the open leases, ordered by task id."""
        return [t.lease for _, t in sorted(self.tasks.items()) if t.lease is not None]

    def done_steps(self, task_id: str) -> dict[str, dict[str, Any]]:
        """Returns ``{step key: recorded result}`` for the task's finished steps."""
        return {key: self.steps[key] for key in self.steps_by_task.get(task_id, ())}

    # -- the fold ------------------------------------------------------------------------

    def apply(self, r: Record) -> None:
        """Folds one record into the view (records must come in sequence order).

        Raises:
            ValueError: the record belongs to another run, or comes out of order.
        """
        if r.run_id != self.run_id:
            raise ValueError(f"record {r.seq} is of run {r.run_id}, not {self.run_id}")
        if r.seq <= self.last_seq:
            raise ValueError(f"record {r.seq} comes after {self.last_seq}: records must be folded in order")
        handler = _HANDLERS.get(r.kind)
        if handler is not None:
            handler(self, r)
        if self.records == 0:
            self.started_ms = r.ts_ms
        self.records += 1
        self.last_seq = r.seq
        self.last_hash = r.hash
        self.last_activity_ms = r.ts_ms
        if r.actor == "coordinator" and r.policy_hash:
            self.policy_hash = r.policy_hash
        if r.actor != "coordinator":
            worker = self.workers.setdefault(r.actor, {"last_seen_ms": 0, "task": None, "pid": None})
            worker["last_seen_ms"] = r.ts_ms

    def to_json(self) -> dict[str, Any]:
        """Returns the whole view as JSON-ready data (the payload of a ``checkpoint``)."""
        data = {name: copy.deepcopy(getattr(self, name)) for name in self.__dataclass_fields__}
        data["sprints"] = {k: {"id": s.id, "status": s.status, "tasks": list(s.tasks)} for k, s in self.sprints.items()}
        data["tasks"] = {k: _task_json(t) for k, t in self.tasks.items()}
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "RunView":
        """Rebuilds a view from ``to_json()`` output (a checkpoint payload)."""
        data = copy.deepcopy(data)
        data["sprints"] = {k: SprintView(**s) for k, s in data["sprints"].items()}
        tasks = {}
        for k, t in data["tasks"].items():
            lease = Lease(**t.pop("lease")) if t.get("lease") else None
            t.pop("lease", None)
            tasks[k] = TaskView(lease=lease, **t)
        data["tasks"] = tasks
        return cls(**data)


def _task_json(t: TaskView) -> dict[str, Any]:
    lease = dataclasses.asdict(t.lease) if t.lease is not None else None
    return {"id": t.id, "sprint": t.sprint, "inputs": copy.deepcopy(t.inputs), "status": t.status,
            "epoch": t.epoch, "lease": lease, "attempts": t.attempts,
            "result": copy.deepcopy(t.result), "errors": list(t.errors)}


def fold(records: Iterable[Record], *, run_id: str | None = None, base: RunView | None = None) -> RunView:
    """Folds records into a run view: the one way a run is rebuilt.

    Args:
        records: Records of one run in sequence order (other runs' records are skipped when
            ``run_id`` is given).
        run_id: The run to fold; taken from the first record when None.
        base: A view to continue from (e.g. rebuilt from a checkpoint); not modified.

    Returns:
        The folded view.

    Raises:
        ValueError: records of several runs without ``run_id``, or records out of order.
    """
    view = copy.deepcopy(base) if base is not None else None
    for r in records:
        if view is None:
            view = RunView(run_id=run_id or r.run_id)
        if run_id is not None and r.run_id != run_id:
            continue
        view.apply(r)
    if view is None:
        view = RunView(run_id=run_id or "")
    return view


# -- handlers, one per kind ---------------------------------------------------------------


def _run_started(v: RunView, r: Record) -> None:
    p = r.payload
    v.job = p["job"]
    v.state = "RUNNING"
    for sprint in p.get("sprints", ()):
        v.sprints.setdefault(sprint, SprintView(id=sprint))
    v.sessions.append({"kind": "started", "ts_ms": r.ts_ms, **p.get("session", {})})


def _run_resumed(v: RunView, r: Record) -> None:
    v.state = "RUNNING"
    v.halt = None
    v.sessions.append({"kind": "resumed", "ts_ms": r.ts_ms, **r.payload.get("session", {})})


def _run_halted(v: RunView, r: Record) -> None:
    v.state = "HALTED"
    v.halt = {"reason": r.why, "ts_ms": r.ts_ms, **r.payload}


def _run_finished(v: RunView, r: Record) -> None:
    v.state = "JACKED_OUT"
    v.halt = None
    v.finished_ms = r.ts_ms


def _sprint_started(v: RunView, r: Record) -> None:
    v.sprints.setdefault(r.key, SprintView(id=r.key)).status = "in_progress"


def _sprint_finished(v: RunView, r: Record) -> None:
    v.sprints.setdefault(r.key, SprintView(id=r.key)).status = "completed"


def _task_planned(v: RunView, r: Record) -> None:
    p = r.payload
    sprint = p["sprint"]
    v.tasks[r.task] = TaskView(id=r.task, sprint=sprint, inputs=p.get("inputs", {}))
    v.sprints.setdefault(sprint, SprintView(id=sprint)).tasks.append(r.task)


def _task_assigned(v: RunView, r: Record) -> None:
    p = r.payload
    t = v.tasks[r.task]
    t.status = "leased"
    t.epoch = r.epoch
    t.attempts += 1
    t.lease = Lease(task=r.task, worker=p["worker"], epoch=r.epoch, expires_ms=p["expires_ms"],
                    renewed_ms=r.ts_ms, session=p.get("session", ""),
                    ttl_ms=p.get("ttl_ms", p["expires_ms"] - r.ts_ms))
    v.workers.setdefault(p["worker"], {"last_seen_ms": r.ts_ms, "task": None, "pid": None})["task"] = r.task


def _lease_renewed(v: RunView, r: Record) -> None:
    t = v.tasks[r.task]
    if t.lease is not None and t.lease.epoch == r.epoch:
        t.lease = dataclasses.replace(t.lease, expires_ms=r.payload["expires_ms"], renewed_ms=r.ts_ms)


def _release(v: RunView, t: TaskView) -> None:
    if t.lease is not None:
        worker = v.workers.get(t.lease.worker)
        if worker is not None and worker.get("task") == t.id:
            worker["task"] = None
    t.lease = None


def _lease_expired(v: RunView, r: Record) -> None:
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
    v.step_intents[r.key] = v.step_intents.get(r.key, 0) + 1
    if r.task is not None:
        v.open_steps.setdefault(r.task, {})[r.key] = r.payload.get("name", "")


def _close_step(v: RunView, r: Record) -> None:
    if r.task is not None:
        v.open_steps.get(r.task, {}).pop(r.key, None)


def _step_done(v: RunView, r: Record) -> None:
    v.steps[r.key] = r.payload
    _close_step(v, r)
    if r.task is not None:
        v.steps_by_task.setdefault(r.task, []).append(r.key)


def _step_failed(v: RunView, r: Record) -> None:
    v.step_failures.setdefault(r.key, []).append(r.why)
    _close_step(v, r)


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


def _policy_denied(v: RunView, r: Record) -> None:
    v.denials.append({"seq": r.seq, "why": r.why, **r.payload})


def _approval_granted(v: RunView, r: Record) -> None:
    v.approvals.append({"seq": r.seq, "why": r.why, **r.payload})


def _worker_started(v: RunView, r: Record) -> None:
    v.workers.setdefault(r.payload["worker"], {"last_seen_ms": r.ts_ms, "task": None, "pid": None})["pid"] = r.payload.get("pid")


_HANDLERS = {
    "run.started": _run_started, "run.resumed": _run_resumed, "run.halted": _run_halted,
    "run.finished": _run_finished, "sprint.started": _sprint_started,
    "sprint.finished": _sprint_finished, "task.planned": _task_planned,
    "task.assigned": _task_assigned, "task.reopened": _task_reopened, "lease.renewed": _lease_renewed,
    "lease.expired": _lease_expired, "lease.released": _lease_expired, "task.finished": _task_finished, "task.failed": _task_failed,
    "step.intent": _step_intent, "step.done": _step_done, "step.failed": _step_failed,
    "model.call": _model_call, "effect.intent": _effect_intent, "effect.done": _effect_done,
    "policy.denied": _policy_denied, "approval.granted": _approval_granted,
    "worker.started": _worker_started,
}

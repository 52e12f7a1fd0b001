"""Replay: the run rebuilt from its records, ``RunView = fold(records)``.

Status, resume, audit and export all start from a ``RunView``; none of them keeps state of its
own. The fold is pure: its result depends only on the records, in sequence order. The
coordinator keeps a live view by applying each record it appends, which is the same fold done
incrementally (``RunView.apply``).

The view is compact: it holds what status and scheduling need (tasks with their status, lease,
attempts, errors and step counts; sprints; workers; model spend; effects; the halt), bounded by
the size of the plan and the fleet, never by the length of the ledger. What grows with the
work (each task's inputs, each step's result and failure) stays in the ledger and is read on
demand through the storage (``reader.RunReader``).

A ``checkpoint`` record carries ``RunView.to_json()`` at a sequence number, so a reader can
start from the latest one (``RunView.from_json``) and fold only the records after it
(``reader.load_view``); ``fold`` of all the records from zero gives the same view.

What each record kind does to the view (and the task and sprint entries it creates) is in
``replay_rules``; ``TaskView``, ``SprintView`` and ``APPROVER`` are importable from here too.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from .leases import Lease
from .ledger.records import Record
from .replay_rules import APPROVER, GONE_WITH_SESSION, HANDLERS, SprintView, TaskView, new_worker

__all__ = ["APPROVER", "CHECKPOINT_FORMAT", "EVENT_KINDS", "GONE_WITH_SESSION", "RECENT_EVENTS", "RunStateName",
           "RunView", "SprintView", "TaskView", "fold"]

RunStateName = Literal["RUNNING", "HALTED", "JACKED_OUT"]

CHECKPOINT_FORMAT = 3
"""Layout of ``RunView.to_json()``; a checkpoint of another format is not used (the reader folds
from an earlier point instead). 2 added the leader lease of runs shared between hosts; 3 the
policy in force."""

EVENT_KINDS = frozenset({"run.started", "run.resumed", "run.halted", "run.finished", "worker.exited",
                         "lease.expired", "task.failed", "policy.denied"})
"""Record kinds kept in ``RunView.recent``: what a person watching the run wants to see."""

RECENT_EVENTS = 6
"""How many notable records ``RunView.recent`` keeps."""



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
        tasks: Tasks by id, in plan order.
        steps_done, steps_failed: Numbers of ``step.done`` and ``step.failed`` records.
        open_steps: Per leased task, ``{step key: step name}`` of intents with no result yet
            (the step its worker is in, or was in when it died); dropped when the lease ends.
        model: Model spend: ``calls``, ``input_tokens``, ``output_tokens``, ``cost_usd``.
        effects: Per effect key: ``{"intent": payload, "done": payload or None, "why"}``.
        workers: Per worker id: ``{"last_seen_ms", "task", "pid", "exited"}`` (``exited``: how
            it ended, None while it may be alive).
        sessions: Coordinator sessions, oldest first (``run.started``/``run.resumed`` payloads).
        approvals: ``approval.granted`` payloads.
        salvaged: The ``salvage`` payloads of the run's ``decision`` records: ``salvage`` kept
            only part of its records, so an effect may have happened whose records are gone
            (``effects.perform`` asks the target first).
        policy: The policy of the latest ``run.started``/``run.resumed`` (``hash``, ``source``,
            ``body``, ``refused_rules``); empty before ``run.started``.
        recent: The last ``RECENT_EVENTS`` records of ``EVENT_KINDS``, as ``[ts_ms, kind, why]``.
        last_seq, last_hash: The last folded record.
        policy_hash: Policy hash of the last coordinator record.
        records: Number of records folded.
        checkpointed: ``records`` when the last ``checkpoint`` record was folded (0: none yet).
        leader: The open leader lease (``leases.LEADER_TASK``), or None; only runs whose ledger
            is shared by several coordinators have one.
        leader_epoch: Epoch of the latest leader lease (0: never taken).
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
    steps_done: int = 0
    steps_failed: int = 0
    open_steps: dict[str, dict[str, str]] = field(default_factory=dict)
    model: dict[str, float] = field(
        default_factory=lambda: {"calls": 0, "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0})
    effects: dict[str, dict[str, Any]] = field(default_factory=dict)
    workers: dict[str, dict[str, Any]] = field(default_factory=dict)
    sessions: list[dict[str, Any]] = field(default_factory=list)
    approvals: list[dict[str, Any]] = field(default_factory=list)
    policy: dict[str, Any] = field(default_factory=dict)
    recent: list[list[Any]] = field(default_factory=list)
    last_seq: int = 0
    last_hash: str = ""
    policy_hash: str = ""
    records: int = 0
    checkpointed: int = 0
    leader: Lease | None = None
    leader_epoch: int = 0
    salvaged: list[dict[str, Any]] = field(default_factory=list)

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

    def checkpoint_due(self, every: int) -> bool:
        """True when a checkpoint should follow: at least ``every`` records, and at least as
        many records as the run has tasks (so that checkpoints, whose size grows with the
        plan, never outweigh the records between them), were folded since the last one."""
        return self.records - self.checkpointed >= max(every, len(self.tasks))

    # -- the fold ------------------------------------------------------------------------

    def apply(self, r: Record) -> None:
        """Folds one record into the view (records must come in sequence order).

        Raises:
            ValueError: the record belongs to another run, or comes out of order.
        """
        # The fields read once, by position (``Record`` is a tuple): this runs once per record
        # of every replay, a million times for a long history.
        seq, run_id, ts_ms, actor, kind = r[0], r[1], r[2], r[3], r[4]
        if run_id != self.run_id:
            raise ValueError(f"record {seq} is of run {run_id}, not {self.run_id}")
        if seq <= self.last_seq:
            raise ValueError(f"record {seq} comes after {self.last_seq}: records must be folded in order")
        if self.records == 0:
            self.started_ms = ts_ms
        self.records += 1
        if actor == "coordinator":
            if r[10]:  # policy_hash
                self.policy_hash = r[10]
        else:
            worker = self.workers.get(actor)
            if worker is None:
                self.workers[actor] = new_worker(ts_ms)
            else:
                worker["last_seen_ms"] = ts_ms
        handler = HANDLERS.get(kind)
        if handler is not None:
            handler(self, r)
        if kind in EVENT_KINDS:
            self.recent.append([ts_ms, kind, r[8]])
            del self.recent[:-RECENT_EVENTS]
        self.last_seq = seq
        self.last_hash = r[12]
        self.last_activity_ms = ts_ms

    def to_json(self) -> dict[str, Any]:
        """Returns the view as JSON-ready data (the ``view`` of a ``checkpoint`` payload).

        Every collection whose order matters is a list, so the canonical JSON of the ledger
        (which sorts object keys) keeps it: ``sprints`` as ``[id, status, [task ids]]``,
        ``tasks`` as ``[id, sprint, status, epoch, attempts, steps_done, steps_failed, lease,
        result, errors]``, ``open_steps`` as ``[task, [[key, name], ...]]``, and ``effects``
        and ``workers`` as ``[key, value]`` pairs. Nothing returned is shared with the view.
        """
        return {
            "run_id": self.run_id, "job": self.job, "state": self.state, "halt": self.halt,
            "started_ms": self.started_ms, "last_activity_ms": self.last_activity_ms,
            "finished_ms": self.finished_ms,
            "sprints": [[s.id, s.status, list(s.tasks)] for s in self.sprints.values()],
            "tasks": [[t.id, t.sprint, t.status, t.epoch, t.attempts, t.steps_done, t.steps_failed,
                       dataclasses.asdict(t.lease) if t.lease is not None else None, t.result, list(t.errors)]
                      for t in self.tasks.values()],
            "steps_done": self.steps_done, "steps_failed": self.steps_failed,
            "open_steps": [[task, [[k, n] for k, n in steps.items()]] for task, steps in self.open_steps.items()],
            "model": dict(self.model),
            "effects": [[k, dict(e)] for k, e in self.effects.items()],
            "workers": [[k, dict(w)] for k, w in self.workers.items()],
            "sessions": list(self.sessions), "approvals": list(self.approvals), "policy": dict(self.policy),
            "recent": [list(e) for e in self.recent],
            "last_seq": self.last_seq, "last_hash": self.last_hash, "policy_hash": self.policy_hash,
            "records": self.records, "checkpointed": self.checkpointed,
            "leader": dataclasses.asdict(self.leader) if self.leader is not None else None,
            "leader_epoch": self.leader_epoch,
            # Only when there is one, so the checkpoints written before the field existed
            # still equal the fold before them (``verify``).
            **({"salvaged": [dict(s) for s in self.salvaged]} if self.salvaged else {}),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "RunView":
        """Rebuilds a view from ``to_json()`` output (a checkpoint's ``view``).

        Raises:
            KeyError, TypeError, ValueError: ``data`` is not of the ``CHECKPOINT_FORMAT`` layout.
        """
        tasks = {}
        for tid, sprint, status, epoch, attempts, done, failed, lease, result, errors in data["tasks"]:
            tasks[tid] = TaskView(id=tid, sprint=sprint, status=status, epoch=epoch, attempts=attempts,
                                  steps_done=done, steps_failed=failed, lease=Lease(**lease) if lease else None,
                                  result=result, errors=list(errors))
        return cls(
            run_id=data["run_id"], job=data["job"], state=data["state"], halt=data["halt"],
            started_ms=data["started_ms"], last_activity_ms=data["last_activity_ms"], finished_ms=data["finished_ms"],
            sprints={sid: SprintView(id=sid, status=status, tasks=list(ids)) for sid, status, ids in data["sprints"]},
            tasks=tasks, steps_done=data["steps_done"], steps_failed=data["steps_failed"],
            open_steps={task: dict(steps) for task, steps in data["open_steps"]},
            model=dict(data["model"]), effects={k: dict(e) for k, e in data["effects"]},
            workers={k: dict(w) for k, w in data["workers"]}, sessions=list(data["sessions"]),
            approvals=list(data["approvals"]), policy=dict(data["policy"]), recent=[list(e) for e in data["recent"]],
            last_seq=data["last_seq"], last_hash=data["last_hash"], policy_hash=data["policy_hash"],
            records=data["records"], checkpointed=data["checkpointed"],
            leader=Lease(**data["leader"]) if data.get("leader") else None, leader_epoch=data.get("leader_epoch", 0),
            salvaged=[dict(s) for s in data.get("salvaged", ())])


def fold(records: Iterable[Record], *, run_id: str | None = None, base: RunView | None = None) -> RunView:
    """Folds records into a run view: the one way a run is rebuilt.

    Args:
        records: Records of one run in sequence order (other runs' records are skipped when
            ``run_id`` is given).
        run_id: The run to fold; taken from ``base`` or the first record when None.
        base: A view to continue from (e.g. rebuilt from a checkpoint); not modified.

    Returns:
        The folded view.

    Raises:
        ValueError: records of several runs without ``run_id``, or records out of order.
    """
    view = RunView.from_json(base.to_json()) if base is not None else None
    records = iter(records)
    if view is None:
        first = next(records, None)
        if first is None:
            return RunView(run_id=run_id or "")
        view = RunView(run_id=run_id or first.run_id)
        records = itertools.chain((first,), records)
    apply = view.apply
    if run_id is None:
        for r in records:
            apply(r)
    else:
        for r in records:
            if r[1] == run_id:  # run_id
                apply(r)
    return view

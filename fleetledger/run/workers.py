"""The worker protocol and its trust boundary: starting the worker processes (and their
egress), reading what they send, refusing what a worker may not claim (records of tasks it
does not hold, kinds it may not write, spend it did not make), and a worker's death."""

from __future__ import annotations

import hashlib
import math
import reprlib
from pathlib import Path
from typing import Any

from .. import errors, fsutil
from ..gate import Action
from ..ledger import NewRecord, Outcome, Refused
from ..ledger.records import canonical_json
from ..models import request_from_json
from ..reuse import record_problem
from ..pool import MAX_DEPTH, WorkerPool, WorkerProc, too_deep
from ..sandbox.egress import Destination, EgressForwarder, EgressRoute


WORKER_RECORD_KINDS = frozenset({"step.intent", "step.done", "step.failed", "model.call"})
"""The record kinds a worker may send; every other kind is written by the coordinator or a person."""

CHECKED_OPS = frozenset({"record", "finished", "failed", "released", "model", "heartbeat"})
"""The worker messages checked by ``_worker_overreach`` (all but ``hello`` and ``ready``, which
claim nothing; a message whose op is not text is refused before any of them)."""

TEXT_FIELDS: dict[Any, tuple[tuple[str, type], ...]] = {
    "record": (("kind", str), ("why", str), ("payload", dict)),
    "finished": (("result", dict),),
    "failed": (("error", str),),
    "released": (("why", str), ("reason", str)),
    "model": (("request", dict),),
}
"""The fields of each checked message that must have a type when present (the coordinator
slices, encodes and folds them)."""

MODEL_FIGURES = ("input_tokens", "output_tokens", "cost_usd")
"""The spend a worker's ``model.call`` record reports: each must be a finite number >= 0."""


class WorkersMixin:
    """The worker protocol and its trust boundary (mixed into ``Coordinator``, whose state it uses)."""

    def _ensure_pool(self) -> WorkerPool:
        if self.pool is None:
            ttl = self.options.lease_ttl_s
            self.pool = WorkerPool(
                sandbox=self.sandbox, job_module=self.job.worker_module,
                read_only=[Path(p) for p in self.job.read_only_paths()],
                scratch=self.workspace.root / "scratch", logs=self.workspace.logs,
                heartbeat_s=ttl / 3 if self.options.heartbeat_s is None else self.options.heartbeat_s,
                egress=self._start_egress())
            records = []
            # On a shared ledger worker ids name their host and workspace too: ``3fa2c1-w01``.
            prefix = f"{hashlib.sha256(self.member.encode()).hexdigest()[:6]}-" if self.shared else ""
            for n in range(1, self.options.workers + 1):
                worker = self.pool.start(f"{prefix}w{n:02d}")
                records.append(self._worker_started(worker))
            self.append(records)
        return self.pool

    def _start_egress(self) -> list[EgressRoute]:
        """Starts one forwarder per egress destination the gate allows now (none by default);
        a sandboxed worker reaches exactly those, through their unix sockets, and nothing else."""
        routes = []
        for n, destination in enumerate(self.policy.egress):
            if not self.gate.check(Action(kind="egress", target=destination)).allowed:
                continue
            folder = self.workspace.root / "egress"
            fsutil.private_dir(folder)
            socket_path = folder / f"{n}.sock"
            socket_path.unlink(missing_ok=True)
            forwarder = EgressForwarder(Destination.parse(destination), socket_path)
            forwarder.start()
            self._forwarders.append(forwarder)
            routes.append(forwarder.route)
        return routes

    def _stop_pool(self) -> None:
        """Stops the worker processes, then what carried their egress: the sandbox's part on
        the host, and the forwarders."""
        if self.pool is not None:
            self.pool.stop_all()
            self.pool = None
        self.sandbox.close()
        for forwarder in self._forwarders:
            forwarder.stop()
        self._forwarders.clear()

    def _worker_started(self, worker: WorkerProc) -> NewRecord:
        return self.new_record("worker.started", why=f"{worker.id} is pid {worker.pid}",
                               payload={"worker": worker.id, "pid": worker.pid, "sandbox": self.sandbox.name,
                                        **({"forked": True} if worker.forked else {})})

    def _on_message(self, worker: WorkerProc, message: dict[str, Any], batch: list[tuple[WorkerProc | None, NewRecord]]) -> None:
        op = message.get("op")
        if op == "ready":
            worker.ready = True
            worker.lost = False
            worker.task = None
            return
        if op == "hello":
            worker.started = True
            self._failed_starts = 0
            return
        task, epoch = message.get("task"), message.get("epoch")
        if worker.rejected:
            return
        text = None
        if not isinstance(op, str) or op in CHECKED_OPS:  # an op that is not text cannot even be looked up
            problem = None
            if not isinstance(op, str):
                problem = f"worker {worker.id} sent a message whose op is not text ({_shown(op)})"
            elif op in ("record", "finished"):  # encoded first: the checks below compare parts of it (a reused result)
                text, problem = _payload_text(worker, message.get("payload" if op == "record" else "result", {}))
            allowed = self._reserved.get(task, 0) if isinstance(task, str) else 0
            problem = problem or _worker_overreach(worker, message, allowed)
            if problem is not None:
                # A worker reads hostile files and may have been taken over: it speaks only for
                # its own leases, and only in the kinds a task's steps produce.
                worker.rejected = True
                worker.proc.kill()
                self._overreach = self._overreach or f"{problem} (task {worker.task[0] if worker.task else '?'})"
                batch.append((None, self.new_record(
                    "policy.denied", why=problem,
                    payload={"action": "worker message", "target": worker.id, "rule": problem, "op": _shown(op),
                             "kind": _shown(message.get("kind")), "task": _shown(task), "epoch": _shown(epoch)})))
                return
        if op == "record":
            if message["kind"] == "model.call":
                self._calls_made[task] = self._calls_made.get(task, 0) + 1
            batch.append((worker, self.new_record(message["kind"], key=message.get("key"), task=task, epoch=epoch,
                                                  why=message.get("why", ""), payload=message.get("payload"),
                                                  actor=worker.id, payload_json=text)))
        elif op == "heartbeat":
            lease = self.view.tasks[task].lease if task in self.view.tasks else None
            if lease is not None and lease.epoch == epoch and lease.worker == worker.id:
                expires = self.clock() + lease.ttl_ms
                batch.append((worker, self.new_record("lease.renewed", task=task, epoch=epoch,
                                                      payload={"worker": worker.id, "expires_ms": expires})))
        elif op == "finished":
            batch.append((worker, self.new_record("task.finished", key=task, task=task, epoch=epoch,
                                                  why=f"{worker.id} finished {task}", payload=message.get("result", {}),
                                                  actor=worker.id, payload_json=text)))
        elif op == "failed":
            batch.append((worker, self.new_record("task.failed", task=task, epoch=epoch, why=message.get("error", "")[:500],
                                                  payload={"retry": bool(message.get("retry", True))}, actor=worker.id)))
        elif op == "released":
            if message.get("reason") == "disk":  # a worker's disk is full: the run halts once this turn is recorded
                self._disk_full = self._disk_full or str(message.get("why", ""))[:500]
            batch.append((worker, self.new_record("lease.released", task=task, epoch=epoch, why=message.get("why", ""),
                                                  payload={"reason": message.get("reason")}, actor=worker.id)))
        elif op == "model":
            self._ask_model(worker, message)

    def _reply(self, worker: WorkerProc, reply: dict[str, Any]) -> None:
        if self.pool is not None:
            self.pool.send(worker, reply)

    def _on_death(self, worker: WorkerProc) -> list[NewRecord]:
        how = self.sandbox.describe_exit(worker.proc.returncode)
        out = [self.new_record("worker.exited", why=f"{worker.id} (pid {worker.pid}) {how}",
                               payload={"worker": worker.id, "pid": worker.pid, "returncode": worker.proc.returncode})]
        for lease in self.view.leases():
            if lease.worker == worker.id and lease.session == self.session:
                for key, name in self.view.open_steps.get(lease.task, {}).items():
                    out.append(self.new_record("step.failed", key=key, task=lease.task, epoch=lease.epoch,
                                               why=f"{worker.id} (pid {worker.pid}) {how} during this step",
                                               payload={"name": name}))
                out.append(self.new_record("lease.expired", task=lease.task, epoch=lease.epoch,
                                           why=f"holder {worker.id} (pid {worker.pid}) {how}",
                                           payload={"worker": worker.id, "cause": "worker died"}))
        return out

    def _after_append(self, batch: list[tuple[WorkerProc | None, NewRecord]], outcomes: list[Outcome], pool: WorkerPool) -> None:
        for (worker, record), outcome in zip(batch, outcomes):
            if record.task is not None and record.kind in ("task.finished", "task.failed", "lease.released", "lease.expired"):
                self._reserved.pop(record.task, None)
                self._calls_made.pop(record.task, None)
            if worker is None or not isinstance(outcome, Refused):
                continue
            if isinstance(outcome.error, errors.StaleEpochError):
                self.append([self.new_record("decision", why=f"fenced {worker.id}: {outcome.error}",
                                             payload={"refused": record.kind, "worker": worker.id, "task": record.task,
                                                      "epoch": record.epoch, "key": record.key})])
                pool.send(worker, {"op": "fenced", "task": record.task})
                if worker.task is not None and worker.task[0] == record.task:
                    worker.task = None
                    worker.lost = True
            elif isinstance(outcome.error, errors.ConflictingResultError) and record.task is not None:
                task = self.view.tasks.get(record.task)
                if task is not None and task.lease is not None:
                    self.append([self.new_record("task.failed", task=record.task, epoch=task.lease.epoch,
                                                 why=str(outcome.error)[:500], payload={"retry": False})])


def _worker_overreach(worker: WorkerProc, message: dict[str, Any], calls_allowed: int) -> str | None:
    """Returns why a worker's task message must be refused, or None when it may be appended
    (the ledger's fence then checks its epoch against the lease, as for any record).

    A worker speaks only for a ``(task, epoch)`` leased to it; it records only the kinds of
    ``WORKER_RECORD_KINDS``, under keys of its own task's planned steps (``step_key``:
    ``<task>/<name>@<hash>``), with a spend that is not negative; it asks the coordinator for
    at most ``calls_allowed`` model calls per lease, and only while it holds the lease.
    """
    op, task, epoch, key = message.get("op"), message.get("task"), message.get("epoch"), message.get("key")
    problem = _message_problem(message, op, task, epoch, key, worker, calls_allowed)
    return None if problem is None else f"worker {worker.id} {problem}"


def _message_problem(message: dict[str, Any], op: Any, task: Any, epoch: Any, key: Any, worker: WorkerProc,
                     calls_allowed: int) -> str | None:
    """``_worker_overreach``'s checks; what is wrong, said after the worker's name (the
    text is built only for a message refused: this runs for every message of every worker)."""
    if not isinstance(task, str) or type(epoch) is not int:
        return f"sent a {op!r} message whose task or epoch is not a task's ({_shown(task)}, {_shown(epoch)})"
    for name, kind in TEXT_FIELDS.get(op, ()):
        if name in message and not isinstance(message[name], kind):
            return f"sent a {op!r} message whose {name} is not {'text' if kind is str else 'an object'}"
    if op == "record" and message.get("kind") not in WORKER_RECORD_KINDS:
        return f"sent a {message.get('kind')!r} record; workers may record only {', '.join(sorted(WORKER_RECORD_KINDS))}"
    lease = (task, epoch)
    if lease not in worker.assigned:
        return f"spoke for task {task!r} at epoch {epoch!r}, which was never leased to it"
    if op == "model" and lease != worker.task:
        return f"asked for a model call for task {task!r} at epoch {epoch!r}, which it no longer holds"
    if op in ("record", "model"):
        names, prefix = worker.assigned[lease], task + "/"
        if not isinstance(key, str) or not key.startswith(prefix) \
                or (names is not None and key[len(prefix):].rpartition("@")[0] not in names):
            return f"used the key {_shown(key)!r}, which is not a step of its task {task!r}"
    if op == "record" and message.get("kind") == "step.done":
        try:
            problem = record_problem(message.get("payload") or {}, worker.offered.get(lease))
        except (ValueError, TypeError) as exc:  # a result JSON cannot spell (NaN), compared with an offer
            problem = f"sent a result the ledger cannot store ({exc})"
        if problem is not None:
            return problem
    if op == "record" and message.get("kind") == "model.call":
        payload = message.get("payload") or {}
        bad = [f for f in MODEL_FIGURES if f in payload and not _spend_ok(payload[f])]
        if bad:
            return f"reported a model call with {', '.join(f'{f}={payload[f]!r}' for f in bad)}"
    if op == "model":
        if too_deep(message.get("request")):
            return f"asked for a model call with a request nested deeper than {MAX_DEPTH} levels"
        try:
            request_from_json(message["request"])
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            return f"asked for a model call with a request the coordinator cannot read ({type(exc).__name__}: {exc})"[:500]
        asked = worker.asked.setdefault(lease, set())
        asked.add(str(key))
        if len(asked) > calls_allowed:
            return f"asked for {len(asked)} model calls on task {task!r}; its lease allows {calls_allowed}"
    return None


def _shown(value: Any) -> Any:
    """A field of a refused message as the denial records it: text, a whole number or None as
    sent, anything else (a NaN, a list, a nested value) as a short ``reprlib`` form (bounded in
    depth: a value nested a thousand deep must not exhaust the stack that shows it)."""
    if value is None or type(value) is int or isinstance(value, str):
        return value if not isinstance(value, str) else value[:200]
    return reprlib.repr(value)[:200]


def _payload_text(worker: WorkerProc, payload: Any) -> tuple[str | None, str | None]:
    """Returns ``(canonical JSON of a worker's payload, None)``, or ``(None, why it cannot be
    recorded)``: a value JSON has no spelling for (NaN, infinity), or one nested deeper than
    ``pool.MAX_DEPTH`` (every reader of the ledger decodes it again, at whatever depth of its own
    calls), must be refused here, where the worker is known, not met by the ledger's append or
    a later reader. Only a text longer than two brackets a level can be that deep, so the
    usual small payload is never walked."""
    try:
        text = canonical_json(payload)
    except (ValueError, TypeError) as exc:
        return None, f"worker {worker.id} sent a payload the ledger cannot store ({exc})"
    if len(text) > 2 * MAX_DEPTH and too_deep(payload):
        return None, f"worker {worker.id} sent a payload nested deeper than {MAX_DEPTH} levels"
    return text, None


def _spend_ok(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0


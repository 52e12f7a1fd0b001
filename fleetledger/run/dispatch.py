"""Planning and dispatch: a sprint's plan, one loop turn (assigning pending tasks to idle
workers under leases with fencing tokens, with the context each task needs and the actions
the gate allows now), and taking back leases whose heartbeats stopped."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from typing import Any

from .. import faults
from ..gate import Action, Decision
from ..jobs.base import TaskSpec
from ..leases import expired
from ..ledger import NewRecord
from ..pool import WorkerPool, WorkerProc
from ..reader import RunReader
from ..replay import TaskView
from .host import atomic
from .locality import next_tasks
from .options import BROKER_POLL_S, MAX_FAILED_STARTS, SHARED_POLL_S, RunResult, lease_ttl_ms


LARGE_CONTEXT = 64
"""A context value with more items than this (a listing of the repository's files) is sent to a
worker once, then named by its digest."""
UNCONFINED_TESTS = ("not run: the workers run without a sandbox (--sandbox none), and the repository's tests are "
                    "its own code: they run only in a sandbox (no network, no host files)")
"""Why a task's ``run_tests`` (a job asking to run the repository's code) is turned off under
``--sandbox none``; handed to the worker as ``tests_not_run``."""


class DispatchMixin:
    """Planning and dispatch (mixed into ``Coordinator``, whose state it uses)."""

    def _plan(self, sprint: str) -> None:
        specs = self.job.plan(sprint, self.reader())
        # A sprint planned afresh after an upgrade (``upgrade``) plans ids its superseded tasks
        # had: those get the round's suffix, as the sprint's own records do (``_round_key``).
        specs = [spec if spec.id not in self.view.tasks else replace(spec, id=f"{spec.id}@{self.view.last_seq + 1}")
                 for spec in specs]
        records = [self.new_record("sprint.started", key=self._round_key("sprint.started", sprint),
                                   why=f"plan {sprint}: {len(specs)} tasks", payload={"tasks": len(specs), "sprint": sprint})]
        records += [self.new_record("task.planned", key=spec.id, task=spec.id, why=spec.why,
                                    payload={"sprint": sprint, "inputs": spec.inputs}) for spec in specs]
        self.append(atomic(records))
        faults.hit("coordinator.after_plan")
        self._write_state(force=True)

    def _round_key(self, kind: str, sprint: str) -> str:
        """The key of a sprint's ``sprint.started``/``sprint.finished``: the sprint for its first
        round, ``<sprint>@<seq>`` for a later round of a reopened sprint (the kinds are unique
        per key; the payload's ``sprint`` names it)."""
        assert self.storage is not None
        if self.storage.unique_record(self.view.run_id, kind, sprint) is None:
            return sprint
        return f"{sprint}@{self.view.last_seq + 1}"

    def _sprint_over(self, sprint: str) -> bool:
        return all(self.view.tasks[t].status in ("finished", "failed") for t in self.view.sprints[sprint].tasks)

    def _turn(self, sprint: str) -> RunResult | None:
        """One loop turn: assign, wait for messages, append them, take back dead leases; or
        settle what needs no worker (``run.reusing``), after handing the sprint's other tasks to
        the workers (started now if they are not: they boot while the coordinator records)."""
        settling = self._settle_check(sprint)
        if settling:
            ids = {task.id for task, _, _ in settling}
            if any(t not in ids and self.view.tasks[t].status in ("pending", "leased") for t in self.view.sprints[sprint].tasks):
                halted = self._assign(sprint, self._ensure_pool(), skip=ids)
                if halted is not None:
                    return halted
            self._settle(settling)
            self._write_state()
            return None
        pool = self._ensure_pool()
        halted = None if self._halting() else self._assign(sprint, pool)
        if halted is not None:
            return halted
        messages, dead = pool.poll(self._poll_timeout_s())
        batch: list[tuple[WorkerProc | None, NewRecord]] = []
        for worker, message in messages:
            self._on_message(worker, message, batch)
        if batch:
            outcomes = self.append([r for _, r in batch])
            self._after_append(batch, outcomes, pool)
        if self._overreach is not None:
            return self._halt("worker", f"{self._overreach}: a file it read may have taken over its tool, so the run "
                              "halts; find the file with `fleetledger audit`, exclude it (.fleetledger.toml or the "
                              "policy), then `fleetledger resume`")
        if self.broker is not None:
            for ticket in self._to_submit:
                self.broker.submit(ticket)
            self._to_submit.clear()
            self._settle_calls(pool)
        if dead:
            # After the dead workers' last messages are folded in, so the step each one was in
            # (its open intent) is known.
            self.append([r for worker in dead for r in self._on_death(worker)])
        expired_leases = self._expire_leases(pool)
        if expired_leases:
            self.append(expired_leases)
        tripped = self._check_breakers()
        if tripped is not None:
            return tripped
        if batch or dead or expired_leases:
            for worker in dead:
                if not worker.started:
                    self._failed_starts += 1
                    if self._failed_starts >= MAX_FAILED_STARTS:
                        return self._halt("worker", f"worker processes cannot start ({self._failed_starts} died before "
                                          f"saying hello); last log lines of {worker.id}: {pool.log_tail(worker.id)}")
                if self._stop_reason is None:
                    restarted = pool.start(worker.id)
                    self.append([self._worker_started(restarted)])
            if self.on_progress is not None:
                self.on_progress(self.view)
        self._write_state()
        return None

    def _poll_timeout_s(self) -> float:
        now = self.clock()
        nearest = min((lease.expires_ms for lease in self.view.leases()), default=now + 1000)
        longest = BROKER_POLL_S if self.broker is not None and self.broker.busy else SHARED_POLL_S if self.shared else 1.0
        return max(0.01, min(longest, (nearest - now) / 1000 + 0.01))

    def _assign(self, sprint: str, pool: WorkerPool, *, skip: frozenset[str] | set[str] = frozenset()) -> RunResult | None:
        """Leases pending tasks (but those in ``skip``) to idle workers, and sends them."""
        idle = [w for w in pool.workers.values() if w.ready and w.task is None and not w.lost]
        pending = [self.view.tasks[t] for t in self.view.sprints[sprint].tasks
                   if self.view.tasks[t].status == "pending" and t not in skip]
        if self.shared and pending:  # each host starts elsewhere in the plan, so that hosts rarely claim the same task
            start = int(self.session, 16) % len(pending)
            pending = pending[start:] + pending[:start]
        plan = self.view.sprints[sprint].tasks
        position = {t: i for i, t in enumerate(plan)} if idle and pending else {}
        if not self.shared and len(pending) > 1 and idle:
            # Each idle worker goes on from its own last task (``locality``): the first tasks
            # below are the ones chosen for the idle workers, in their order.
            given = {w: at for w, (s, at) in self._last_position.items() if s == sprint}
            first = [plan[i] for i in next_tasks([w.id for w in idle], [position[t.id] for t in pending], given)]
            pending = [self.view.tasks[t] for t in first] + [t for t in pending if t.id not in first]
        run = self.reader()
        records: list[NewRecord] = []
        sends: list[tuple[WorkerProc, TaskView, TaskSpec, dict[str, str]]] = []
        quota_blocked = False
        for task in pending:
            if self._attempts.get(task.id, 0) >= self.options.max_task_attempts:
                last = task.errors[-1] if task.errors else "no error recorded"
                return self._halt("task", f"task {task.id} failed {self._attempts[task.id]} times in this session; "
                                  f"last: {last}; fix the cause, then `fleetledger resume`",
                                  extra={"task": task.id})
            if not idle:
                continue
            (spec,) = run.planned([task.id])
            denial = self._check_actions(spec)
            if denial is not None:
                return denial
            denied = self._denied_steps(spec)
            records.extend(self.new_record("policy.denied", task=task.id, why=rule,
                                           payload={"action": "read", "step": name, "rule": rule})
                           for name, rule in denied.items())
            needed = self.job.calls_needed(spec, run)
            allowed = needed
            if needed and self.model_quota is not None:
                allowed = min(needed, self._calls_left())
                if allowed == 0:
                    quota_blocked = True
                    continue
            worker = idle.pop(0)
            self._last_position[worker.id] = (sprint, position[task.id])
            self._attempts[task.id] = self._attempts.get(task.id, 0) + 1
            self._reserved[task.id] = allowed
            self._calls_made[task.id] = 0
            ttl_ms = lease_ttl_ms(self.options.lease_ttl_s, task.attempts)
            records.append(self.new_record(
                "task.assigned", task=task.id, epoch=task.epoch + 1,
                why=f"{worker.id} takes {task.id} (attempt {task.attempts + 1})",
                payload={"worker": worker.id, "pid": worker.pid, "expires_ms": self.clock() + ttl_ms, "ttl_ms": ttl_ms,
                         "session": self.session, "calls_allowed": allowed}))
            sends.append((worker, task, spec, denied))
        if records:
            self.append(records)
            faults.hit("coordinator.after_assign")
        claimed = [(w, t, spec, d) for w, t, spec, d in sends if t.lease is not None and t.lease.worker == w.id]
        for _, task, _, _ in (s for s in sends if s not in claimed):  # another coordinator took it first
            self._attempts[task.id] -= 1
            self._reserved.pop(task.id, None)
            self._calls_made.pop(task.id, None)
        sends = claimed
        recorded = run.step_results(t.id for _, t, _, _ in sends)
        failures = self._step_failures([t.id for _, t, _, _ in sends], recorded)
        for worker, task, spec, denied in sends:
            worker.ready = False
            worker.task = (task.id, task.epoch)
            worker.assigned[worker.task] = self.job.step_names(spec)
            message = {"op": "assign", "task": task.id, "epoch": task.epoch, "sprint": task.sprint,
                       "inputs": spec.inputs, "calls_allowed": self._reserved.get(task.id, 0),
                       "done": {p["name"]: p["input_hash"] for p in recorded[task.id].values()},
                       "failures": failures[task.id], "denied": denied,
                       "context": worker.compact(*self._context(spec, run))}
            reuse = self._reuse_message(spec, task.sprint)
            if reuse is not None:
                message["reuse"] = reuse
                worker.offered = {worker.task: reuse}
            pool.send(worker, message)
        if quota_blocked and not any(self.view.tasks[t].status == "leased" for t in self.view.sprints[sprint].tasks):
            used = int(self.view.model["calls"])
            limit = "--model-quota" if self.model_quota == self.options.model_quota else "the policy's max_model_calls"
            return self._halt("quota", f"model quota exhausted: {used} of {self.model_quota} calls used ({limit}); "
                              f"raise {limit} and run the same command to continue",
                              extra={"calls_used": used, "quota": self.model_quota})
        return None

    def _step_failures(self, task_ids: list[str], recorded: dict[str, dict[str, Any]]) -> dict[str, dict[str, int]]:
        """Per task, ``{step name: times it failed}`` for its steps that failed and have no
        result (``recorded``: the tasks' ``{step key: step.done payload}``)."""
        out: dict[str, dict[str, int]] = {t: {} for t in task_ids}
        for r in self.reader().step_failures(task_ids):
            if r.key in recorded[r.task] or not (r.key or "").startswith(f"{r.task}/"):
                continue
            name = r.key[len(r.task) + 1:].rsplit("@", 1)[0]
            out[r.task][name] = out[r.task].get(name, 0) + 1
        return out

    def _check_actions(self, task: TaskSpec) -> RunResult | None:
        for action in self.job.actions(task):
            decision = self.gate.check(action)
            if not decision.allowed:
                self.append([self.new_record("policy.denied", task=task.id, why=decision.rule,
                                             payload={"action": action.kind, "target": action.target, "rule": decision.rule})])
                return self._halt("policy", f"policy denied {action.kind} {action.target!r} for task {task.id}: {decision.rule}")
        return None

    def _context(self, task: TaskSpec, run: "RunReader") -> tuple[dict[str, Any], dict[str, str]]:
        """The job's context for a task, with the extra files its steps may read that the
        policy in force allows (``Job.context_reads``), as ``"readable"``; and, for its large
        values (more than ``LARGE_CONTEXT`` items), their digests, so that each goes to a worker
        once (``WorkerProc.compact``)."""
        context = self.job.task_context(task, run)
        if context.get("run_tests") and self.sandbox.name == "none":
            # the repository's own tests are its code: run only in a sandbox (no network, no host files)
            context["run_tests"] = False
            context["tests_not_run"] = UNCONFINED_TESTS
        reads = self.job.context_reads(task, run)
        if reads:
            known = self._large.get(id(reads))
            if known is None or known[0] is not reads:
                allowed = sorted(key for key, path in reads.items() if self._read_decision(path).allowed)
                known = (reads, allowed, "")
                self._large[id(reads)] = known
            context["readable"] = known[1]
        digests = {}
        for key, value in context.items():
            if isinstance(value, (dict, list)) and len(value) > LARGE_CONTEXT:
                cached = self._large.get(id(value))
                if cached is None or cached[0] is not value or not cached[2]:
                    digest = hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()
                    cached = (value, value, digest)
                    self._large[id(value)] = cached
                digests[key] = cached[2]
        return context, digests

    def _denied_steps(self, task: TaskSpec) -> dict[str, str]:
        """``{step name: rule}`` for the task's steps whose reads the policy in force denies."""
        denied = {}
        for name, path in self.job.step_reads(task).items():
            decision = self._read_decision(path)
            if not decision.allowed:
                denied[name] = decision.rule
        return denied

    def _read_decision(self, path: str) -> Decision:
        """The gate's decision on reading ``path``, asked once per session (the policy in force
        is fixed for a session)."""
        decision = self._read_decisions.get(path)
        if decision is None:
            decision = self._read_decisions[path] = self.gate.check(Action(kind="read", target=path))
        return decision

    def _expire_leases(self, pool: WorkerPool) -> list[NewRecord]:
        now = self.clock()
        out = []
        for lease in self.view.leases():
            if expired(lease, now):
                silent_s = (now - lease.renewed_ms) / 1000
                out.append(self.new_record("lease.expired", task=lease.task, epoch=lease.epoch,
                                           why=f"no heartbeat from {lease.worker} for {silent_s:.1f} s (ttl {self.options.lease_ttl_s:g} s)",
                                           payload={"worker": lease.worker, "cause": "heartbeat timeout"}))
                holder = pool.workers.get(lease.worker)
                if holder is not None and holder.task == (lease.task, lease.epoch):
                    holder.lost = True
                    holder.task = None
                    pool.send(holder, {"op": "fenced", "task": lease.task})
        return out



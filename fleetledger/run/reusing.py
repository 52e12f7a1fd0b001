"""Result reuse on the coordinator: the offers made with each assignment, the tasks it settles
itself when every step has a result that still holds, and the shared cache filled when a run
finishes (``fleetledger.reuse`` says how a result is keyed and when it is reused;
``run.workers`` checks a worker's reuse claims).

A task whose every step has an offered result that still holds (the job keys its steps as its
worker would, ``Job.known_steps``, and the same ``steps.pick_offer`` chooses) needs no worker:
the coordinator leases it to itself (``task.assigned`` to ``COORDINATOR``), records each
step's ``step.done`` as a worker that reused it would (``steps.reused_payload``: the result,
its ``reuse`` claim and the ``reused`` pointer), and finishes it, many tasks per commit. The
lease is the same fence a worker's is: on a shared ledger only the coordinator whose
assignment the ledger accepted records the steps, and a crash between the two commits leaves
a lease that the next start takes back, as any other.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from .. import errors, faults
from ..jobs.base import KnownTask, TaskSpec
from ..ledger import NewRecord
from ..replay import TaskView
from ..replay_rules import COORDINATOR
from ..reuse import Offers, caught_worker, sprint_salt
from ..result_cache import ResultCache
from ..steps import pick_offer, reuse_claim, reused_payload, reused_payload_text, step_key
from .options import lease_ttl_ms

Pick = tuple[str, str, dict[str, str], dict[str, Any]]
"""A step settled from an offer: its name, input hash, reuse claim and the offer taken."""
Settled = tuple[TaskView, list[Pick], dict[str, Any]]
"""A task settled on the coordinator: the task, its steps' picks and its ``task.finished`` payload."""

SETTLE_BATCH_RECORDS = 5_000
"""Step records per commit when the coordinator settles tasks itself (each commit also holds
the tasks' ``task.finished``, after one that holds their ``task.assigned``)."""


class ReuseMixin:
    """Result reuse (mixed into ``Coordinator``, whose state it uses)."""

    def _offers(self) -> Offers | None:
        """The session's ``Offers`` (None when reuse is off, ``RunOptions.reuse``)."""
        if not self.options.reuse:
            return None
        if getattr(self, "_offers_index", None) is None:
            cache = ResultCache(Path(self.options.cache)) if self.options.cache else None
            self._offers_index = Offers(self.storage, cache)
        return self._offers_index

    def _check_cache(self) -> None:
        """Refuses a result cache (``--cache``) inside a folder the job reads, before anything
        in it is read: the repository would control it, and a cache decides what later scans
        report for unchanged files (an entry is checked for damage, not for who wrote it). A
        cache inside the workspace is accepted: the workspace was checked to be made here by
        this user (``Workspace.check_made_here``, called first).

        Raises:
            UsageError: the cache folder (or what its path resolves to) is inside a scanned
                folder; the message says how to go on.
        """
        if not self.options.cache or not self.options.reuse:
            return
        cache = Path(self.options.cache).expanduser()
        places = (cache.absolute(), cache.resolve())
        if all(place.is_relative_to(self.workspace.root.resolve()) for place in places):
            return
        for folder in (Path(p).resolve() for p in self.job.read_only_paths()):
            if any(place.is_relative_to(folder) for place in places):
                raise errors.UsageError(
                    f"the result cache {self.options.cache} is inside the scanned folder {folder}: a repository can "
                    "ship a cache whose entries hide findings in its files; give --cache a folder outside the "
                    "scanned tree (nothing in it was read)")

    def _salt(self, sprint: str) -> str | None:
        """The sprint's salt (``reuse.sprint_salt``), or None when the job does not say which
        code decides the sprint (its results are then never reused)."""
        parts = self.job.sprint_code().get(sprint)
        return None if parts is None else sprint_salt(self.code, parts, self.policy.hash)

    def _reuse_message(self, spec: TaskSpec, sprint: str) -> dict[str, Any] | None:
        """The assignment's ``reuse``: ``{"salt", "offers"}`` for the task's steps that have
        recorded results under this session's salt; ``{"salt"}`` alone when none has (the
        worker still keys what it records); None when results of this sprint are not keyed.

        Raises:
            LedgerError: the ledger cannot be read.
        """
        salt = self._salt(sprint)
        if salt is None:
            return None
        offers = self._offers()
        names = self.job.step_names(spec)
        found = offers.offers(salt, sorted(names)) if offers is not None and names else {}
        return {"salt": salt, "offers": found}

    def _settle_check(self, sprint: str) -> list[Settled]:
        """The sprint's pending tasks the coordinator can settle itself: each with every step
        an offered result that still holds (module docstring). Each task is considered once per
        session (a task left to a worker stays with the workers). Nothing is appended.

        Raises:
            LedgerError: the ledger cannot be read.
        """
        salt = self._salt(sprint)
        offers = self._offers()
        if salt is None or offers is None or self._halting() or offers.none_for(salt):
            return []  # (a first run: the tasks' contexts and step keys are not worked out for nothing)
        checked = self._settle_checked
        tasks = [self.view.tasks[t] for t in self.view.sprints[sprint].tasks if t not in checked]
        tasks = [t for t in tasks if _untouched(t)]
        checked.update(self.view.sprints[sprint].tasks)
        if not tasks:
            return []
        run = self.reader()
        ready: list[tuple[TaskView, TaskSpec, dict[str, Any]]] = []
        for task, spec in zip(tasks, run.planned(t.id for t in tasks)):
            # A task whose actions or step reads the policy denies goes to a worker's path,
            # which records the denial (or halts the run).
            if any(not self.gate.check(action).allowed for action in self.job.actions(spec)) or self._denied_steps(spec):
                continue
            ready.append((task, spec, self._context(spec, run)[0]))
        known = self.job.known_steps([(spec, context) for _, spec, context in ready], run)
        settled: list[Settled] = []
        for task, spec, _ in ready:
            plan = known.get(spec.id)
            picks = self._picks(spec, plan, salt, offers) if plan is not None else None
            if picks is not None and plan is not None:
                settled.append((task, picks, plan.summary))
        return settled

    def _settle(self, settled: list[Settled]) -> None:
        """Records the tasks ``_settle_check`` found, in batches of about
        ``SETTLE_BATCH_RECORDS`` steps.

        Raises:
            LedgerError: the ledger cannot be written.
        """
        batch: list[Settled] = []
        size = 0
        for item in settled:
            batch.append(item)
            size += len(item[1])
            if size >= SETTLE_BATCH_RECORDS:
                self._settle_batch(batch)
                batch, size = [], 0
        if batch:
            self._settle_batch(batch)
        if settled and self.on_progress is not None:
            self.on_progress(self.view)

    def _picks(self, spec: TaskSpec, plan: KnownTask, salt: str,
               offers: Offers) -> list[Pick] | None:
        """``[(step name, input hash, reuse claim, offer)]`` for every step of the task, or None
        when a step has no offered result that still holds (or the job keyed other steps than
        the task's: then a worker runs it)."""
        names = self.job.step_names(spec)
        if names is None or {step.name for step in plan.steps} != names or len(plan.steps) != len(names):
            return None
        found = offers.offers(salt, sorted(names), texts=True)
        picks = []
        for step in plan.steps:
            claim = reuse_claim(salt, step.name, step.inputs_hash)
            offer = pick_offer(found.get(step.name, ()), claim, step.still_valid)
            if offer is None:
                return None
            picks.append((step.name, step.inputs_hash, claim, offer))
        return picks

    def _settle_batch(self, batch: list[Settled]) -> None:
        """Leases a batch of tasks to the coordinator (one commit), then records the reused
        steps and the end of each task whose lease the ledger accepted (a second commit).

        A task is leased only if the view still has it pending and untouched: the check that
        found it ran on an older view, and the appends since (the other tasks' assignments)
        folded what other hosts recorded meanwhile (a worker there may have finished it). The
        epoch comes from that same, current view, so the ledger's fence refuses the lease if
        the view is older than the ledger."""
        now = self.clock()
        assignments = []
        batch = [item for item in batch if _untouched(self.view.tasks[item[0].id])]
        for task, _, _ in batch:
            task = self.view.tasks[task.id]
            ttl_ms = lease_ttl_ms(self.options.lease_ttl_s, task.attempts)
            assignments.append(self.new_record(
                "task.assigned", task=task.id, epoch=task.epoch + 1,
                why=f"the coordinator settles {task.id}: every step has a result that still holds",
                payload={"worker": COORDINATOR, "pid": os.getpid(), "expires_ms": now + ttl_ms, "ttl_ms": ttl_ms,
                         "session": self.session, "calls_allowed": 0}))
        self.append(assignments)
        faults.hit("coordinator.after_settle_assign")
        records: list[NewRecord] = []
        for task, picks, summary in batch:
            lease = self.view.tasks[task.id].lease
            if lease is None or lease.worker != COORDINATOR or lease.session != self.session:
                continue  # another coordinator of a shared ledger took it first
            for name, inputs_hash, claim, offer in picks:
                why, payload = reused_payload(name, inputs_hash, claim, offer)
                stored = offer.get("stored")  # the result as stored: not encoded again
                records.append(self.new_record(
                    "step.done", key=step_key(task.id, name, inputs_hash), task=task.id, epoch=lease.epoch, why=why,
                    payload=payload, payload_json=None if stored is None else reused_payload_text(stored, offer["from"])))
            records.append(self.new_record("task.finished", key=task.id, task=task.id, epoch=lease.epoch,
                                           why=f"the coordinator settled {task.id}: {len(picks)} step(s) reused",
                                           payload=dict(summary)))
        self.append(records)
        faults.hit("coordinator.after_settle")

    def _fill_cache(self) -> None:
        """Writes this run's keyed step results into the shared cache (``--cache``), once the
        run finished. A cache that cannot be written is a warning: the run's results are in
        its ledger, and only a later run's reuse is lost. A run where a worker was caught
        (``reuse.caught_worker``) adds nothing, as its ledger offers nothing.

        Raises:
            LedgerError: the ledger cannot be read.
        """
        if not self.options.cache or not self.options.reuse:
            return
        if any(caught_worker(record) for record in self.storage.read(self.view.run_id)):
            return
        cache = ResultCache(Path(self.options.cache))
        try:
            for record in self.storage.read(self.view.run_id):
                payload = record.payload
                reuse = payload.get("reuse") if record.kind == "step.done" else None
                if isinstance(reuse, dict) and isinstance(payload.get("result"), dict):
                    origin = payload.get("reused") or {"run": record.run_id, "seq": record.seq}
                    cache.put(reuse["salt"], payload["name"], reuse["key"], payload["result"], origin)
        except OSError as exc:
            print(f"warning: the result cache {self.options.cache} could not be filled ({exc}); later runs will "
                  "redo this run's work", file=sys.stderr)


def _untouched(task: TaskView) -> bool:
    """True for a pending task no worker has recorded a step of (the coordinator may settle it)."""
    return task.status == "pending" and task.steps_done == 0 and task.steps_failed == 0

"""The coordinator: the trusted process that runs a run, and the writer of its ledger.

There is one way to start: recovery. ``Coordinator.run`` takes the workspace's run lock, folds
the run from the ledger, records ``run.started`` or ``run.resumed``, takes back the leases that
a dead predecessor left, and then drives the sprints: plan a sprint's tasks, lease them to
worker processes, append what the workers send (many workers' records grouped into one durable
commit per loop turn), take back leases whose heartbeats stopped, and restart workers that die.
A sprint ends when all its tasks have ended; the run ends with ``run.finished`` (JACKED_OUT) or
``run.halted`` (HALTED, with a reason).

Every decision reads the fold (``RunView``) kept up to date by applying each appended record;
nothing else is remembered between loop turns that a restart would need. The fold is compact:
what it leaves in the ledger (a task's inputs, its recorded steps) is read on demand when the
task is handed out (``reader.RunReader``). Every ``checkpoint_every`` records, and at the end of
each sprint, the coordinator appends a ``checkpoint`` record carrying the fold, so the next start
(and every status) folds only what came after it.

On a ledger shared between hosts (PostgreSQL), several coordinators run one run, each with its
own workspace and workers (``--join``): each folds every record appended since its last one,
claims pending tasks with ``task.assigned`` records that the ledger's fence accepts for one
claimant only, and takes back leases whose expiry passed, whoever granted them. The one holding
the run's leader lease (``leases.LEADER_TASK``) also plans, closes sprints, runs host sprints
and finishes; the others wait for it meanwhile.
"""

from __future__ import annotations

import errno
import hashlib
import json
import math
import os
import secrets
import shlex
import signal
import socket
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from . import errors, faults, fsutil, heads, identity, runstate, upgrade
from .account import SessionAccount, account_session
from .effects import EffectDenied, EffectUncertain
from .gate import Action, Gate
from .policy import REPO_RULES_FILE, Policy
from .jobs.base import Job, JobOutcome, TaskSpec
from .leases import LEADER_TASK, expired, leader_action
from .ledger import Appended, NewRecord, Outcome, Record, Refused, Storage, open_storage
from .ledger.retrying import RetryingStorage
from .model_broker import (Halt, ModelBroker, Settled, Ticket, before_reset, budget_halt, call_payload, halt_for,
                           malformed_spend)
from .models import get_provider, parse_spec, request_from_json
from .models.config import ModelConfig
from .models.failures import Withheld
from .pool import WorkerPool, WorkerProc
from .reader import Loaded, RunReader, checkpoint_payload, load, load_view

LARGE_CONTEXT = 64
"""A context value with more items than this (a listing of the repository's files) is sent to a
worker once, then named by its digest."""
from .replay import APPROVER, RunView, TaskView
from .sandbox import Sandbox, get_sandbox
from .sandbox.egress import Destination, EgressForwarder, EgressRoute
from .upgrade import Upgrade
from .workspace import Workspace, owner_key

EXIT_OK = 0
EXIT_HALTED = 75
MAX_FAILED_STARTS = 3
"""Worker processes that die before they start, in a row, before the run halts (a broken install)."""
SHARED_POLL_S = 0.25
"""Longest wait between two reads of a shared ledger for what the other coordinators appended."""
LEDGER_RETRY_S = {False: 10.0, True: 120.0}
"""Default ``RunOptions.ledger_retry_s`` by whether the ledger is shared between hosts."""
NO_SPACE = (errno.ENOSPC, errno.EDQUOT)
"""``OSError`` numbers of a full disk (or quota): the run halts (exit 75) and resumes once there is space."""
BROKER_POLL_S = 0.02
"""Longest wait for worker output while host-side model calls are in flight (their answers
arrive on the broker's queue, not on a worker's pipe)."""


def wall_clock_ms() -> int:
    """Returns the current UTC time in epoch milliseconds."""
    return time.time_ns() // 1_000_000


@dataclass(frozen=True, kw_only=True)
class RunOptions:
    """How to run (none of these changes what the run computes).

    Attributes:
        workers: Number of worker processes (logical workers ``w01``...).
        lease_ttl_s: Seconds a lease lasts without a heartbeat.
        heartbeat_s: Seconds between a busy worker's heartbeats (default ``lease_ttl_s / 3``;
            0 switches heartbeats off, for tests of leases that outlive their work).
        model_quota: Model calls the run may make in total, or None for no limit.
        max_task_attempts: Assignments of one task in one session before the run halts (a
            task that keeps failing needs a person; ``resume`` gives it as many again).
        state_interval_s: Least seconds between two writes of the run-state file.
        sandbox: Sandbox backend name for worker processes.
        ledger_retry_s: Seconds a failing ledger read or write is retried before the session
            gives up (default: 10 s on a ledger of its own, whose failures are the disk's;
            120 s on a shared one, where a server restart or a failover takes that long).
        explicit_resume: True when a person asked to continue a HALTED run (``resume``, or
            the same job command again); ``recover`` passes False and leaves HALTED alone.
        new_run: Start a new run even if a run of the same job exists.
        stall_after_s: Seconds without a completed step (while workers are busy and their
            heartbeats keep coming) after which the run halts as stalled: a heartbeat alone
            never counts as progress.
        breaker_failures: Step failures in a row with the same error after which the circuit
            breaker halts the run (a systemic failure, not one bad file).
        checkpoint_every: Records between two ``checkpoint`` records (at least as many as the
            run has tasks, since a checkpoint's size grows with the plan); one more is written
            at the end of each sprint.
        join: Id of a live run in a shared (PostgreSQL) ledger that this coordinator joins, as
            one more host of it, instead of starting or resuming this workspace's run.
        upgrade: Continue a run recorded under other code (``resume --upgrade``): keep the
            results of the sprints whose code is unchanged, plan the rest again (``upgrade``).
    """

    workers: int = 4
    lease_ttl_s: float = 30.0
    heartbeat_s: float | None = None
    model_quota: int | None = None
    max_task_attempts: int = 3
    state_interval_s: float = 1.0
    sandbox: str = "bubblewrap"
    ledger_retry_s: float | None = None
    explicit_resume: bool = True
    new_run: bool = False
    stall_after_s: float = 1800.0
    breaker_failures: int = 10
    checkpoint_every: int = 10_000
    join: str | None = None
    upgrade: bool = False

    def __post_init__(self) -> None:
        if self.workers < 1:
            raise errors.UsageError(f"--workers must be at least 1, not {self.workers}")
        if self.lease_ttl_s <= 0:
            raise errors.UsageError("--lease-ttl must be positive (seconds)")
        if self.model_quota is not None and self.model_quota < 0:
            raise errors.UsageError("--model-quota must be zero or more")
        if self.checkpoint_every < 1:
            raise errors.UsageError("--checkpoint-every must be at least 1 (records)")


@dataclass(frozen=True, kw_only=True)
class RunResult:
    """How a coordinator session ended.

    Attributes:
        run_id: The run.
        state: RUNNING, HALTED or JACKED_OUT after the session.
        exit_code: 0 finished (or nothing to do), 75 halted.
        message: What to tell the person.
        outcome: The job's summary, when the run finished.
        already_done: True when the run had finished before this session (nothing was done).
        account: What the session resumed, reused, redid and skipped, counted from the ledger
            (None when the ledger could not be read at the end).
    """

    run_id: str
    state: str
    exit_code: int
    message: str
    outcome: JobOutcome | None = None
    already_done: bool = False
    account: SessionAccount | None = None


class HostContext:
    """What a job's host-side code (export) gets: the view and its reader, appends, and effects."""

    def __init__(self, coordinator: "Coordinator") -> None:
        self._c = coordinator

    @property
    def view(self) -> RunView:
        """The run view, current as of the last append."""
        return self._c.view

    @property
    def run(self) -> RunReader:
        """The run view with reads of what it leaves in the ledger (step results, inputs)."""
        return self._c.reader()

    @property
    def workspace(self) -> Workspace:
        """The run's workspace."""
        return self._c.workspace

    @property
    def gate(self) -> Gate:
        """The gate with the policy in force now."""
        return self._c.gate

    def now_ms(self) -> int:
        """The coordinator's clock: epoch ms UTC."""
        return self._c.clock()

    def append(self, records: Sequence[NewRecord]) -> list[Outcome]:
        """Appends coordinator records durably (see ``Coordinator.append``)."""
        return self._c.append(records)

    def record(self, kind: str, **fields: Any) -> list[Outcome]:
        """Appends one coordinator record of ``kind`` with ``fields`` (key, task, why, payload)."""
        return self._c.append([self._c.new_record(kind, **fields)])

    def effect(self, key: str, fn: Callable[[str], dict[str, Any]], *, reconcile: Callable[[str], dict[str, Any] | None] | None = None,
               idempotent: bool = False, kind: str = "effect", why: str = "", intent: dict[str, Any] | None = None) -> dict[str, Any]:
        """Performs an effect exactly once as seen from its target (see ``effects.perform``)."""
        from .effects import perform

        return perform(self, key, fn, kind=kind, why=why or f"{kind} {key}", intent=intent, reconcile=reconcile,
                       idempotent=idempotent)


def atomic(records: list[NewRecord]) -> list[NewRecord]:
    """Marks records that mean something only together (a sprint's plan: its ``sprint.started``
    and every ``task.planned``; a session's first record and the upgrade decided with it): the
    first one's payload gets ``batch``, their number. SQLite commits them in one transaction
    anyway; the mark is for ``salvage``, which keeps a prefix of a damaged ledger and must not
    cut through them (a plan cut after its ``sprint.started`` would be a sprint with no tasks,
    finished at once). One record or none is returned as it is."""
    if len(records) < 2:
        return records
    return [replace(records[0], payload={**records[0].payload, "batch": len(records)}), *records[1:]]


class Coordinator:
    """Runs one run of a job in a workspace, from whatever the ledger holds.

    Args:
        job: The job (its ``describe()["identity"]`` selects which run of the ledger to resume).
        workspace: The workspace folder (run lock, ledger, state file, outputs).
        options: How to run.
        policy: The policy in force now (read afresh at every start by the caller).
        ledger_url: The ledger; the workspace's SQLite file by default.
        clock: Returns epoch ms UTC; injectable for tests.
        on_progress: Called with the view after each loop turn that changed it.
        model_config: Providers, prices and retries for a job whose model runs on the host
            (default: ``ModelConfig.for_workspace``).
    """

    def __init__(self, job: Job, workspace: Workspace, options: RunOptions, *, policy: Policy | None = None,
                 ledger_url: str | None = None, clock: Callable[[], int] = wall_clock_ms,
                 on_progress: Callable[[RunView], None] | None = None, model_config: ModelConfig | None = None) -> None:
        self.job = job
        self.code = job.code_identity()
        self.workspace = workspace
        self.options = options
        self.policy = policy or Policy()
        self.ledger_url = ledger_url or workspace.ledger_url
        self.clock = clock
        self.on_progress = on_progress
        self.session = secrets.token_hex(4)
        self.member = workspace.member
        self.shared = False
        """True when the ledger is shared with coordinators on other hosts (set when it is opened)."""
        self.policy = policy_in_force(self.policy, job)
        repository = job.repository()
        target = Path(repository or job.describe().get("target") or "/")
        self.gate = Gate(self.policy, target=target, workspace=workspace.root, analysed=job.analyses)
        self.model_quota = min((q for q in (options.model_quota, self.policy.max_model_calls) if q is not None), default=None)
        self.sandbox: Sandbox = get_sandbox(options.sandbox)
        self.warnings: list[str] = [f"repository rule {r}" for r in self.policy.refused_rules]
        if self.sandbox.name == "none":
            self.warnings.append("sandbox none: worker processes read the repository unconfined, with this host's "
                                 "files in reach; recorded in the ledger (--sandbox bubblewrap is the default)")
        self.storage: Storage | None = None
        self.view: RunView = RunView(run_id="")
        self.pool: WorkerPool | None = None
        self._stop_reason: str | None = None
        self._state_written_ms = 0
        self._reserved: dict[str, int] = {}
        self._calls_made: dict[str, int] = {}
        self._failed_starts = 0
        self._overreach: str | None = None
        self._forwarders: list[EgressForwarder] = []
        self._attempts: dict[str, int] = {}
        self._read_allowed: dict[str, bool] = {}  # gate decisions on context reads (the policy is fixed per session)
        self._large: dict[int, tuple[Any, Any, str]] = {}  # id(value) -> (value, derived, digest): large context values
        self._progress_ms = clock()
        self._failure_streak: tuple[str, int] = ("", 0)
        self._last_failed_step = ""
        self.model_config = model_config
        self.broker: ModelBroker | None = None
        self._model_halt: Halt | None = None
        self._waiting: dict[str, list[tuple[WorkerProc, str, int]]] = {}
        self._to_submit: list[Ticket] = []
        self._checkpointing = False
        self._head_unstored = False
        self._content_checked = False
        self.session_seq: int | None = None
        """Sequence number of this session's first record (run.started, run.resumed or run.joined)."""

    # -- records ------------------------------------------------------------------------

    def new_record(self, kind: str, *, key: str | None = None, task: str | None = None,
                   epoch: int | None = None, why: str = "", payload: dict[str, Any] | None = None,
                   actor: str = "coordinator") -> NewRecord:
        """Builds a record of this run under the policy in force (nothing is appended)."""
        return NewRecord(run_id=self.view.run_id, actor=actor, kind=kind, key=key, task=task, epoch=epoch,
                         why=why, payload=payload or {}, policy_hash=self.policy.hash)

    def reader(self) -> RunReader:
        """The live view, with reads of what it leaves in the ledger."""
        assert self.storage is not None
        return RunReader(self.storage, self.view)

    def append(self, records: Sequence[NewRecord]) -> list[Outcome]:
        """Appends records in one durable transaction and folds the appended ones into the view.

        A failing write (the disk, a lock held too long, a dropped connection) is retried with
        backoff for up to ``ledger_retry_s`` seconds, as every ledger call of the coordinator
        is (``RetryingStorage``). On a shared ledger the view then folds every record appended
        since its last one, by any coordinator. When a checkpoint is due after them
        (``RunView.checkpoint_due``), one follows in its own transaction.

        Raises:
            LedgerError: the storage kept failing; nothing of the batch is stored.
        """
        assert self.storage is not None
        outcomes = self.storage.append(records, now_ms=self.clock())
        for outcome in outcomes:
            if isinstance(outcome, Appended):
                record = outcome.record
                if not self.shared:
                    self._fold(record)
                if record.kind in ("step.done", "task.finished"):
                    self._failure_streak = ("", 0)
                elif record.kind == "step.failed":
                    error = record.why.split(" during ", 1)[0] if "(pid " in record.why else record.why
                    same = self._failure_streak[0] == error
                    self._failure_streak = (error, self._failure_streak[1] + 1 if same else 1)
                    self._last_failed_step = record.payload.get("name", record.key or "?")
        if self.shared:
            self.catch_up()
        if self.view.checkpoint_due(self.options.checkpoint_every) and (not self.shared or self._leading()):
            self.checkpoint()
        return outcomes

    def catch_up(self) -> int:
        """Folds what was appended after the view's last record (by any coordinator).

        Returns:
            The number of records folded.

        Raises:
            LedgerError: the ledger cannot be read.
        """
        assert self.storage is not None
        n = 0
        for record in self.storage.read(self.view.run_id, after_seq=self.view.last_seq):
            self._fold(record)
            n += 1
        return n

    @property
    def ledger_retry_s(self) -> float:
        """Seconds a failing ledger call is retried (``RunOptions.ledger_retry_s`` or its default)."""
        return self.options.ledger_retry_s if self.options.ledger_retry_s is not None else LEDGER_RETRY_S[self.shared]

    def _fold(self, record: Record) -> None:
        self.view.apply(record)
        if record.kind in ("step.done", "task.finished"):
            self._progress_ms = record.ts_ms

    def checkpoint(self) -> None:
        """Appends a ``checkpoint`` record carrying the fold, unless the last record is one.

        Raises:
            LedgerError: the storage kept failing.
        """
        if self._checkpointing or self.view.checkpointed == self.view.records:
            return
        self._checkpointing = True
        try:  # refused (StaleCheckpointError) when another coordinator appended meanwhile: the next one is due soon
            self.append([self.new_record("checkpoint", why=f"fold state after {self.view.records} records",
                                         payload=checkpoint_payload(self.view))])
        finally:
            self._checkpointing = False

    # -- the run ------------------------------------------------------------------------

    def run(self) -> RunResult:
        """Runs (starts, resumes or leaves alone) the workspace's run of this job.

        Returns:
            How the session ended.

        Raises:
            RunLockedError: another process runs this workspace now.
            SandboxUnavailable: the configured sandbox cannot run here.
            LedgerError: the ledger cannot be read or written.
            UsageError: the job's model cannot be used (unknown, no key, no price for a cost budget),
                or the workspace is inside the scanned tree and was not made here.
        """
        self.sandbox.check_available()
        self.workspace.check_made_here([Path(p) for p in self.job.read_only_paths()])
        with self.workspace.lock(self.session):
            storage = open_storage(self.ledger_url)
            self.ledger_url = storage.url  # as the storage shows it: without a password
            self.shared = storage.shared
            self.storage = RetryingStorage(storage, retry_s=self.ledger_retry_s)
            previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
            for sig in previous:
                signal.signal(sig, self._on_signal)
            try:
                return self._accounted(self._run_locked())
            except errors.LedgerError as exc:
                return self._halt_after_error(exc)
            except OSError as exc:  # a workspace file (the run-state file, a head) on a full disk
                if exc.errno not in NO_SPACE:
                    raise
                return self._halt_for_space(exc)
            finally:
                for sig, handler in previous.items():
                    signal.signal(sig, handler)
                self._stop_pool()
                if self.broker is not None:
                    self.broker.close()
                self.storage.close()

    def _accounted(self, result: RunResult) -> RunResult:
        """The result with the account of this session (``account.account_session``)."""
        assert self.storage is not None
        if not self.view.run_id:
            return result
        try:
            return replace(result, account=account_session(self.storage, self.view, self.session_seq))
        except (errors.LedgerError, ValueError):
            return result  # the result stands; only its account is missing

    def _begin_session(self, record: NewRecord, *more: NewRecord) -> None:
        """Appends the session's first record (with ``more`` in the same transaction) and notes
        its sequence number."""
        outcome = self.append(atomic([record, *more]))[0]
        if isinstance(outcome, Appended) and self.session_seq is None:
            self.session_seq = outcome.record.seq

    def _open_broker(self) -> None:
        """Makes the host-side provider and its broker when the job's model does not run in
        the workers (keys are read here, in the coordinator's process).

        Raises:
            UsageError: the provider is unknown, its key is not set, or the policy has a cost
                budget and the configuration no price for the model.
        """
        spec = parse_spec(getattr(self.job, "model", "offline"))
        if spec.runs_locally:
            return
        config = self.model_config or ModelConfig.for_workspace(
            self.workspace, [Path(p) for p in self.job.read_only_paths()])
        if self.policy.max_cost_usd is not None and str(spec) not in config.prices:
            raise errors.UsageError(f"the policy's max_cost_usd needs the price of {spec}: add "
                                    f"[prices.\"{spec}\"] to the model configuration ({config.source})")
        self.broker = ModelBroker(get_provider(str(spec), config), retry=config.retry, threads=self.options.workers)

    def _on_signal(self, signum: int, frame: object) -> None:
        name = signal.Signals(signum).name
        request = self.workspace.root / "halt-request"
        reason = f"interrupted by {name}"
        try:
            with os.fdopen(os.open(request, os.O_RDONLY | fsutil.NOFOLLOW), "rb") as handle:
                text = handle.read(4096).decode("utf-8", "replace").strip()
            request.unlink()
            if text:
                reason = text
        except OSError:
            pass
        self._stop_reason = reason

    def _find_run(self) -> Loaded | None:
        """Returns the latest run of this job, folded from its latest checkpoint, or None."""
        assert self.storage is not None
        identity = self.job.describe()["identity"]
        for first in reversed(self.storage.first_records()):
            if first.kind == "run.started" and first.payload["job"].get("identity") == identity:
                return load(self.storage, first.run_id)
        return None

    def _session_payload(self) -> dict[str, Any]:
        return {"session": {"id": self.session, "pid": os.getpid(), "host": socket.gethostname(), "member": self.member,
                            "code": self.code},
                "policy": {"hash": self.policy.hash, "source": self.policy.source, "body": self.policy.body(),
                           "refused_rules": list(self.policy.refused_rules)},
                "sandbox": self.sandbox.describe(),
                "options": {"workers": self.options.workers, "lease_ttl_s": self.options.lease_ttl_s,
                            "model_quota": self.model_quota}}

    def _run_locked(self) -> RunResult:
        if self.options.join is not None:
            return self._join(self.options.join)
        found = None if self.options.new_run else self._find_run()
        existing = found.view if found is not None else None
        latest = self._latest_other_run(existing)
        if existing is not None:
            self._check_head(existing)
        if existing is not None and existing.state == "JACKED_OUT":
            self.view = existing
            self._write_state(force=True)
            outcome = self.job.outcome(self.reader(), str(self.workspace.root))
            replaced = ""
            if latest is not None:
                replaced = (f"; note: the reports in {self.workspace.root} are those of the later run {latest.run_id} "
                            f"of {latest.job.get('target')}, not this run's: scan again with --new, or use another "
                            "--workspace per target")
            return RunResult(run_id=existing.run_id, state="JACKED_OUT", exit_code=EXIT_OK, already_done=True,
                             outcome=outcome, message=f"run {existing.run_id} already finished; {outcome.summary}{replaced}")
        if latest is not None and latest.state != "JACKED_OUT" and not self.options.new_run:
            raise errors.UsageError(
                f"workspace {self.workspace.root} holds the unfinished run {latest.run_id} of "
                f"{latest.job.get('target')} ({latest.state}); starting another job here would replace its reports. "
                f"Finish it with `fleetledger resume --workspace {self.workspace.root}`, start this one anyway with "
                "--new, or use another --workspace")
        decided = self._check_code(existing) if existing is not None and existing.state != "JACKED_OUT" else None
        if existing is not None and existing.state == "HALTED" and not self.options.explicit_resume:
            self.view = existing
            self._write_state(force=True)
            return RunResult(run_id=existing.run_id, state="HALTED", exit_code=EXIT_HALTED,
                             message=f"run {existing.run_id} is HALTED: {existing.halt and existing.halt.get('reason')}; "
                                     "it waits for `fleetledger resume`")
        waiting = before_reset(existing.halt, self.clock()) if existing is not None and existing.state == "HALTED" else None
        if existing is not None and waiting is not None:
            self.view = existing
            self._write_state(force=True)
            return RunResult(run_id=existing.run_id, state="HALTED", exit_code=EXIT_HALTED,
                             message=f"run {existing.run_id} stays HALTED: {waiting}")
        self._open_broker()
        if found is None:
            self.view = RunView(run_id=f"{self.job.kind}-{secrets.token_hex(3)}")
            payload = {"job": self.job.describe(), "sprints": list(self.job.sprints), **self._session_payload()}
            self._begin_session(self.new_record("run.started", key=self.view.run_id, payload=payload,
                                                why=f"start {self.job.kind} of {self.job.describe().get('target')}"))
        else:
            self.view = found.view
            why = "resume after a crash" if self.view.state == "RUNNING" else f"explicit resume of a HALTED run ({self.view.halt and self.view.halt.get('reason')})"
            fold = {"checkpoint_seq": found.checkpoint_seq, "records": found.folded}
            self._begin_session(self.new_record("run.resumed", payload={**self._session_payload(), "fold": fold}, why=why),
                                *self._upgrade_records(decided))
        if self.policy.refused_rules:
            self.append([self.new_record("policy.denied", why=rule, payload={"action": "repository rule", "rule": rule})
                         for rule in self.policy.refused_rules])
        self._reconcile_state()
        faults.hit("recovery.after_resume_record")
        self._adopt_orphans()
        return self._drive()

    def _check_head(self, view: RunView) -> None:
        """Refuses to go on with a run whose ledger contradicts the head this user signed last
        (``heads``): a cut tail or a rewritten chain would otherwise be resumed, reported as
        whole, and signed again, which would launder the change.

        Raises:
            LedgerTamperedError: the ledger ends before the head, or its record there differs.
        """
        assert self.storage is not None
        problem = heads.contradiction(self.storage, self.ledger_url, view.run_id, view.last_seq, owner_key(),
                                      runstate.signed_head(self.workspace.state_path, self.ledger_url))
        if problem is not None:
            raise errors.LedgerTamperedError(
                f"{problem}; nothing was appended. Run `fleetledger verify --workspace {self.workspace.root}` to see "
                "what differs; `fleetledger salvage` keeps what is left and lets the run continue, or start over "
                "with --new or another --workspace")

    def _latest_other_run(self, mine: RunView | None) -> RunView | None:
        """The workspace's latest run when it is another job's run than ``mine`` (its reports
        are the ones in the workspace), else None; None on a shared ledger, whose runs belong
        to many workspaces."""
        assert self.storage is not None
        if self.shared:
            return None
        starts = [r for r in self.storage.first_records() if r.kind == "run.started"]
        if not starts or (mine is not None and starts[-1].run_id == mine.run_id):
            return None
        return load_view(self.storage, starts[-1].run_id)

    def _check_code(self, view: RunView) -> Upgrade | None:
        """Refuses to continue a run recorded under other code (``identity``): its report
        would mix results of both versions. With ``RunOptions.upgrade`` it decides instead what
        the run keeps and redoes (``upgrade.plan``).

        Returns:
            None when the code is the same (or the run recorded no identity); the ``Upgrade``
            to record when it differs and an upgrade was asked for.

        Raises:
            UsageError: the identity of the run's last session differs from this code's and no
                upgrade was asked for, or one was asked for on a shared ledger while the run is
                not HALTED (another host may be working on it under the old code).
        """
        recorded = next((s["code"] for s in reversed(view.sessions) if isinstance(s.get("code"), dict)), None)
        if recorded is None or recorded == self.code:
            return None
        changed = "; ".join(identity.differences(recorded, self.code))
        if self.options.upgrade:
            if self.shared and view.state != "HALTED":
                raise errors.UsageError(f"run {view.run_id} may be live on another host of the shared ledger: halt it "
                                        "(`fleetledger halt`), then `fleetledger resume --upgrade` on one host")
            return upgrade.plan(view, recorded, self.code, self.job.sprints, self.job.sprint_code())
        target = view.job.get("target", "TARGET")
        raise errors.UsageError(
            f"run {view.run_id} was recorded under other code than this fleetledger's ({changed}); continuing it "
            "would mix results of both versions in one report, so nothing was run. Choose: continue it under this "
            f"code with `fleetledger resume --workspace {self.workspace.root} --upgrade` (keeps the results whose "
            "code did not change and runs the rest again), start a new run under "
            f"this code with `fleetledger scan {shlex.quote(str(target))} --workspace {self.workspace.root} --new` "
            "(the recorded run stays in the ledger), or finish it with the fleetledger that recorded it "
            f"(version {recorded.get('fleetledger', '?')})")

    def _upgrade_records(self, decided: Upgrade | None) -> list[NewRecord]:
        """The records of an upgrade (``upgrade``): the decision, then one ``sprint.reopened``
        that supersedes each redone sprint's tasks; [] for none."""
        if decided is None:
            return []
        records = [self.new_record("decision", why=decided.summary(), payload={"upgrade": decided.to_json()})]
        return records + [self.new_record("sprint.reopened", key=s,
                                          payload={"sprint": s, "supersede": True},
                                          why=f"planned again under this code ({', '.join(decided.changed)} changed)")
                          for s in decided.redone]

    def _join(self, run_id: str) -> RunResult:
        """Joins a live run of a shared ledger as one more coordinator (another host).

        Raises:
            UsageError: the ledger is not shared, the run does not exist, or it is another job.
        """
        assert self.storage is not None
        if not self.shared:
            raise errors.UsageError(f"--join needs the ledger the run is in, shared between hosts: --ledger postgresql://... "
                                    f"(this ledger is {self.ledger_url})")
        view = load_view(self.storage, run_id)
        if view.state is None:
            raise errors.UsageError(f"no run {run_id} in {self.ledger_url}; `fleetledger status` on the run's first host shows its id")
        self.view = view
        resuming = view.state == "HALTED" and self.options.explicit_resume
        if view.state != "RUNNING" and not resuming:
            self._write_state(force=True)
            why = ("it finished; its outputs are in the workspace of the host that exported them" if view.state == "JACKED_OUT"
                   else f"it is HALTED ({view.halt and view.halt.get('reason')}); `fleetledger resume` on one of its "
                        "hosts continues it, then join again")
            return RunResult(run_id=run_id, state=view.state, exit_code=EXIT_OK if view.state == "JACKED_OUT" else EXIT_HALTED,
                             already_done=view.state == "JACKED_OUT", message=f"run {run_id} not joined: {why}")
        mine = {k: v for k, v in self.job.describe()["identity"].items() if k != "target"}
        theirs = {k: v for k, v in view.job.get("identity", {}).items() if k != "target"}
        if mine != theirs:
            raise errors.UsageError(f"run {run_id} is another job ({theirs}); this command would run {mine}: "
                                    "join with the same job and options as its first host")
        if self._check_code(view) is not None:
            raise errors.UsageError("--upgrade is for `fleetledger resume` on the run's own workspace, not for joining")
        self._open_broker()
        payload = {**self._session_payload(), "target": self.job.describe().get("target")}
        if resuming:
            self._begin_session(self.new_record("run.resumed", payload=payload, why=f"explicit resume of a HALTED run "
                                                f"({view.halt and view.halt.get('reason')}) on a host that joined it"))
        self._begin_session(self.new_record("run.joined", payload=payload,
                                            why=f"coordinator on {socket.gethostname()} joins with {self.options.workers} workers"))
        self._reconcile_state()
        self._adopt_orphans()
        return self._drive()

    def _reconcile_state(self) -> None:
        _, note = runstate.reconcile(self.workspace.state_path, self.view, self.ledger_url, now_ms=self.clock())
        self._state_written_ms = self.clock()
        if note:
            self.append([self.new_record("decision", why=f"run-state file rebuilt: {note}", payload={"state_file": note})])

    def _adopt_orphans(self) -> None:
        """Takes back every lease granted by an earlier coordinator session (it is gone: we hold
        the lock), and reopens tasks that failed for good in an earlier session (a resume is a
        person's decision to try again)."""
        joining = self.options.join is not None
        records = [self.new_record("task.reopened", task=t.id, why=f"retry after resume; it failed: {t.errors[-1] if t.errors else '?'}")
                   for t in self.view.tasks.values() if t.status == "failed" and not joining]
        denied = [t for t in self.view.tasks.values() if not joining and
                  t.status == "finished" and (t.result or {}).get("denied") and self.view.sprints[t.sprint].status != "completed"]
        for t, spec in zip(denied, self.reader().planned(t.id for t in denied)):
            reads = self.job.step_reads(spec)
            allowed = [n for n in t.result["denied"] if self.gate.check(Action(kind="read", target=reads.get(n, ""))).allowed]
            if allowed:
                records.append(self.new_record("task.reopened", task=t.id,
                                               why=f"the policy in force now allows {len(allowed)} step(s) it denied before"))
        # Sessions known dead: every earlier one, or on a shared ledger those of this host and
        # workspace (we hold its lock); other hosts' leases end by their expiry only.
        mine = {s.get("id") for s in self.view.sessions if s.get("member") == self.member}
        leader = [self.view.leader] if self.view.leader is not None else []
        for lease in self.view.leases() + leader:
            if lease.session != self.session and (not self.shared or lease.session in mine):
                records.append(self.new_record(
                    "lease.expired", task=lease.task, epoch=lease.epoch,
                    why=f"holder {lease.worker} belonged to coordinator session {lease.session or '?'}, which is gone",
                    payload={"worker": lease.worker, "cause": "coordinator restarted"}))
        retry = None if joining or self.view.current_sprint() is not None else self.job.retry_sprint(self.reader())
        if retry is not None:  # steps that failed for a cause that may have cleared: a new round of their sprints
            sprints = list(self.view.sprints)
            records += [self.new_record("sprint.reopened", key=s, payload={"sprint": s},
                                        why=f"try again: {retry[1]}" if s == retry[0] else f"after {retry[0]} is tried again")
                        for s in sprints[sprints.index(retry[0]):]]
        if records:
            self.append(records)
            faults.hit("recovery.after_adopt")

    # -- the loop -----------------------------------------------------------------------

    def _drive(self) -> RunResult:
        host = HostContext(self)
        while True:
            halted = self._pending_halt()
            if halted is not None:
                return halted
            if self.shared:
                self._lead()
                ended = self._ended_elsewhere()
                if ended is not None:
                    return ended
            sprint = self.view.current_sprint()
            if not self._leading() and (sprint is None or sprint in self.job.host_sprints
                                        or self.view.sprints[sprint].status == "pending" or self._sprint_over(sprint)):
                self._wait_for_leader()  # planning, closing sprints, export and the finish are the leader's
                continue
            if sprint is None:
                return self._finish()
            status = self.view.sprints[sprint].status
            if status == "pending":
                self._plan(sprint)
                continue
            if sprint in self.job.host_sprints:
                try:
                    self.job.run_host_sprint(sprint, host)
                except (EffectUncertain, EffectDenied) as exc:
                    return self._halt("effect", str(exc), extra={"effect": exc.facts.get("key")})
                self.append([self.new_record("sprint.finished", key=self._round_key("sprint.finished", sprint),
                                             why=f"{sprint} done", payload={"sprint": sprint})])
                self.checkpoint()
                self._write_state(force=True)
                continue
            if self._sprint_over(sprint):
                done, total = self.view.sprint_progress(sprint)
                self.append([self.new_record("sprint.finished", key=self._round_key("sprint.finished", sprint),
                                             why=f"{sprint}: {done} of {total} tasks ended", payload={"sprint": sprint})])
                self.checkpoint()
                self._write_state(force=True)
                continue
            if self.shared and not self._content_checked:
                self._check_content()
            halted = self._turn(sprint)
            if halted is not None:
                return halted
            failed = [t for t in self.view.sprints[sprint].tasks if self.view.tasks[t].status == "failed"]
            if failed:
                task = self.view.tasks[failed[0]]
                return self._halt("task", f"task {task.id} cannot go on: {task.errors[-1] if task.errors else '?'}; "
                                  "fix the cause, then `fleetledger resume`", extra={"task": task.id})

    # -- a run shared by coordinators on several hosts ---------------------------------

    def _leading(self) -> bool:
        """True when this coordinator plans, closes sprints, exports and finishes: always on
        a ledger of its own, on a shared one while it holds the run's leader lease."""
        if not self.shared:
            return True
        leader = self.view.leader
        return leader is not None and leader.session == self.session and not expired(leader, self.clock())

    def _lead(self) -> None:
        """Folds what the other coordinators appended, then claims, renews or ends the leader
        lease as ``leases.leader_action`` decides (the ledger's fence settles races)."""
        self.catch_up()
        now, ttl_ms = self.clock(), int(self.options.lease_ttl_s * 1000)
        leader = self.view.leader
        action = leader_action(leader, session=self.session, now_ms=now, ttl_ms=ttl_ms)
        if action == "claim":
            self.append([self.new_record(
                "task.assigned", task=LEADER_TASK, epoch=self.view.leader_epoch + 1,
                why=f"coordinator {self.session} on {socket.gethostname()} leads the run: plans, closes sprints, exports",
                payload={"worker": f"coordinator-{self.session}", "pid": os.getpid(), "host": socket.gethostname(),
                         "expires_ms": now + ttl_ms, "ttl_ms": ttl_ms, "session": self.session})])
        elif action == "renew":
            assert leader is not None
            self.append([self.new_record("lease.renewed", task=LEADER_TASK, epoch=leader.epoch,
                                         why="leader heartbeat", payload={"expires_ms": now + ttl_ms})])
        elif action == "expire":
            assert leader is not None
            self.append([self.new_record("lease.expired", task=LEADER_TASK, epoch=leader.epoch,
                                         why=f"leader {leader.worker} silent for {(now - leader.renewed_ms) / 1000:.1f} s",
                                         payload={"worker": leader.worker, "cause": "heartbeat timeout"})])

    def _wait_for_leader(self) -> None:
        """Waits a little for the leader's next move (this host's workers hold no lease then:
        the sprint is not planned yet, or all its tasks ended)."""
        time.sleep(SHARED_POLL_S)
        self._write_state()

    def _ended_elsewhere(self) -> RunResult | None:
        """Returns how this session ends when another coordinator finished or halted the run."""
        if self.view.state == "RUNNING":
            return None
        self._stop_pool()
        self._write_state(force=True)
        if self.view.state == "JACKED_OUT":
            done = self.storage.unique_record(self.view.run_id, "run.finished", self.view.run_id) if self.storage else None
            return RunResult(run_id=self.view.run_id, state="JACKED_OUT", exit_code=EXIT_OK,
                             message=f"run {self.view.run_id} finished on another host: {done.why if done else ''}; "
                                     f"outputs there: {', '.join((done.payload.get('outputs') or {}).values()) if done else '?'}")
        reason = self.view.halt.get("reason") if self.view.halt else "?"
        return RunResult(run_id=self.view.run_id, state="HALTED", exit_code=EXIT_HALTED,
                         message=f"run {self.view.run_id} HALTED on another host: {reason}")

    def _check_content(self) -> None:
        """Refuses to work on a run whose planned files differ from this host's checkout.

        Raises:
            UsageError: they differ (recorded as a ``decision`` first).
        """
        problems = self.job.join_problems(self.reader())
        if problems is None:
            return  # nothing planned to compare with yet
        if problems:
            message = (f"this host's checkout differs from the run's: {'; '.join(problems[:5])}"
                       f"{f' (and {len(problems) - 5} more)' if len(problems) > 5 else ''}; "
                       "check out the same content on every host, then join again")
            self._stop_pool()
            self.append([self.new_record("decision", why=f"refused to work on run {self.view.run_id}: {message}",
                                         payload={"problems": problems[:50]})])
            raise errors.UsageError(message)
        self._content_checked = True

    def _leave(self, reason: str) -> RunResult:
        """Leaves a shared run that goes on elsewhere: this host's leases are handed back
        (before its workers are stopped, which can take seconds, so others take them at once)."""
        records = [self.new_record("lease.released", task=lease.task, epoch=lease.epoch,
                                   why=f"coordinator {self.session} left the run ({reason}); {lease.worker} stopped",
                                   payload={"worker": lease.worker, "cause": "coordinator left"})
                   for lease in self.view.leases() + ([self.view.leader] if self.view.leader else [])
                   if lease.session == self.session]
        records.append(self.new_record("decision", why=f"coordinator {self.session} on {socket.gethostname()} left the run: {reason}"))
        self.append(records)
        self._stop_pool()
        self._write_state(force=True)
        return RunResult(run_id=self.view.run_id, state="RUNNING", exit_code=EXIT_HALTED,
                         message=f"left run {self.view.run_id} ({reason}); it goes on on its other hosts")

    def _halting(self) -> bool:
        """True once a halt was asked for (a signal, an exhausted quota, a budget)."""
        return self._stop_reason is not None or self._model_halt is not None

    def _pending_halt(self) -> RunResult | None:
        """Halts when a halt was asked for, once no host-side model call is in flight (a call
        on the wire may finish, and its answer is recorded; no new one starts)."""
        if not self._halting():
            return None
        if self.broker is not None and self.broker.busy:
            self.broker.stop()
            return None
        if self._stop_reason is not None and not self._leading():
            return self._leave(self._stop_reason)
        if self._stop_reason is not None:
            return self._halt("interrupted", self._stop_reason)
        halt = self._model_halt
        assert halt is not None
        if halt.kind == "budget":  # the figures once the calls that were in flight are recorded too
            halt = budget_halt(self.policy, self.view.model) or halt
        return self._halt(halt.kind, halt.reason, extra=halt.extra)

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
                               payload={"worker": worker.id, "pid": worker.pid, "sandbox": self.sandbox.name})

    def _turn(self, sprint: str) -> RunResult | None:
        """One loop turn: assign, wait for messages, append them, take back dead leases."""
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

    def _check_breakers(self) -> RunResult | None:
        """Halts a run that goes nowhere: the same error on many steps in a row, or no step
        completed for ``stall_after_s`` while work is leased out."""
        error, streak = self._failure_streak
        if streak >= self.options.breaker_failures:
            return self._halt("breaker", f"circuit breaker: {streak} steps failed in a row with the same error "
                              f"({error}); the last was {self._last_failed_step}; fix the cause, then `fleetledger resume`",
                              extra={"error": error, "step": self._last_failed_step})
        stalled_s = (self.clock() - self._progress_ms) / 1000
        if self.view.leases() and stalled_s > self.options.stall_after_s:
            return self._halt("stalled", f"no step completed for {stalled_s:.0f} s although workers hold leases "
                              f"({', '.join(sorted(l.task for l in self.view.leases()))}); heartbeats alone are not progress")
        return None

    def _poll_timeout_s(self) -> float:
        now = self.clock()
        nearest = min((lease.expires_ms for lease in self.view.leases()), default=now + 1000)
        longest = BROKER_POLL_S if self.broker is not None and self.broker.busy else SHARED_POLL_S if self.shared else 1.0
        return max(0.01, min(longest, (nearest - now) / 1000 + 0.01))

    def _assign(self, sprint: str, pool: WorkerPool) -> RunResult | None:
        idle = [w for w in pool.workers.values() if w.ready and w.task is None and not w.lost]
        pending = [self.view.tasks[t] for t in self.view.sprints[sprint].tasks if self.view.tasks[t].status == "pending"]
        if self.shared and pending:  # each host starts elsewhere in the plan, so that hosts rarely claim the same task
            start = int(self.session, 16) % len(pending)
            pending = pending[start:] + pending[:start]
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

    def _calls_left(self) -> int:
        assert self.model_quota is not None
        in_flight = sum(max(0, self._reserved[t] - self._calls_made.get(t, 0)) for t in self._reserved)
        return max(0, self.model_quota - int(self.view.model["calls"]) - in_flight)

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
        reads = self.job.context_reads(task, run)
        if reads:
            known = self._large.get(id(reads))
            if known is None or known[0] is not reads:
                for path in reads.values():
                    if path not in self._read_allowed:
                        self._read_allowed[path] = self.gate.check(Action(kind="read", target=path)).allowed
                allowed = sorted(key for key, path in reads.items() if self._read_allowed[path])
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
            decision = self.gate.check(Action(kind="read", target=path))
            if not decision.allowed:
                denied[name] = decision.rule
        return denied

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
        if op in ("record", "finished", "failed", "released", "model"):
            problem = _worker_overreach(worker, message, self._reserved.get(task, 0) if isinstance(task, str) else 0)
            if problem is not None:
                # A worker reads hostile files and may have been taken over: it speaks only for
                # its own leases, and only in the kinds a task's steps produce.
                worker.rejected = True
                worker.proc.kill()
                self._overreach = self._overreach or f"{problem} (task {worker.task[0] if worker.task else '?'})"
                batch.append((None, self.new_record(
                    "policy.denied", why=problem,
                    payload={"action": "worker message", "target": worker.id, "rule": problem, "op": op,
                             "kind": message.get("kind"), "task": task, "epoch": epoch})))
                return
        if op == "record":
            if message["kind"] == "model.call":
                self._calls_made[task] = self._calls_made.get(task, 0) + 1
            batch.append((worker, self.new_record(message["kind"], key=message.get("key"), task=task, epoch=epoch,
                                                  why=message.get("why", ""), payload=message.get("payload"),
                                                  actor=worker.id)))
        elif op == "heartbeat":
            lease = self.view.tasks[task].lease if task in self.view.tasks else None
            if lease is not None and lease.epoch == epoch and lease.worker == worker.id:
                expires = self.clock() + lease.ttl_ms
                batch.append((worker, self.new_record("lease.renewed", task=task, epoch=epoch,
                                                      payload={"worker": worker.id, "expires_ms": expires})))
        elif op == "finished":
            batch.append((worker, self.new_record("task.finished", key=task, task=task, epoch=epoch,
                                                  why=f"{worker.id} finished {task}", payload=message.get("result", {}),
                                                  actor=worker.id)))
        elif op == "failed":
            batch.append((worker, self.new_record("task.failed", task=task, epoch=epoch, why=message.get("error", "")[:500],
                                                  payload={"retry": bool(message.get("retry", True))}, actor=worker.id)))
        elif op == "released":
            batch.append((worker, self.new_record("lease.released", task=task, epoch=epoch, why=message.get("why", ""),
                                                  payload={"reason": message.get("reason")}, actor=worker.id)))
        elif op == "model":
            self._ask_model(worker, message)

    # -- host-side model calls ----------------------------------------------------------

    def _ask_model(self, worker: WorkerProc, message: dict[str, Any]) -> None:
        """Answers a worker's model request: the recorded answer when the step's call is in the
        ledger, a refusal while the run is halting (or a budget is reached), else a call queued
        for the broker (one per step key, however many workers wait for it)."""
        key, task, epoch = message["key"], message["task"], message["epoch"]
        if self.broker is None:
            self._reply(worker, {"op": "model.error", "key": key, "kind": "failed",
                                 "error": "this run's model runs in the workers; the coordinator makes no model calls"})
            return
        assert self.storage is not None
        recorded = self.storage.unique_record(self.view.run_id, "model.call", key)
        if recorded is not None and recorded.payload.get("answer"):
            self._reply(worker, {"op": "model.answer", "key": key, "answer": recorded.payload["answer"], "recorded": True})
            return
        if self._model_halt is None:
            self._model_halt = budget_halt(self.policy, self.view.model)
        if self._halting():
            self._reply(worker, {"op": "model.error", "key": key, "kind": "unavailable", "error": "the run is halting"})
            return
        waiting = self._waiting.setdefault(key, [])
        waiting.append((worker, task, epoch))
        if len(waiting) == 1:
            self._to_submit.append(Ticket(key=key, task=task, epoch=epoch, worker=worker.id,
                                          request=request_from_json(message["request"])))

    def _reply(self, worker: WorkerProc, reply: dict[str, Any]) -> None:
        if self.pool is not None:
            self.pool.send(worker, reply)

    def _settle_calls(self, pool: WorkerPool) -> None:
        """Records the calls the broker settled, then answers the workers waiting for them
        (write-ahead: an answer reaches a worker only once it is in the ledger)."""
        assert self.broker is not None
        records: list[NewRecord] = []
        replies: list[tuple[str, dict[str, Any]]] = []
        for settled in self.broker.drain():
            record, reply = self._answered(settled) if settled.result is not None else self._failed(settled)
            records += [record] if record is not None else []
            replies.append((settled.ticket.key, reply))
        for outcome in self.append(records):
            if isinstance(outcome, Appended) and outcome.record.payload.get("answer") and outcome.record.task in self._reserved:
                self._calls_made[outcome.record.task] = self._calls_made.get(outcome.record.task, 0) + 1
        if records and self._model_halt is None:
            self._model_halt = budget_halt(self.policy, self.view.model)
        for key, reply in replies:
            for worker, task, epoch in self._waiting.pop(key, ()):
                if worker.task == (task, epoch):
                    pool.send(worker, reply)

    def _answered(self, settled: Settled) -> tuple[NewRecord, dict[str, Any]]:
        """The ``model.call`` of an answered call, under the step key and the epoch of the lease
        that holds the task now (by the coordinator when no waiting worker holds it: the
        answer is kept for whoever runs the step next), and the worker's reply."""
        assert self.broker is not None and settled.result is not None
        ticket, request = settled.ticket, settled.ticket.request
        lease = self.view.tasks[ticket.task].lease if ticket.task in self.view.tasks else None
        holder = next((w.id for w, _, epoch in self._waiting.get(ticket.key, ()) if lease and lease.epoch == epoch), None)
        record = self.new_record("model.call", key=ticket.key, task=ticket.task, epoch=lease.epoch if lease and holder else None,
                                 actor=holder or "coordinator", payload=call_payload(self.broker.spec, ticket, settled.result),
                                 why=f"{request.pass_name} {request.candidate.rule_id} at {request.candidate.path}:{request.candidate.line}")
        return record, {"op": "model.answer", "key": ticket.key, "answer": settled.result.answer.to_json()}

    def _failed(self, settled: Settled) -> tuple[NewRecord | None, dict[str, Any]]:
        """What a failed call means: a terminal error (an exhausted quota, a refusal) stops new
        calls and halts the run once the calls in flight are settled, and its worker hands the
        task back; any other error fails the step. Tokens billed for malformed answers are
        recorded (a ``model.call`` without an answer)."""
        assert self.broker is not None and settled.error is not None
        ticket, error = settled.ticket, settled.error
        halt = halt_for(error, spec=self.broker.spec, now_ms=self.clock())
        if halt is not None:
            self._model_halt = self._model_halt or halt
            self.broker.stop()
        unavailable = halt is not None or isinstance(error, Withheld)
        reply = {"op": "model.error", "key": ticket.key, "kind": "unavailable" if unavailable else "failed",
                 "error": str(error)[:500], "failure": type(error).__name__, "code": error.facts.get("code")}
        spent = malformed_spend(ticket, error)
        if spent is None:
            return None, reply
        return self.new_record("model.call", key=f"{ticket.key}#malformed-{secrets.token_hex(4)}", task=ticket.task,
                               why=f"spent on malformed answers: {error}"[:500], payload=spent), reply

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

    # -- endings ------------------------------------------------------------------------

    def _halt(self, kind: str, reason: str, *, extra: dict[str, Any] | None = None) -> RunResult:
        # Recorded before the workers are stopped (which can take seconds when one is paused
        # or stuck): from here on the fence refuses what they send, and on a shared ledger the
        # leader lease does not lapse meanwhile.
        mine = [self.view.leader] if self.view.leader is not None and self.view.leader.session == self.session else []
        released = [self.new_record("lease.expired", task=lease.task, epoch=lease.epoch,
                                    why=f"run halting ({kind}); lease of {lease.worker} taken back",
                                    payload={"worker": lease.worker, "cause": "halt"})
                    for lease in self.view.leases() + mine]
        self.append(released + [self.new_record("run.halted", why=reason, payload={"kind": kind, **(extra or {})})])
        self._stop_pool()
        note = ""
        try:
            self.job.on_halt(HostContext(self))
        except (EffectUncertain, EffectDenied) as exc:
            self.append([self.new_record("decision", why=f"partial outputs not written: {exc}")])
        except OSError as exc:  # partial outputs on a full disk: the ledger already says HALTED
            if exc.errno not in NO_SPACE:
                raise
            note += f"; partial outputs not written ({exc})"
        try:
            self._write_state(force=True)
        except OSError as exc:  # the file is replaced atomically: it is left whole, as it was
            if exc.errno not in NO_SPACE:
                raise
            note += (f"; the run-state file or head could not be written ({exc}): the ledger says HALTED and wins at "
                     "the next start")
        return RunResult(run_id=self.view.run_id, state="HALTED", exit_code=EXIT_HALTED,
                         message=f"run {self.view.run_id} HALTED: {reason}{note}")

    def _halt_for_space(self, exc: OSError) -> RunResult:
        """Records HALTED after a workspace file could not be written for want of space.

        Raises:
            OutOfSpaceError: the halt itself cannot be recorded (the ledger's disk is full too);
                the run stays RUNNING in the ledger and in the run-state file.
        """
        self._stop_pool()
        reason = f"the disk is full ({exc}); free some space, then `fleetledger resume`"
        if not self.view.run_id or self.view.state is None:
            raise errors.OutOfSpaceError(f"{reason}; nothing was started") from exc
        if self.view.state == "JACKED_OUT":  # run.finished is recorded: the file is rebuilt at the next start
            raise errors.OutOfSpaceError(f"run {self.view.run_id} finished, but {reason.split(';')[0]}: its run-state "
                                         "file was left as it was and is rebuilt from the ledger at the next start") from exc
        try:
            return self._halt("disk", reason)
        except errors.LedgerError as again:
            raise errors.OutOfSpaceError(
                f"{reason}; the ledger could not record HALTED either ({again}), so the run stays RUNNING and "
                "`fleetledger recover` resumes it once there is space") from exc

    def _halt_after_error(self, exc: errors.LedgerError) -> RunResult:
        """Records HALTED after the ledger failed for longer than the retry window (on a shared
        ledger, leaves the run instead: it goes on on the hosts that reach the ledger).

        Raises:
            LedgerError: the halt itself cannot be recorded (the ledger is still unwritable);
                the run stays RUNNING in the ledger, so `recover` resumes it once it is back.
        """
        self._stop_pool()
        if not self.view.run_id or self.view.state is None:
            raise exc
        try:
            if self.shared:  # the run goes on on the hosts that reach the ledger (or `recover` here)
                return self._leave(f"the ledger could not be reached for {self.ledger_retry_s:g} s: {exc}")
            return self._halt("ledger", f"the ledger could not be written for {self.ledger_retry_s:g} s: {exc}")
        except errors.LedgerError:
            error = errors.OutOfSpaceError if getattr(exc, "no_space", False) else errors.LedgerError
            raise error(
                f"{exc}; the run could not even be marked HALTED, so it stays RUNNING in the ledger and "
                "`fleetledger recover` resumes it once the ledger is writable again") from exc

    def _finish(self) -> RunResult:
        retry = self.job.retry_sprint(self.reader())
        if retry is not None:  # not finished: steps to try again once their cause may have cleared
            return self._halt("retry", retry[1], extra={"sprint": retry[0]})
        self._stop_pool()
        outcome = self.job.outcome(self.reader(), str(self.workspace.root))
        self.append([self.new_record("run.finished", key=self.view.run_id, why=outcome.summary,
                                     payload={"outputs": outcome.outputs})])
        self._write_state(force=True)
        return RunResult(run_id=self.view.run_id, state="JACKED_OUT", exit_code=EXIT_OK, outcome=outcome,
                         message=f"run {self.view.run_id} finished; {outcome.summary}")

    def _write_state(self, *, force: bool = False) -> None:
        """Writes the run-state file and keeps the run's signed head (at most every
        ``state_interval_s`` unless ``force``).

        Raises:
            OSError: the run-state file could not be written (it is then left whole, as it was),
                or the disk is full (``NO_SPACE``) where the head is kept (raised after the run-state
                file was written). Other failures to keep the head are a warning.
        """
        now = self.clock()
        if not force and now - self._state_written_ms < self.options.state_interval_s * 1000:
            return
        if self.view.state is None:
            return
        state = runstate.project(self.view, self.ledger_url)
        head = heads.sign(self.view.run_id, self.view.last_seq, self.view.last_hash, owner_key())
        state.data["ledger"]["head"] = head
        full = None
        try:
            heads.store(self.ledger_url, head)
        except OSError as exc:  # the run goes on; its head is still in the run-state file
            if exc.errno in NO_SPACE:
                full = exc  # unless the disk is full: the run halts (after this state file is written)
            elif not self._head_unstored:
                self._head_unstored = True
                print(f"warning: the run's signed head cannot be kept in {heads.state_folder()} ({exc}); "
                      "`verify` will rely on the run-state file's copy", file=sys.stderr)
        runstate.write(self.workspace.state_path, state)
        self._state_written_ms = now
        if full is not None:
            raise full


def policy_in_force(policy: Policy, job: Job | None) -> Policy:
    """Returns the policy a run of ``job`` works under: ``policy`` (the user's, read afresh by
    the caller) narrowed by the job's repository rules, if it has a repository. Every record a
    coordinator or ``halt_idle_run`` writes carries its hash."""
    repository = job.repository() if job is not None else None
    return policy.narrowed_by(Path(repository) / REPO_RULES_FILE) if repository is not None else policy


def current_run_id(workspace: Workspace, storage: Storage) -> str:
    """Returns the workspace's current run: the run-state file's, if the ledger has it, else the
    ledger's latest run (read-only).

    Raises:
        NoRunError: the ledger holds no run.
    """
    runs = [r.run_id for r in storage.first_records()]
    if not runs:
        raise errors.NoRunError(f"no run in {workspace.root}; start one with `fleetledger scan PATH`")
    try:
        state = runstate.read(workspace.state_path)
    except errors.StateFileError:
        state = None
    return state.plan_id if state is not None and state.plan_id in runs else runs[-1]


def settle_state_file(workspace: Workspace, *, clock: Callable[[], int] = wall_clock_ms) -> tuple[RunView, str | None]:
    """Takes the run lock, folds the current run and makes the run-state file agree with it.

    Returns:
        ``(view, note)``: the run, and what was wrong with the file (None if nothing).

    Raises:
        RunLockedError: a coordinator runs the workspace now.
        NoRunError: the workspace holds no run.
        LedgerDamagedError: the ledger is damaged, or ends before (or differs at) the run's signed head.
    """
    if not workspace.exists():
        raise errors.NoRunError(f"no ledger in {workspace.root}; start a run with `fleetledger scan PATH`")
    with workspace.lock(f"settle-{secrets.token_hex(2)}"), open_storage(workspace.ledger_url) as storage:
        run_id = current_run_id(workspace, storage)
        view = load_view(storage, run_id)
        # before the state file, which holds a copy of the head, is set aside
        heads.refuse_if_contradicted(storage, run_id, view.last_seq, workspace.state_path)
        _, note = runstate.reconcile(workspace.state_path, view, workspace.ledger_url, now_ms=clock())
        return view, note


def lease_ttl_ms(base_ttl_s: float, previous_attempts: int) -> int:
    """Returns the lease TTL of an assignment in ms: the base TTL, doubled for each earlier
    attempt (at most 8x), so work that outlives its lease without heartbeats still finishes
    on a later attempt instead of being taken over forever."""
    return int(base_ttl_s * 1000 * min(8, 2 ** previous_attempts))


def grant_approval(workspace: Workspace, *, action: str, target: str, expires_ms: int | None, reason: str,
                   clock: Callable[[], int] = wall_clock_ms) -> NewRecord:
    """Records an approval with a scope in the workspace's current run (``fleetledger approve``).

    Only this record approves anything: a log line, a summary or a past allowance never does.

    Args:
        workspace: The workspace (its run must not be live: halt it first).
        action: The action kind approved (``"effect"``).
        target: The effect kind or idempotency key approved.
        expires_ms: When the approval lapses, epoch ms UTC, or None for the rest of the run.
        reason: Why a person approved it (recorded).

    Returns:
        The record that was appended.

    Raises:
        RunLockedError: a coordinator runs the workspace now.
        NoRunError: the workspace holds no run.
    """
    with workspace.lock(f"approve-{secrets.token_hex(2)}"), open_storage(workspace.ledger_url) as storage:
        run_id = current_run_id(workspace, storage)
        record = NewRecord(run_id=run_id, actor=APPROVER, kind="approval.granted", why=reason,
                           payload={"scope": {"action": action, "target": target, "expires_ms": expires_ms},
                                    "by": os.environ.get("USER", "?")})
        storage.append([record], now_ms=clock())
        return record


def halt_idle_run(workspace: Workspace, reason: str, *, policy: Policy | None = None,
                  clock: Callable[[], int] = wall_clock_ms) -> RunView:
    """Marks the workspace's latest run HALTED when no coordinator runs it (after a crash).

    Its open leases are taken back (their holders are gone: the run lock is free). The records
    carry the hash of ``policy``: the policy in force, resolved as a coordinator would
    (``policy_in_force``); the safe defaults when None.

    Returns:
        The run's view after the halt (unchanged if it was not RUNNING).

    Raises:
        RunLockedError: a coordinator runs it now (ask it to stop instead).
        NoRunError: the workspace holds no run.
    """
    with workspace.lock(f"halt-{secrets.token_hex(2)}"), open_storage(workspace.ledger_url) as storage:
        run_id = current_run_id(workspace, storage)
        view = load_view(storage, run_id)
        if view.state != "RUNNING":
            return view
        in_force = policy or Policy()

        def record(kind: str, **fields: Any) -> NewRecord:
            return NewRecord(run_id=view.run_id, actor="coordinator", kind=kind, policy_hash=in_force.hash, **fields)
        batch = [record("lease.expired", task=l.task, epoch=l.epoch, why=f"run halted; lease of {l.worker} taken back",
                        payload={"worker": l.worker, "cause": "halt"}) for l in view.leases()]
        batch.append(record("run.halted", why=reason, payload={"kind": "user"}))
        for outcome in storage.append(batch, now_ms=clock()):
            if isinstance(outcome, Appended):
                view.apply(outcome.record)
        runstate.write(workspace.state_path, runstate.project(view, workspace.ledger_url))
        return view


WORKER_RECORD_KINDS = frozenset({"step.intent", "step.done", "step.failed", "model.call"})
"""The record kinds a worker may send; every other kind is written by the coordinator or a person."""


MODEL_FIGURES = ("input_tokens", "output_tokens", "cost_usd")
"""The spend a worker's ``model.call`` record reports: each must be a finite number >= 0."""


def _worker_overreach(worker: WorkerProc, message: dict[str, Any], calls_allowed: int) -> str | None:
    """Returns why a worker's task message must be refused, or None when it may be appended
    (the ledger's fence then checks its epoch against the lease, as for any record).

    A worker speaks only for a ``(task, epoch)`` leased to it; it records only the kinds of
    ``WORKER_RECORD_KINDS``, under keys of its own task's planned steps (``step_key``:
    ``<task>/<name>@<hash>``), with a spend that is not negative; it asks the coordinator for
    at most ``calls_allowed`` model calls per lease, and only while it holds the lease.
    """
    op, task, epoch, key = message.get("op"), message.get("task"), message.get("epoch"), message.get("key")
    who = f"worker {worker.id}"
    if op == "record" and message.get("kind") not in WORKER_RECORD_KINDS:
        return f"{who} sent a {message.get('kind')!r} record; workers may record only {', '.join(sorted(WORKER_RECORD_KINDS))}"
    lease = (task, epoch)
    if lease not in worker.assigned:
        return f"{who} spoke for task {task!r} at epoch {epoch!r}, which was never leased to it"
    if op == "model" and lease != worker.task:
        return f"{who} asked for a model call for task {task!r} at epoch {epoch!r}, which it no longer holds"
    if op in ("record", "model"):
        names = worker.assigned[lease]
        name = key.removeprefix(f"{task}/").rpartition("@")[0] if isinstance(key, str) else ""
        if not isinstance(key, str) or not key.startswith(f"{task}/") or (names is not None and name not in names):
            return f"{who} used the key {key!r}, which is not a step of its task {task!r}"
    if op == "record" and message.get("kind") == "model.call":
        payload = message.get("payload") or {}
        bad = [f for f in MODEL_FIGURES if f in payload and not _spend_ok(payload[f])]
        if bad:
            return f"{who} reported a model call with {', '.join(f'{f}={payload[f]!r}' for f in bad)}"
    if op == "model":
        asked = worker.asked.setdefault(lease, set())
        asked.add(str(key))
        if len(asked) > calls_allowed:
            return f"{who} asked for {len(asked)} model calls on task {task!r}; its lease allows {calls_allowed}"
    return None


def _spend_ok(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0

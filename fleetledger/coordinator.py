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

This module is the loop; each part it calls lives in ``fleetledger/run/``, one concept a module:
``recovery`` (the start), ``leadership`` (hosts of a shared ledger), ``dispatch`` (plans,
assignments, leases), ``workers`` (the worker protocol and its trust boundary), ``settlement``
(model calls), ``halts``; ``options``, ``host`` and ``operations`` hold what callers use.
"""

from __future__ import annotations

import secrets
import signal
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from . import errors, faults, heads, runstate
from .account import account_session
from .effects import EffectDenied, EffectUncertain
from .gate import Decision, Gate
from .policy import Policy
from .jobs.base import Job
from .ledger import Appended, NewRecord, Outcome, Record, Storage, open_storage
from .ledger.retrying import RetryingStorage
from .model_broker import Halt, ModelBroker, Ticket, before_reset
from .models.config import ModelConfig
from .pool import WorkerPool, WorkerProc
from .reader import RunReader, checkpoint_payload
from .replay import RunView
from .sandbox import Sandbox, get_sandbox
from .sandbox.egress import EgressForwarder
from .workspace import Workspace, owner_key
from .run.dispatch import DispatchMixin
from .run.gc_threshold import young_objects_collected_less
from .run.halts import HaltsMixin
from .run.leadership import LeadershipMixin
from .run.recovery import RecoveryMixin
from .run.reusing import ReuseMixin
from .run.settlement import SettlementMixin
from .run.workers import WorkersMixin
from .run.host import HostContext, atomic
from .run.operations import current_run_id, grant_approval, halt_idle_run, policy_in_force, settle_state_file
from .run.options import EXIT_HALTED, EXIT_OK, LEDGER_RETRY_S, NO_SPACE, RunOptions, RunResult, lease_ttl_ms, wall_clock_ms

__all__ = ["EXIT_HALTED", "EXIT_OK", "Coordinator", "HostContext", "RunOptions", "RunResult", "atomic", "current_run_id",
           "grant_approval", "halt_idle_run", "lease_ttl_ms", "policy_in_force", "settle_state_file", "wall_clock_ms"]


class Coordinator(RecoveryMixin, LeadershipMixin, DispatchMixin, WorkersMixin, SettlementMixin, HaltsMixin, ReuseMixin):
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
        self._disk_full: str | None = None
        """Set when a worker met a full disk (``steps.OutOfSpace``): the run halts for space."""
        self._state_written_ms = 0
        self._reserved: dict[str, int] = {}
        self._calls_made: dict[str, int] = {}
        self._failed_starts = 0
        self._overreach: str | None = None
        self._forwarders: list[EgressForwarder] = []
        self._attempts: dict[str, int] = {}
        # worker id -> (sprint, plan position) of its last task: an ordering hint only (``run.locality``); a new
        # session starts without it and loses nothing but the order
        self._last_position: dict[str, tuple[str, int]] = {}
        self._settle_checked: set[str] = set()
        self._reader: RunReader | None = None  # tasks considered for settling on the coordinator (run.reusing)
        self._read_decisions: dict[str, Decision] = {}  # gate decisions on reads (the policy is fixed per session)
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

    def new_record(self, kind: str, *, key: str | None = None, task: str | None = None,
                   epoch: int | None = None, why: str = "", payload: dict[str, Any] | None = None,
                   actor: str = "coordinator", payload_json: str | None = None) -> NewRecord:
        """Builds a record of this run under the policy in force (nothing is appended);
        ``payload_json``: the payload's canonical JSON when the caller has it
        (``NewRecord.payload_json``)."""
        return NewRecord(run_id=self.view.run_id, actor=actor, kind=kind, key=key, task=task, epoch=epoch,
                         why=why, payload=payload or {}, policy_hash=self.policy.hash, payload_json=payload_json)

    def reader(self) -> RunReader:
        """The live view, with reads of what it leaves in the ledger (one reader per view and
        storage, so that what a job derives from the ledger is kept between calls:
        ``RunReader.memo``)."""
        assert self.storage is not None
        reader = self._reader
        if reader is None or reader.view is not self.view or reader.storage is not self.storage:
            reader = self._reader = RunReader(self.storage, self.view)
        return reader

    def append(self, records: Sequence[NewRecord]) -> list[Outcome]:
        """Appends records in one durable transaction and folds the appended ones into the view.

        A failing write (the disk, a lock held too long, a dropped connection) is retried with
        backoff for up to ``ledger_retry_s`` seconds, as every ledger call of the coordinator
        is (``RetryingStorage``). On a shared ledger the view then folds every record appended
        since its last one, by any coordinator. When a checkpoint is due after them
        (``RunView.checkpoint_due``), one follows in its own transaction.

        A call that raises may still have stored the batch: the commit can be durable and its
        acknowledgement lost (a dropped connection), or the disk can fill just after it. Before
        the error goes on, the view folds whatever the ledger now holds after its last record
        (``_resync``), so that what the caller does next (a halt, above all) reads a view that
        agrees with the ledger: never a ``run.halted`` after a stored ``run.finished``.

        Raises:
            LedgerError: the storage kept failing; the view holds what of the batch was stored.
            OSError: a write failed after the commit (a full disk); the view holds the batch.
        """
        assert self.storage is not None
        try:
            outcomes = self.storage.append(records, now_ms=self.clock())
        except (errors.LedgerError, OSError):
            self._resync()
            raise
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

    def _resync(self) -> None:
        """After an append that raised: folds what the ledger holds after the view's last record
        (the failed batch, when its commit was durable). Best effort: when the ledger cannot be
        read either, the view stays as it was and the append's own error is what the caller sees."""
        if self.storage is None or not self.view.run_id:
            return
        try:
            self.catch_up()
        except (errors.LedgerError, OSError, ValueError):
            pass

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

    def run(self) -> RunResult:
        """Runs (starts, resumes or leaves alone) the workspace's run of this job.

        Returns:
            How the session ended.

        Raises:
            RunLockedError: another process runs this workspace now.
            SandboxUnavailable: the configured sandbox cannot run here.
            LedgerError: the ledger cannot be read or written.
            UsageError: the job's model cannot be used (unknown, no key, no price for a cost budget),
                the workspace is inside the scanned tree and was not made here, or the result
                cache is inside the scanned tree.
        """
        self.sandbox.check_available()
        self.workspace.check_made_here([Path(p) for p in self.job.read_only_paths()])
        self._check_cache()
        with self.workspace.lock(self.session):
            storage = open_storage(self.ledger_url)
            self.ledger_url = storage.url  # as the storage shows it: without a password
            self.shared = storage.shared
            self.storage = RetryingStorage(storage, retry_s=self.ledger_retry_s)
            previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
            for sig in previous:
                signal.signal(sig, self._on_signal)
            try:
                with young_objects_collected_less():
                    result = self._run_locked()
                return self._accounted(result)
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

    def _run_locked(self) -> RunResult:
        if self.options.join is not None:
            return self._join(self.options.join)
        found = None if self.options.new_run else self._find_run()
        existing = found.view if found is not None else None
        latest = self._latest_other_run(existing)
        if existing is not None:
            self._check_head(existing)
        since: dict[str, str] = {}
        if existing is not None and existing.state == "JACKED_OUT" and self.job.reruns_when_changed:
            self.view = existing
            tree, code = self.job.changed_since(self.reader()), self._code_changed(existing)
            policy = self._policy_changed(existing)  # it decides results too (every reuse key holds its hash)
            if tree is not None or code is not None or policy is not None:  # a new run, paying only for what changed
                changed = "; ".join(([f"the tree: {tree}"] if tree else []) + ([f"the code: {code}"] if code else [])
                                    + ([f"the policy: {policy}"] if policy else []))
                since = {"run": existing.run_id, "changed": changed}
                found = existing = None
                print(f"changed since run {since['run']} finished: {changed}; a new run takes the results of what "
                      "did not change from the earlier runs and computes the rest", file=sys.stderr)
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
            why = f"start {self.job.kind} of {self.job.describe().get('target')}"
            if since:
                payload["changed_since"] = since
                why += f": it changed since run {since['run']} finished ({since['changed']})"
            self._begin_session(self.new_record("run.started", key=self.view.run_id, payload=payload, why=why),
                                *self._whole_loss_note())
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

    def _finish(self) -> RunResult:
        retry = self.job.retry_sprint(self.reader())
        if retry is not None:  # not finished: steps to try again once their cause may have cleared
            return self._halt("retry", retry[1], extra={"sprint": retry[0]})
        self._stop_pool()
        outcome = self.job.outcome(self.reader(), str(self.workspace.root))
        self.append([self.new_record("run.finished", key=self.view.run_id, why=outcome.summary,
                                     payload={"outputs": outcome.outputs})])
        self._write_state(force=True)
        self._fill_cache()
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

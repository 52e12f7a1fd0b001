"""Workspace operations that need no live coordinator: the workspace's current run, settling
the run-state file against the ledger, granting an approval, halting a run no coordinator
runs, and the policy in force for a job."""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import errors, heads, runstate
from ..policy import REPO_RULES_FILE, Policy
from ..jobs.base import Job
from ..ledger import Appended, NewRecord, Storage, open_storage
from ..reader import load_view
from ..replay import APPROVER, RunView
from ..workspace import Workspace
from .options import wall_clock_ms


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


def policy_in_force(policy: Policy, job: Job | None) -> Policy:
    """Returns the policy a run of ``job`` works under: ``policy`` (the user's, read afresh by
    the caller) narrowed by the job's repository rules, if it has a repository. Every record a
    coordinator or ``halt_idle_run`` writes carries its hash."""
    repository = job.repository() if job is not None else None
    return policy.narrowed_by(Path(repository) / REPO_RULES_FILE) if repository is not None else policy


"""``fleetledger audit PATH``: which worker touched a file, when, under which lease, and why.

The answer is computed from the ledger alone: the tasks whose plan covers the file, their
assignments and lease events (who held them, at which epoch, in which process), and every step
about the file or about a candidate found in it, with the recorded reason and policy hash. Only
the records of the tasks that cover the file are read (by task, through the ledger's index), so
an audit costs what it finds, not the length of the ledger.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from . import errors
from .jobs.base import TaskSpec
from .ledger.records import iso_utc
from .reader import RunReader

if TYPE_CHECKING:
    from .workspace import Workspace

_TASK_KINDS = frozenset({"task.assigned", "lease.expired", "lease.released", "task.finished", "task.failed"})
_STEP_KINDS = frozenset({"step.intent", "step.done", "step.failed", "model.call"})


def _task_paths(tasks: list[TaskSpec]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for task in tasks:
        paths = {f["path"] for f in task.inputs.get("files", ())} if isinstance(task.inputs.get("files"), list) else set()
        paths |= {item["candidate"]["path"] for item in task.inputs.get("items", ())}
        out[task.id] = paths
    return out


def _step_subject(name: str, candidate_paths: dict[str, str]) -> str | None:
    kind, _, rest = name.partition(":")
    if kind == "detect":
        return rest
    return candidate_paths.get(rest)


def audit(run: RunReader, path: str, *, worker: str | None = None,
          task: str | None = None, since_ms: int | None = None) -> list[dict[str, Any]]:
    """Lists every recorded action that touched ``path`` (a file, or a folder prefix).

    Args:
        run: The run (its view, and its ledger to read the covering tasks' records from).
        path: Relative path of a file, or of a folder (every file under it).
        worker, task: Only actions by this worker / in this task.
        since_ms: Only records at or after this epoch ms.

    Returns:
        One dict per record: ``seq``, ``ts``, ``worker``, ``task``, ``epoch``, ``kind``, ``step``,
        ``why``, ``policy_hash``, ``pid`` (of the process holding the lease).
    """
    prefix = path.rstrip("/")
    matches = lambda p: p == prefix or p.startswith(prefix + "/") or prefix in ("", ".")  # noqa: E731
    planned = run.planned(run.view.tasks)
    task_paths = _task_paths(planned)
    candidate_paths = {}
    for t in planned:
        for item in t.inputs.get("items", ()):
            candidate_paths[item["candidate"]["id"]] = item["candidate"]["path"]
    covering = [t for t, paths in task_paths.items() if any(matches(p) for p in paths) and task in (None, t)]
    holders: dict[tuple[str, int], dict[str, Any]] = {}
    step_names: dict[str, str] = {}
    rows = []
    for r in run.history(covering):
        if r.kind == "task.assigned":
            holders[(r.task, r.epoch)] = r.payload
        relevant = False
        step = None
        if r.kind in _STEP_KINDS and r.key:
            step = step_names.get(r.key)
            if step is None and r.kind != "model.call":
                step = r.payload.get("name")
                if step:
                    step_names[r.key] = step
            subject = _step_subject(step, candidate_paths) if step else None
            relevant = subject is not None and matches(subject)
        elif r.kind in _TASK_KINDS and r.task is not None:
            relevant = any(matches(p) for p in task_paths.get(r.task, ()))
        if not relevant:
            continue
        holder = holders.get((r.task, r.epoch), {}) if r.task else {}
        actor = r.actor if r.actor != "coordinator" else holder.get("worker", "coordinator")
        if worker is not None and actor != worker:
            continue
        if since_ms is not None and r.ts_ms < since_ms:
            continue
        rows.append({"seq": r.seq, "ts": iso_utc(r.ts_ms), "worker": actor, "recorded_by": r.actor,
                     "task": r.task, "epoch": r.epoch, "pid": holder.get("pid"), "kind": r.kind, "step": step,
                     "why": r.why, "policy_hash": r.policy_hash})
    return rows


def audit_workspace(workspace: "Workspace", path: str, *, worker: str | None = None, task: str | None = None,
                    since: str | None = None, warn: Callable[[str], None]) -> list[dict[str, Any]]:
    """``fleetledger audit``: lists every recorded action of the workspace's current run that
    touched ``path`` (``audit`` over ``status.current_run``, read-only).

    Args:
        workspace: The workspace.
        path, worker, task: As ``audit``'s.
        since: Only actions at or after this UTC time (ISO-8601; without a zone, UTC), or None.
        warn: Called with a warning when the workspace lies in the current folder and was not
            made here (what follows may be a forged history).

    Returns:
        As ``audit``.

    Raises:
        NoRunError: the workspace has no ledger, or the ledger no run.
        UsageError: ``since`` is not an ISO-8601 time.
        LedgerDamagedError, LedgerError: as ``status.current_run``.
    """
    from .status import current_run, require_ledger

    require_ledger(workspace)
    since_ms = parse_since(since)
    with current_run(workspace, warn=warn) as (storage, view):
        return audit(RunReader(storage, view), path, worker=worker, task=task, since_ms=since_ms)


def patches_workspace(workspace: "Workspace", path: str, *, warn: Callable[[str], None]) -> list[dict[str, Any]]:
    """The account of each patch proposed for a file at or under ``path`` in the workspace's
    current run (``patch_account``; [] for a run without a fix sprint; read-only).

    Raises:
        NoRunError, LedgerDamagedError, LedgerError: as ``status.current_run``.
    """
    from .jobs.scan.patch_account import patch_account
    from .status import current_run, require_ledger

    require_ledger(workspace)
    with current_run(workspace, warn=warn) as (storage, view):
        if view.job.get("kind") != "scan":
            return []
        return patch_account(RunReader(storage, view), path)


def parse_since(since: str | None) -> int | None:
    """Returns ``--since`` (an ISO-8601 time such as ``2026-11-29T10:00:00Z``; without a zone,
    UTC) as epoch ms, or None for None.

    Raises:
        UsageError: ``since`` is not an ISO-8601 time.
    """
    if not since:
        return None
    try:
        moment = dt.datetime.fromisoformat(since.replace("Z", "+00:00"))
    except ValueError as exc:
        raise errors.UsageError(f"--since {since!r} is not an ISO-8601 time such as 2026-11-29T10:00:00Z") from exc
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.timezone.utc)
    return int(moment.timestamp() * 1000)


def audit_line(row: dict[str, Any]) -> str:
    """Returns one of ``audit``'s rows as the line ``fleetledger audit`` prints (time, worker,
    task@epoch, kind, step, why; not yet made printable)."""
    where = f"{row['task']}@{row['epoch']}" if row["task"] else "-"
    return f"{row['ts']}  {row['worker']:<11} {where:<20} {row['kind']:<13} {row['step'] or '':<40} {row['why']}"

"""Where the workspace's current run stands, read-only: the fold every report command starts from
(``current_run``), and the status projection ``fleetledger status`` prints (``status_data``,
``status_lines``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from . import errors
from .ledger import Storage, open_storage
from .ledger.records import iso_utc
from .reader import load_view
from .replay import RunView
from .trust import warn_if_not_made_here
from .workspace import Workspace


def require_ledger(workspace: Workspace) -> None:
    """Raises NoRunError (saying how to start a run) when the workspace has no ledger."""
    if not workspace.exists():
        raise errors.NoRunError(f"no ledger in {workspace.root}; start a run with `fleetledger scan PATH`")


@contextmanager
def current_run(workspace: Workspace, *, warn: Callable[[str], None]) -> Iterator[tuple[Storage, RunView]]:
    """Opens the workspace's ledger and folds its current run from the latest checkpoint
    (read-only; the run-state file is not touched).

    Args:
        workspace: The workspace to read.
        warn: Called with a warning before anything in a workspace of the current folder that
            was not made here is read (``trust.workspace_doubt``: what follows may be a forged
            history); reading goes on.

    Yields:
        ``(storage, view)``: the open ledger (closed on exit) and the folded run.

    Raises:
        NoRunError: the workspace has no ledger, or the ledger no run.
        LedgerError: the ledger cannot be read.
        LedgerDamagedError: the ledger ends before the head this user signed last, or differs
            at it (``heads.refuse_if_contradicted``: a rewritten or cut history).
    """
    from .coordinator import current_run_id
    from .heads import refuse_if_contradicted

    require_ledger(workspace)
    warn_if_not_made_here(workspace, warn)
    with open_storage(workspace.ledger_url) as storage:
        view = load_view(storage, current_run_id(workspace, storage))
        refuse_if_contradicted(storage, view.run_id, view.last_seq, workspace.state_path)
        yield storage, view


def current_view(workspace: Workspace, *, warn: Callable[[str], None]) -> RunView:
    """Returns the workspace's current run, folded as ``current_run`` folds it (the ledger is
    closed again). Raises as ``current_run``."""
    with current_run(workspace, warn=warn) as (_, view):
        return view


def status_data(view: RunView, workspace: Workspace, now_ms: int) -> dict[str, Any]:
    """Returns the status of a run as JSON-ready data (read-only): what ``fleetledger status
    --json`` prints.

    Args:
        view: The run, folded from the ledger.
        workspace: Its workspace (whose run lock tells whether a coordinator is live).
        now_ms: The current time, epoch ms UTC (ages and expiries are counted from it).

    Returns:
        ``run_id``, ``state``, ``live_pid`` (None: no coordinator), ``leader`` (a run shared by
        several hosts, else None), ``target``, ``started``, ``last_activity``,
        ``last_activity_age_s``, ``halt``, ``sprints``, ``leases``, ``workers``, ``model``,
        ``records`` and ``last_seq``.
    """
    holder = workspace.lock_holder()
    sprints = []
    for s in view.sprints.values():
        done, total = view.sprint_progress(s.id)
        sprints.append({"id": s.id, "status": s.status, "tasks_done": done, "tasks_total": total})
    workers = {}
    for wid, w in sorted(view.workers.items()):
        workers[wid] = {"task": w.get("task"), "pid": w.get("pid"),
                        "heartbeat_age_s": round((now_ms - w["last_seen_ms"]) / 1000, 1) if w.get("last_seen_ms") else None}
    leases = [{"task": l.task, "worker": l.worker, "epoch": l.epoch,
               "expires_in_s": round((l.expires_ms - now_ms) / 1000, 1),
               "heartbeat_age_s": round((now_ms - l.renewed_ms) / 1000, 1)} for l in view.leases()]
    leader = None
    if view.leader is not None:  # a run shared by coordinators on several hosts
        session = next((s for s in reversed(view.sessions) if s.get("id") == view.leader.session), {})
        leader = {"session": view.leader.session, "host": session.get("host"), "pid": session.get("pid"),
                  "epoch": view.leader.epoch, "expires_in_s": round((view.leader.expires_ms - now_ms) / 1000, 1)}
    return {"run_id": view.run_id, "state": view.state, "live_pid": holder.get("pid") if holder else None,
            "leader": leader,
            "target": view.job.get("target"), "started": iso_utc(view.started_ms),
            "last_activity": iso_utc(view.last_activity_ms),
            "last_activity_age_s": round((now_ms - view.last_activity_ms) / 1000, 1),
            "halt": view.halt, "sprints": sprints, "leases": leases, "workers": workers,
            "model": view.model, "records": view.records, "last_seq": view.last_seq}


def status_lines(data: dict[str, Any]) -> list[str]:
    """Returns the lines ``fleetledger status`` prints for a person.

    Args:
        data: ``status_data``'s result.

    Returns:
        The lines, in order (not yet made printable: the caller escapes them).
    """
    from .model_broker import describe_spend

    live = f"live (pid {data['live_pid']})" if data["live_pid"] else "no coordinator running"
    lines = [f"run {data['run_id']}: {data['state']}, {live}",
             f"target {data['target']}; last activity {data['last_activity']} ({data['last_activity_age_s']} s ago)"]
    if data["halt"]:
        lines.append(f"halted: {data['halt'].get('reason')}")
    if data["leader"]:
        lead = data["leader"]
        lines.append(f"leader: coordinator {lead['session']} on {lead['host']} (pid {lead['pid']}), "
                     f"lease epoch {lead['epoch']} expires in {lead['expires_in_s']} s")
    for s in data["sprints"]:
        lines.append(f"  {s['id']:<12} {s['status']:<12} {s['tasks_done']}/{s['tasks_total']} tasks")
    for lease in data["leases"]:
        lines.append(f"  lease {lease['task']} -> {lease['worker']} epoch {lease['epoch']}, "
                     f"expires in {lease['expires_in_s']} s, heartbeat {lease['heartbeat_age_s']} s ago")
    if data["halt"] and data["halt"].get("reset_at"):
        lines.append(f"the model quota resets at {data['halt']['reset_at']}")
    lines.append(f"model spend: {describe_spend(data['model'])}; records: {data['records']}")
    return lines

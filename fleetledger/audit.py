"""``fleetledger audit PATH``: which worker touched a file, when, under which lease, and why.

The answer is computed from the ledger alone: the tasks whose plan covers the file, their
assignments and lease events (who held them, at which epoch, in which process), and every step
about the file or about a candidate found in it, with the recorded reason and policy hash. Only
the records of the tasks that cover the file are read (by task, through the ledger's index), so
an audit costs what it finds, not the length of the ledger.
"""

from __future__ import annotations

from typing import Any

from .jobs.base import TaskSpec
from .ledger.records import iso_utc
from .reader import RunReader

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

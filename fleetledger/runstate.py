"""The run-state file ``.run/sprint-plan-state.json``: a projection of the ledger.

It tells any fresh process or agent what to do with the workspace's run: RUNNING resumes
without asking, HALTED waits for an explicit resume, JACKED_OUT does nothing. Its keys
``state``, ``timestamps.started``, ``timestamps.last_activity`` and ``sprints.{total, completed,
current, list}`` follow the sprint-plan state file of the Loa agent framework, so agent tooling
that reads that file reads this one.

One writer (the coordinator holding the run lock) replaces it atomically (``fsutil``). It is a
cache: when it is missing, torn, of the wrong shape or contradicts the ledger, the ledger wins,
a bad file is set aside (renamed, never overwritten in place) and the file is rebuilt.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema

from . import errors, fsutil
from .ledger.records import iso_utc
from .replay import RunView

STATE_FILE = "sprint-plan-state.json"
SCHEMA_VERSION = 1

_ISO = {"type": "string", "pattern": r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$"}
JSON_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["schema", "plan_id", "state", "job", "timestamps", "sprints", "halt", "ledger"],
    "properties": {
        "schema": {"const": SCHEMA_VERSION},
        "plan_id": {"type": "string", "minLength": 1},
        "state": {"enum": ["RUNNING", "HALTED", "JACKED_OUT"]},
        "job": {"type": "object", "required": ["kind", "target", "argv"],
                "properties": {"argv": {"type": "array", "items": {"type": "string"}}}},
        "timestamps": {"type": "object", "required": ["started", "last_activity"],
                       "properties": {"started": _ISO, "last_activity": _ISO}},
        "sprints": {
            "type": "object", "required": ["total", "completed", "current", "list"],
            "properties": {
                "total": {"type": "integer", "minimum": 0},
                "completed": {"type": "integer", "minimum": 0},
                "current": {"type": ["string", "null"]},
                "list": {"type": "array", "items": {
                    "type": "object", "required": ["id", "status"],
                    "properties": {"id": {"type": "string"},
                                   "status": {"enum": ["pending", "in_progress", "completed"]}}}},
            },
        },
        "halt": {"type": ["object", "null"], "required": ["reason"]},
        "ledger": {"type": "object", "required": ["url", "seq"],
                   "properties": {"url": {"type": "string"}, "seq": {"type": "integer", "minimum": 0}}},
    },
}
_VALIDATOR = jsonschema.Draft202012Validator(JSON_SCHEMA)


@dataclass(frozen=True, kw_only=True)
class RunState:
    """The parsed run-state file. ``data`` is the whole JSON object, validated."""

    data: dict[str, Any]

    @property
    def state(self) -> str:
        """RUNNING, HALTED or JACKED_OUT."""
        return self.data["state"]

    @property
    def plan_id(self) -> str:
        """The run id."""
        return self.data["plan_id"]

    @property
    def seq(self) -> int:
        """The ledger sequence number the file was projected at."""
        return self.data["ledger"]["seq"]


def project(view: RunView, ledger_url: str) -> RunState:
    """Projects a run view onto the run-state file's shape (pure).

    Args:
        view: The folded run (``view.state`` must be set).
        ledger_url: URL of the ledger the view was folded from.

    Returns:
        The state to write.
    """
    sprint_list = [{"id": s.id, "status": s.status} for s in view.sprints.values()]
    halt = None
    if view.state == "HALTED" and view.halt is not None:
        halt = {k: v for k, v in view.halt.items() if k != "ts_ms"}
        halt["at"] = iso_utc(view.halt.get("ts_ms", view.last_activity_ms))
    data = {
        "schema": SCHEMA_VERSION,
        "plan_id": view.run_id,
        "state": view.state,
        "job": {"kind": view.job.get("kind", ""), "target": view.job.get("target", ""),
                "argv": list(view.job.get("argv", []))},
        "timestamps": {"started": iso_utc(view.started_ms), "last_activity": iso_utc(view.last_activity_ms)},
        "sprints": {
            "total": len(sprint_list),
            "completed": sum(1 for s in sprint_list if s["status"] == "completed"),
            "current": view.current_sprint(),
            "list": sprint_list,
        },
        "halt": halt,
        "ledger": {"url": ledger_url, "seq": view.last_seq},
    }
    return RunState(data=data)


def read(path: Path) -> RunState | None:
    """Reads and validates the run-state file (read-only).

    Args:
        path: The file, usually ``<workspace>/sprint-plan-state.json``.

    Returns:
        The state, or None when the file does not exist.

    Raises:
        StateFileError: the file is empty, torn, not JSON, or not of the documented shape;
            ``problem`` says which.
    """
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    if not raw:
        raise errors.StateFileError(f"{path} is empty (zero bytes)", path=str(path), problem="empty")
    try:
        data = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise errors.StateFileError(f"{path} is not valid JSON ({exc})", path=str(path), problem="not JSON") from exc
    error = jsonschema.exceptions.best_match(_VALIDATOR.iter_errors(data))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(top level)"
        raise errors.StateFileError(f"{path} has the wrong shape at {where}: {error.message}",
                                    path=str(path), problem="wrong shape")
    return RunState(data=data)


def write(path: Path, state: RunState) -> None:
    """Replaces the run-state file atomically and durably (see ``fsutil.atomic_write``).

    Raises:
        OSError: the write failed; the previous file is then untouched.
    """
    body = json.dumps(state.data, indent=2, sort_keys=False, ensure_ascii=False) + "\n"
    fsutil.atomic_write(path, body.encode("utf-8"), fault_prefix="runstate")


def set_aside(path: Path, now_ms: int) -> Path:
    """Renames a bad run-state file to ``<name>.bad-<epoch ms>`` beside it and returns the new path.

    The bad file is kept for a person to look at; it is never overwritten in place.
    """
    target = path.with_name(f"{path.name}.bad-{now_ms}")
    n = 0
    while target.exists():
        n += 1
        target = path.with_name(f"{path.name}.bad-{now_ms}-{n}")
    os.replace(path, target)
    fsutil.fsync_dir(path.parent)
    return target


def reconcile(path: Path, view: RunView, ledger_url: str, *, now_ms: int) -> tuple[RunState, str | None]:
    """Makes the run-state file agree with the ledger, the ledger winning.

    A missing or stale file (projected at an older sequence number) is rewritten. A file that
    is corrupt, of the wrong shape, about another run, or ahead of the ledger is set aside and
    rebuilt.

    Args:
        path: The run-state file.
        view: The run folded from the ledger.
        ledger_url: The ledger's URL.
        now_ms: Epoch ms, used to name a set-aside file.

    Returns:
        ``(state written, note)`` where ``note`` says what was wrong (None if nothing was).

    Raises:
        OSError: the file could not be set aside or written.
    """
    fresh = project(view, ledger_url)
    note = None
    try:
        current = read(path)
    except errors.StateFileError as exc:
        aside = set_aside(path, now_ms)
        note = f"{exc}; set aside as {aside.name} and rebuilt from the ledger"
        current = None
    if current is not None:
        if current.plan_id != view.run_id or current.seq > view.last_seq:
            aside = set_aside(path, now_ms)
            note = (f"{path.name} disagreed with the ledger (run {current.plan_id} at seq {current.seq}, "
                    f"ledger: run {view.run_id} at seq {view.last_seq}); set aside as {aside.name} and rebuilt")
        elif current.data == fresh.data:
            return current, None
    write(path, fresh)
    return fresh, note


def signed_head(path: Path, ledger_url: str) -> Any:
    """The signed head in the run-state file at ``path`` when the file is readable and names the
    ledger at ``ledger_url``, else None (read-only; a damaged file is ``recover``'s business)."""
    try:
        state = read(path)
    except errors.StateFileError:
        return None
    if state is None or state.data["ledger"].get("url") != ledger_url:
        return None
    return state.data["ledger"].get("head")

"""``fleetledger hook session-start``: what an agent session that just started, or was just
compacted, must do with the workspace's run.

The answer follows the three-state rule of the run-state file (``resumption.decide``), the
ledger winning where the two disagree: RUNNING continues without asking anyone (the coordinator
is live: nothing to start; it is not: run the recorded job command, or ``fleetledger recover``
when the run has been silent longer than the stale limit); HALTED waits for an explicit resume and says why; JACKED_OUT has
nothing to do and says where the outputs are; no run-state file, nothing to do. Where the run
stands (current sprint, what is recorded, the steps in flight) is rebuilt from the ledger, so a
session whose memory was compacted away picks up at the next unrecorded step.

The answer is printed in the JSON shape coding-agent CLIs accept from a SessionStart hook:
``{"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "..."}}``.
Nothing is written: a corrupt run-state file is reported (non-zero exit), never touched.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from typing import Any

from . import errors, runstate
from .ledger import open_storage
from .ledger.records import iso_utc
from .reader import load_view
from .replay import RunView
from .resumption import LIVE, NOTHING, WAIT, decide
from .trust import workspace_doubt
from .workspace import LEDGER_ENV, Workspace

HOOK_EVENT = "SessionStart"
DEFAULT_STALE_AFTER_S = 600.0
"""Seconds of silence after which a RUNNING run with no coordinator is reported as interrupted."""

_LIST_AT_MOST = 5


@dataclass(frozen=True, kw_only=True)
class Advice:
    """What the session must do.

    Attributes:
        state: RUNNING, HALTED or JACKED_OUT; None when there is no run-state file.
        action: ``live`` (a coordinator runs it: start nothing), ``continue`` (run ``command``
            now, without asking), ``recover`` (interrupted: run ``command`` now, without
            asking), ``wait`` (HALTED: wait for an explicit resume) or ``nothing``.
        command: The command to run for ``continue`` and ``recover``, else None.
        context: The text for the agent.
    """

    state: str | None
    action: str
    command: str | None
    context: str


def hook_output(advice: Advice) -> dict[str, Any]:
    """Returns the SessionStart hook's JSON object for ``advice``."""
    return {"hookSpecificOutput": {"hookEventName": HOOK_EVENT, "additionalContext": advice.context}}


def session_start(workspace: Workspace, *, now_ms: int, stale_after_s: float = DEFAULT_STALE_AFTER_S) -> Advice:
    """Decides what a fresh or compacted agent session does with the workspace's run (read-only).

    Args:
        workspace: The workspace (its run-state file and ledger are read, never written).
        now_ms: The current time, epoch ms UTC.
        stale_after_s: A RUNNING run with no coordinator whose last record is older than this
            is reported as interrupted (continue with ``fleetledger recover``).

    Returns:
        The advice.

    Raises:
        StateFileError: the run-state file is empty, torn, not JSON or of the wrong shape; it is
            left as it is and the message says how to rebuild it.
        LedgerError: the ledger cannot be read.
    """
    ws = shlex.quote(str(workspace.root))
    doubt = workspace_doubt(workspace)  # before anything in the workspace is read
    if doubt is not None:
        return Advice(state=None, action="nothing", command=None,
                      context=f"fleetledger (workspace {workspace.root}): do not continue it and do not "
                              f"trust what it says: {doubt}. Tell the user.")
    try:
        state = runstate.read(workspace.state_path)
    except errors.StateFileError as exc:
        raise errors.StateFileError(
            f"{exc}; it was left as it is: `fleetledger recover --workspace {ws}` sets it aside and rebuilds "
            "it from the ledger", path=exc.facts.get("path"), problem=exc.facts.get("problem")) from exc
    if state is None:
        return Advice(state=None, action="nothing", command=None,
                      context=f"fleetledger: no run in {workspace.root} (no run-state file): nothing to do.")
    head = f"fleetledger (workspace {workspace.root}): run {state.plan_id}"
    recorded_url = state.data["ledger"]["url"]
    if not recorded_url.startswith("sqlite:") and not os.environ.get(LEDGER_ENV):
        return Advice(state=state.state, action="wait", command=None,
                      context=f"{head} is in the shared ledger {recorded_url} (the run-state file says {state.state}), "
                              f"which this session cannot read: {LEDGER_ENV} is not set. Ask the user for that "
                              f"ledger's URL with its password, set {LEDGER_ENV} to it, and run this hook again.")
    view = _fold(workspace, state.plan_id)
    if view is None:
        return Advice(state=state.state, action="nothing", command=None,
                      context=f"{head}: the run-state file says {state.state}, but the ledger holds no such run, "
                              "so nothing can be continued. Tell the user; do not start the job again on your own.")
    name = view.state or state.state
    if name != state.state:
        head += (f" (the run-state file says {state.state}; the ledger, which wins, says {name}: "
                 f"`fleetledger recover --workspace {ws}` rebuilds the file)")
    decision = decide(name, explicit=False, holder=workspace.lock_holder)
    if decision.action == NOTHING:
        return Advice(state=name, action="nothing", command=None, context=_finished(head, view, workspace))
    if decision.action == WAIT:
        return _halted(head, view, state, ws)
    if decision.action == LIVE:
        context = (f"{head} is RUNNING, live in fleetledger pid {decision.pid}. Do not start it again and "
                   f"ask nobody: it goes on by itself; `fleetledger status --workspace {ws} --watch` shows it. "
                   f"{_where_it_stands(view)}")
        return Advice(state="RUNNING", action="live", command=None, context=context)
    return _running(head, view, ws, now_ms=now_ms, stale_after_s=stale_after_s)


def _halted(head: str, view: RunView, state: runstate.RunState, ws: str) -> Advice:
    halt = view.halt or state.data.get("halt") or {}
    reset = f" The quota resets at {halt['reset_at']}." if halt.get("reset_at") else ""
    context = (f"{head} is HALTED: {halt.get('reason', 'no reason recorded')}.{reset} "
               "Do not resume it and do not rerun the job on your own: wait until the user explicitly "
               f"resumes it (`fleetledger resume --workspace {ws}`, or the same job command again). "
               f"Tell the user why it stopped. {_where_it_stands(view)}")
    return Advice(state="HALTED", action="wait", command=None, context=context)


def _running(head: str, view: RunView, ws: str, *, now_ms: int, stale_after_s: float) -> Advice:
    """RUNNING and no coordinator holds the workspace: continue now, with ``recover`` (``ws``, the
    workspace quoted for a shell), said to be interrupted when silent longer than ``stale_after_s``."""
    stands = _where_it_stands(view)
    silent_s = (now_ms - view.last_activity_ms) / 1000
    recover = f"fleetledger recover --workspace {ws}"
    if silent_s > stale_after_s:
        context = (f"{head} is RUNNING but was interrupted: no coordinator holds the workspace and its last "
                   f"record is {silent_s:.0f} s old (limit {stale_after_s:g} s). Continue it now, without asking "
                   f"anyone: run `{recover}`. {stands}")
        return Advice(state="RUNNING", action="recover", command=recover, context=context)
    # Always `recover` with the absolute workspace: it continues exactly this run (the job is read
    # from the ledger) from any folder; a recorded job command could, run from elsewhere or after
    # the workspace was reused, be a usage error or start another run.
    command = recover
    context = (f"{head} is RUNNING and no coordinator holds the workspace. Continue it now, without asking "
               f"anyone: run `{command}` (it continues exactly this run, from any folder). {stands}")
    return Advice(state="RUNNING", action="continue", command=command, context=context)


def _fold(workspace: Workspace, run_id: str) -> RunView | None:
    if not workspace.exists():
        return None
    with open_storage(workspace.ledger_url) as storage:
        view = load_view(storage, run_id)
    return view if view.records else None


def _where_it_stands(view: RunView) -> str:
    sprints = list(view.sprints.values())
    current = view.current_sprint()
    parts = [f"Where it stands, rebuilt from the ledger (record #{view.last_seq}, {iso_utc(view.last_activity_ms)}):"]
    if current is not None:
        done, total = view.sprint_progress(current)
        index = [s.id for s in sprints].index(current) + 1
        parts.append(f"sprint {index} of {len(sprints)} is {current!r}, {done}/{total} tasks done;")
    parts.append(f"recorded so far: {sum(1 for s in sprints if s.status == 'completed')} sprint(s) completed, "
                 f"{sum(1 for t in view.tasks.values() if t.status == 'finished')} task(s) finished, "
                 f"{view.steps_done} step result(s), {int(view.model['calls'])} model call(s).")
    in_flight = [f"{name} of {task}" for task, steps in sorted(view.open_steps.items()) for name in steps.values()]
    if in_flight:
        parts.append(f"In flight when it stopped (intent recorded, no result; these run again): "
                     f"{_some(in_flight)}.")
    if current is not None:
        unfinished = [view.tasks[t] for t in view.sprints[current].tasks if view.tasks[t].status not in ("finished", "failed")]
        started = [f"{t.id} after its {t.steps_done} recorded step(s)" for t in unfinished if t.steps_done]
        if started:
            parts.append(f"Next: {_some(started)}; recorded steps are not run again.")
    return " ".join(parts)


def _some(items: list[str]) -> str:
    more = len(items) - _LIST_AT_MOST
    return ", ".join(items[:_LIST_AT_MOST]) + (f" and {more} more" if more > 0 else "")


def _finished(head: str, view: RunView, workspace: Workspace) -> str:
    outputs = [str(workspace.root / name) for e in view.effects.values() if e.get("done") is not None and e.get("intent")
               for name in e["intent"].get("files", ())]
    where = f" Outputs: {', '.join(outputs)}." if outputs else ""
    ended = f" at {iso_utc(view.finished_ms)}" if view.finished_ms else ""
    return f"{head} is JACKED_OUT (finished{ended}): nothing to do.{where}"

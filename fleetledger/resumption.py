"""What to do with a workspace's run now: the three-state rule, once for the CLI and the hook.

The rule, the ledger's state winning over the run-state file's: RUNNING resumes (unless a
coordinator is live: then nothing is started); HALTED waits for an explicit resume (``fleetledger
resume`` or the same job command again) and says why; JACKED_OUT (finished) does nothing.
``decide`` is the rule; ``plan_resume`` applies it for ``fleetledger resume`` and ``recover``
(trust check, run lock, run-state file, job), and the agent session hook applies ``decide`` to
the state it reads without writing anything.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from .jobs.base import Job
from .replay import RunView
from .workspace import Workspace

RUNNING = "RUNNING"
HALTED = "HALTED"
JACKED_OUT = "JACKED_OUT"

RESUME = "resume"
"""Continue the run now, without asking anyone."""
WAIT = "wait"
"""HALTED: wait for an explicit resume; tell the user why it stopped."""
NOTHING = "nothing"
"""JACKED_OUT: the run is finished."""
LIVE = "live"
"""A coordinator holds the workspace and runs the run: start nothing."""


@dataclass(frozen=True, kw_only=True)
class Decision:
    """What to do with a run now.

    Attributes:
        action: ``RESUME``, ``WAIT``, ``NOTHING`` or ``LIVE``.
        state: The run's state (RUNNING, HALTED or JACKED_OUT), or None when it was not read
            (``LIVE`` found before the run-state file was settled).
        run_id: The run, or None when it was not read.
        halt: The run's halt record (``reason``, ``reset_at``, ...), or None.
        pid: For ``LIVE``, the pid of the coordinator holding the workspace (``"?"`` when its
            lock file does not say), else None.
        view: The folded run (``plan_resume`` only), or None.
        job: The run's job rebuilt from the ledger (``plan_resume`` only), or None.
        join: The run id to join again (the workspace's coordinator joined the run from
            another host: resuming here means joining it again), or None.
    """

    action: str
    state: str | None = None
    run_id: str | None = None
    halt: dict[str, Any] | None = None
    pid: Any = None
    view: RunView | None = None
    job: Job | None = None
    join: str | None = None


def decide(state: str | None, *, explicit: bool, holder: Callable[[], dict[str, Any] | None]) -> Decision:
    """The three-state rule: what to do with a run in ``state`` now.

    Args:
        state: The run's state, the ledger's (it wins over the run-state file's).
        explicit: The user asked for this run to continue (``fleetledger resume``, the same
            job command again): a HALTED run resumes; otherwise (``recover``, a session
            hook) it waits.
        holder: ``Workspace.lock_holder`` (or a function like it): returns the live
            coordinator's ``{"pid", "session"}``, or None when none holds the workspace. Called
            only when the state alone does not decide (the lock is not probed needlessly).

    Returns:
        ``NOTHING`` for JACKED_OUT; ``WAIT`` for HALTED unless ``explicit``; else ``LIVE`` when
        a coordinator holds the workspace, ``RESUME`` when none does. Only ``action``,
        ``state`` and ``pid`` are set.
    """
    if state == JACKED_OUT:
        return Decision(action=NOTHING, state=state)
    if state == HALTED and not explicit:
        return Decision(action=WAIT, state=state)
    live = holder()
    if live is not None:
        return Decision(action=LIVE, state=state, pid=live.get("pid", "?"))
    return Decision(action=RESUME, state=state)


def plan_resume(workspace: Workspace, *, explicit: bool, warn: Callable[[str], None]) -> Decision:
    """Decides what ``fleetledger resume`` (``explicit``) or ``recover`` does with the workspace's run.

    In order: the workspace is checked (``trust.check_workspace``) before its lock, run-state
    file or ledger is opened; a live coordinator is left alone (``LIVE``, nothing is opened);
    the run-state file is made to agree with the ledger (``coordinator.settle_state_file``);
    the job is rebuilt from the ledger (with this host's checkout when the run was joined from
    another host) and the workspace checked again against the folders it reads (the target the
    ledger names may be the shipper's choice); then ``decide``.

    Args:
        workspace: The workspace.
        explicit: As ``decide``'s.
        warn: Called with a warning to show the user (what was wrong with the run-state file).

    Returns:
        The decision, with ``run_id``, ``halt``, ``view``, ``job`` and ``join`` set unless it is
        ``LIVE``.

    Raises:
        UsageError: the workspace was not made here, or the run's job cannot be rebuilt (not a
            scan; its target is gone).
        RunLockedError: a coordinator took the workspace meanwhile.
        NoRunError: the workspace holds no run.
        LedgerDamagedError: the ledger is damaged, or contradicts the run's signed head.
        StateFileError, OSError: the run-state file cannot be settled (a full disk, say).
    """
    from .coordinator import settle_state_file
    from .jobs.registry import job_from_view, joined_target
    from .trust import check_workspace

    check_workspace(workspace)  # before its lock, state file or ledger is opened
    holder = workspace.lock_holder()
    if holder is not None:
        return Decision(action=LIVE, pid=holder.get("pid", "?"))
    view, note = settle_state_file(workspace)
    if note:
        warn(f"warning: {note}")
    joined = joined_target(view, workspace)  # resuming here means joining again, with this host's checkout
    job = job_from_view(view, workspace, joined)
    # Before trusting what the ledger says: the target it names may be the shipper's choice, so
    # the current folder (a checkout being worked in) counts as scanned too.
    check_workspace(workspace, job)
    decision = decide(view.state, explicit=explicit, holder=lambda: None)  # the lock was free just now
    return replace(decision, run_id=view.run_id, halt=view.halt, view=view, job=job,
                   join=view.run_id if joined else None)

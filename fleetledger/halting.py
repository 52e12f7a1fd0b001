"""``fleetledger halt``: stop the workspace's run and mark it HALTED with a reason.

A live coordinator is asked to stop (the reason in ``<workspace>/halt-request``, then SIGTERM)
and records the halt itself; a run no coordinator holds (it crashed, or was interrupted) is
halted here (``coordinator.halt_idle_run``), under the policy its run would use.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable

from . import errors, fsutil
from .replay import RunView
from .workspace import Workspace

HALT_REQUEST = "halt-request"
"""File in the workspace holding the reason a live coordinator records when it stops."""


def halt_run(workspace: Workspace, reason: str, *, timeout_s: float, policy_path: str | None,
             warn: Callable[[str], None]) -> RunView:
    """Stops the workspace's run and marks it HALTED with ``reason``.

    Args:
        workspace: The workspace.
        reason: The halt reason to record.
        timeout_s: Seconds to wait for a live coordinator to stop.
        policy_path: ``--policy FILE`` whose hash the halt of a run no coordinator holds records
            (None: as ``trust.resolve_policy`` resolves it).
        warn: Called with a warning when the workspace lies in the current folder and was not
            made here (``status.current_run``).

    Returns:
        The run as the ledger holds it afterwards (folded again).

    Raises:
        FleetledgerError: the live coordinator did not stop within ``timeout_s``.
        UsageError: the workspace was not made here, or its policy file is not read.
        NoRunError: the workspace holds no run.
        LedgerDamagedError, LedgerError, PolicyError: as ``status.current_run`` and
            ``trust.resolve_policy``.
        OSError: the halt request cannot be written, or the coordinator cannot be signalled.
    """
    from .coordinator import halt_idle_run, policy_in_force
    from .jobs.registry import job_for_run
    from .status import current_view
    from .trust import resolve_policy

    holder = workspace.lock_holder()
    if holder is not None and holder.get("pid"):
        fd = fsutil.open_nofollow(workspace.root / HALT_REQUEST, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        with os.fdopen(fd, "w", encoding="utf-8") as request:
            request.write(reason)
        os.kill(int(holder["pid"]), signal.SIGTERM)
        deadline = time.monotonic() + timeout_s
        while workspace.lock_holder() is not None:
            if time.monotonic() > deadline:
                raise errors.FleetledgerError(f"the run (pid {holder['pid']}) did not stop within {timeout_s:g} s")
            time.sleep(0.1)
    else:
        crashed = current_view(workspace, warn=warn)
        try:
            job = job_for_run(crashed, workspace)
        except errors.UsageError:
            job = None  # its target is gone: no repository rules to narrow the policy with
        halt_idle_run(workspace, reason, policy=policy_in_force(resolve_policy(workspace, policy_path, job), job))
    return current_view(workspace, warn=warn)

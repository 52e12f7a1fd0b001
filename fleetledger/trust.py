"""The workspace trust check: is this workspace one this user made here, or one a repository shipped?

A repository can ship a ``.run/`` (a forged history, a wider policy, symbolic links), so every
command checks the workspace before it reads anything in it: against the folders the job reads
(the untrusted repository) and the current folder (a checkout being worked in). The rule itself
is ``Workspace.check_made_here``; this module says where it is applied, once for the CLI and the
agent session hook alike; so is the choice of the policy file a run trusts (``resolve_policy``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from . import errors
from .jobs.base import Job
from .workspace import Workspace

if TYPE_CHECKING:
    from .policy import Policy


def check_workspace(workspace: Workspace, job: Job | None = None) -> None:
    """Refuses a workspace that a repository may have shipped, before anything in it is read.

    Args:
        workspace: The workspace about to be used.
        job: The job about to read a repository (its ``read_only_paths`` are the scanned
            folders, where a workspace is refused whatever it holds), or None when no job is
            known yet (only the current folder is checked).

    Raises:
        UsageError: the workspace (or its SQLite ledger) lies in a scanned folder or in the
            current folder and was not made here by this user; the message says how to go on.
    """
    scanned = [Path(p) for p in job.read_only_paths()] if job is not None else []
    workspace.check_made_here(scanned, near=[Path.cwd()])


def workspace_doubt(workspace: Workspace) -> str | None:
    """Says why a workspace in the current folder is not to be trusted, for commands that only
    read it (reports, the session hook) and may go on with a warning.

    Args:
        workspace: The workspace about to be read.

    Returns:
        The reason (the ``UsageError`` message of ``check_workspace``: it was not made here by
        this user, so the repository may have shipped a forged history), or None when it is
        trusted.
    """
    try:
        check_workspace(workspace)
    except errors.UsageError as exc:
        return str(exc)
    return None


def warn_if_not_made_here(workspace: Workspace, warn: Callable[[str], None]) -> None:
    """For a command that only reads the workspace (a report): calls ``warn`` with a warning
    (``"warning: <why>; what follows may be a forged history"``) when ``workspace_doubt``
    finds a reason not to trust it, and returns so that the command goes on."""
    doubt = workspace_doubt(workspace)
    if doubt is not None:
        warn(f"warning: {doubt}; what follows may be a forged history")


def resolve_policy(workspace: Workspace, policy_path: str | None, job: Job | None) -> "Policy":
    """Returns the policy a run of ``job`` in ``workspace`` uses, the workspace checked first.

    First of all, a workspace inside the scanned tree or the current folder that was not made
    here is refused (``check_workspace``), before anything in it is read. Then the policy is
    ``policy_path`` when given, else ``<workspace>/policy.toml`` unless the workspace lies
    inside the scanned tree (``Workspace.config_file`` refuses it), else the safe defaults.

    Args:
        workspace: The run's workspace.
        policy_path: ``--policy FILE``, or None.
        job: The job (its ``read_only_paths`` are the scanned tree), or None for a run whose job
            cannot be rebuilt here (its target is gone, say).

    Returns:
        The policy.

    Raises:
        UsageError: the workspace was not made here (``check_workspace``), or it holds a
            ``policy.toml`` but lies inside the scanned tree.
        PolicyError: the policy file cannot be read or is invalid.
    """
    from .policy import Policy

    check_workspace(workspace, job)
    if policy_path:
        return Policy.load(Path(policy_path))
    scanned = [Path(p) for p in job.read_only_paths()] if job is not None else []
    return Policy.load(workspace.config_file("policy.toml", scanned, instead="--policy FILE"))

"""``fleetledger patch``: the patches a scan's fix sprint proposed (docs/fixes.md).

A thin shell over ``jobs.scan.patch_apply``; ``cli.py`` adds the group with its shared helpers
(the workspace option, output and failure), which this module takes as arguments so that it does
not import the CLI back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from . import errors
from .workspace import Workspace


def patch_group(*, workspace_option: Callable[..., Any], echo: Callable[[str], None],
                fail: Callable[[errors.FleetledgerError], None], warn: Callable[[str], None]) -> click.Group:
    """Returns the ``patch`` command group.

    Args:
        workspace_option: The CLI's ``--workspace``/``--ledger`` decorator.
        echo: Prints a line (made printable).
        fail: Prints a library error and exits with its code.
        warn: Prints a warning.
    """

    @click.group()
    def patch() -> None:
        """Patches the fix sprint proposed for confirmed findings (`scan --fix`, docs/fixes.md)."""

    @patch.command("apply")
    @click.argument("finding")
    @workspace_option
    @click.option("--policy", "policy_path", type=click.Path(dir_okay=False, exists=True), default=None,
                  envvar="FLEETLEDGER_POLICY", show_envvar=True,
                  help="Policy TOML file; its write patterns must allow the file (e.g. \"$TARGET/**\").")
    def patch_apply(finding: str, workspace: str, policy_path: str | None) -> None:
        """Apply the validated patch of FINDING to the scanned tree: an effect that needs your approval
        (`fleetledger approve --effect patch-apply:FINDING`); applying it twice changes nothing."""
        from .jobs.registry import job_for_run
        from .jobs.scan.patch_apply import apply_patch
        from .run.options import wall_clock_ms
        from .status import current_view
        from .trust import resolve_policy

        try:
            ws = Workspace.at(workspace)
            view = current_view(ws, warn=warn)
            policy = resolve_policy(ws, policy_path, job_for_run(view, ws))
            result = apply_patch(ws, finding, policy=policy, clock=wall_clock_ms)
        except errors.FleetledgerError as exc:
            fail(exc)
            return
        if result.get("recorded"):
            echo(f"the patch for {finding} was applied to {result['file']} before (recorded); nothing changed")
        elif result["changed"]:
            echo(f"applied the patch for {finding} to {result['file']} (sha256 {result['before_sha256'][:12]} -> "
                 f"{result['sha256'][:12]})")
        else:
            echo(f"{result['file']} already has the patch for {finding}; nothing changed")

    return patch

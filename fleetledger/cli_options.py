"""The options every run command shares (``scan``, ``resume``, ``recover``) and the workspace
option of every command."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import click

from .workspace import LEDGER_ENV

DEFAULT_WORKSPACE = ".run"
EXIT_NOTHING_TO_SCAN = 4
"""A run finished with nothing to work on (an empty folder, no Python file), unless --allow-empty."""


def _set_ledger(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    """Puts ``--ledger`` where ``Workspace.ledger_url`` reads it, for this command only (workers
    get a clean environment, so a password in the URL never reaches them)."""
    previous = os.environ.get(LEDGER_ENV)
    if not value or value == previous:
        return
    os.environ[LEDGER_ENV] = value

    def restore() -> None:
        if previous is None:
            os.environ.pop(LEDGER_ENV, None)
        else:
            os.environ[LEDGER_ENV] = previous

    ctx.call_on_close(restore)


def workspace_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    fn = click.option("--ledger", envvar=LEDGER_ENV, show_envvar=True, expose_value=False, callback=_set_ledger,
                      help="Ledger URL: postgresql://... for a ledger shared by coordinators on several hosts "
                           "(default: the workspace's SQLite file).")(fn)
    return click.option("--workspace", "-w", default=DEFAULT_WORKSPACE, show_default=True, envvar="FLEETLEDGER_WORKSPACE",
                        show_envvar=True, type=click.Path(file_okay=False),
                        help="The folder fleetledger writes: ledger, run-state file, reports.")(fn)


def run_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    options = [
        click.option("--workers", "-n", default=4, show_default=True, envvar="FLEETLEDGER_WORKERS", show_envvar=True,
                     type=click.IntRange(1, 256), help="Worker processes."),
        click.option("--model-quota", type=click.IntRange(0), default=None, envvar="FLEETLEDGER_MODEL_QUOTA",
                     show_envvar=True, help="Model calls the run may make in total; when spent the run HALTs (exit 75)."),
        click.option("--lease-ttl", type=click.FloatRange(0.1), default=30.0, show_default=True,
                     help="Seconds a task lease lasts without a heartbeat."),
        click.option("--ledger-retry", type=click.FloatRange(0), default=None,
                     help="Seconds a failing ledger read or write (a full disk, a lock, a dropped connection) is "
                          "retried before the run halts (exit 75) [default: 10; 120 for a shared ledger]."),
        click.option("--sandbox", default="bubblewrap", show_default=True, envvar="FLEETLEDGER_SANDBOX", show_envvar=True,
                     type=click.Choice(["bubblewrap", "gvisor", "microvm", "none"]),
                     help="Sandbox for the worker processes that read the repository; none only when asked for."),
        click.option("--policy", "policy_path", type=click.Path(dir_okay=False, exists=True), default=None,
                     envvar="FLEETLEDGER_POLICY", show_envvar=True,
                     help="Policy TOML file (default: <workspace>/policy.toml if present, else safe defaults)."),
        click.option("--progress/--no-progress", default=None, help="Progress bars (default: when stderr is a terminal)."),
        click.option("--allow-empty", is_flag=True, envvar="FLEETLEDGER_ALLOW_EMPTY", show_envvar=True,
                     help=f"Exit 0 when there is nothing to scan (an empty folder, no Python file); "
                          f"without it such a scan says so and exits {EXIT_NOTHING_TO_SCAN}."),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn

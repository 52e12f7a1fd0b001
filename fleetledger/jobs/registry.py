"""The jobs this fleetledger can build: a new one from a command line, or the job of a recorded
run rebuilt from its ledger (``resume``, ``recover``, ``halt``).

Only the scan job can be rebuilt so far; the synthetic job of the tests is started by its own
module and never resumed through here.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING

from .. import errors
from .base import Job

if TYPE_CHECKING:
    from ..replay import RunView
    from .scan.export_options import ExportOptions
    from ..workspace import Workspace


def scan_job(target: Path, workspace: "Workspace", *, model: str = "offline",
             export: "ExportOptions | None" = None, fix: bool = False) -> Job:
    """Builds a new scan of ``target`` (``fleetledger scan``).

    Args:
        target: The folder to scan.
        workspace: The workspace the run writes.
        model: ``PROVIDER:MODEL`` that judges candidates (``offline`` by default).
        export: The export's code-scanning options (``ExportOptions``), or the defaults.
        fix: Propose a patch for each confirmed finding (the ``fix`` sprint).

    Returns:
        The ``ScanJob``; its recorded command is ``scan_command``'s.

    Raises:
        UsageError: ``target`` is not a folder, ``model`` names no known provider, or
            ``target`` is outside the export's repository root.
    """
    from .scan.job import ScanJob

    return ScanJob(target, workspace=workspace.root, argv=scan_command(target, workspace, model, export, fix=fix),
                   model=model, export=export, fix=fix)


def scan_command(target: Path, workspace: "Workspace", model: str, export: "ExportOptions | None" = None, *,
                 fix: bool = False) -> list[str]:
    """Returns the scan's command as recorded in the ledger and the run-state file: absolute
    paths, so that it means the same job from any folder (never a password: ``--ledger`` is
    left out). ``model`` and each export option are named only when not the default."""
    command = ["fleetledger", "scan", str(Path(target).resolve()), "--workspace", str(workspace.root)]
    command += ["--model", model] if model != "offline" else []
    given = export.to_json() if export is not None else {}
    for key, flag in (("repo_root", "--repo-root"), ("category", "--category"), ("baseline", "--baseline")):
        command += [flag, str(given[key])] if key in given else []
    command += ["--honour-nosec"] if given.get("honour_nosec") else []
    command += ["--no-absent-results"] if "absent_results" in given else []
    command += ["--fix"] if fix else []
    return command + (["--only-new"] if given.get("only_new") else [])


def joined_target(view: "RunView", workspace: "Workspace") -> str | None:
    """Returns the checkout this workspace's coordinator used when it joined the run (a shared
    ledger; the run started on another host), or None when it did not join it.

    Args:
        view: The run, folded from the ledger.
        workspace: This host's workspace (its ``member`` names the coordinator sessions).
    """
    joined = [s for s in view.sessions if s.get("kind") == "joined" and s.get("member") == workspace.member]
    return joined[-1].get("target") if joined else None


def job_from_view(view: "RunView", workspace: "Workspace", target: str | None = None) -> Job:
    """Rebuilds the job of a recorded run from what its ledger says (kind, target, command, model).

    Args:
        view: The run, folded from the ledger.
        workspace: The workspace the run writes.
        target: The folder to scan instead of the recorded one (this host's checkout, for a run
            joined from another host), or None.

    Returns:
        The job.

    Raises:
        UsageError: the run is not a scan (no other job can be rebuilt here), or its target is
            no longer a folder.
    """
    from .scan.job import ScanJob

    job = view.job
    if job.get("kind") != "scan":
        raise errors.UsageError(f"run {view.run_id} is a {job.get('kind')!r} job, which this CLI cannot resume")
    from .scan.export_options import ExportOptions, find_repository_root

    export = ExportOptions.from_json(job.get("options", {}).get("export"))
    if target is not None and target != job.get("target") and export.repo_root is not None:
        found = find_repository_root(Path(target))  # this host's checkout: its own repository root
        export = dataclasses.replace(export, repo_root=str(found) if found is not None else None)
    return ScanJob(Path(target or job["target"]), workspace=workspace.root, argv=job.get("argv", []),
                   model=job.get("options", {}).get("model", "offline"), export=export,
                   fix=bool(job.get("options", {}).get("fix", False)))


def job_for_run(view: "RunView", workspace: "Workspace") -> Job:
    """Rebuilds the job of a recorded run as this workspace runs it: with this host's checkout
    when its coordinator joined the run (``joined_target``), else with the recorded target.

    Raises:
        UsageError: as ``job_from_view``.
    """
    return job_from_view(view, workspace, joined_target(view, workspace))

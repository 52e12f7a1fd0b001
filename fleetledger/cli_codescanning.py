"""``fleetledger scan``'s code-scanning options: what makes its SARIF one GitHub keeps (docs/ci.md).

The options change the export only (``jobs.scan.export_options.ExportOptions``), never what the
workers find; ``export_options`` turns them into that object and checks them before any work.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from . import errors

EXIT_NEW_FINDINGS = 5
"""``scan --only-new``: the run finished and a result is new against ``--baseline``. Not 1 (an
error: the scan itself failed) nor 2 (bad input), so CI can tell "the pull request adds a
finding" from "the scan did not work"; every other outcome keeps its own code."""


def code_scanning_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Adds ``scan``'s code-scanning options (docs/ci.md): --repo-root, --category,
    --honour-nosec, --baseline, --only-new, --absent-results/--no-absent-results."""
    options = [
        click.option("--repo-root", type=click.Path(file_okay=False, exists=True), default=None,
                     help="The repository's top folder: SARIF URIs are relative to it (default: found from the "
                          "scanned folder's .git, without running git; else the scanned folder)."),
        click.option("--category", default=None, envvar="FLEETLEDGER_CATEGORY", show_envvar=True,
                     help="SARIF automationDetails.id, GitHub's category (a '/' is added at the end); default: "
                          "fleetledger/<scanned folder relative to the repository root>/."),
        click.option("--honour-nosec", is_flag=True,
                     help="Turn # nosec and # noqa: B... comments on a finding's lines into SARIF suppressions and "
                          "mark those findings suppressed. Off by default: the scan reviews code it does not own, "
                          "and a comment by the code's author is a claim, not a verdict."),
        click.option("--baseline", type=click.Path(dir_okay=False, exists=True), default=None,
                     help="A previous findings.sarif (e.g. the main branch's, from a trusted run): mark each result "
                          "baselineState new, unchanged, updated or absent."),
        click.option("--only-new", is_flag=True,
                     help=f"With --baseline: exit {EXIT_NEW_FINDINGS} when a finding is new against it (and only then)."),
        click.option("--absent-results/--no-absent-results", default=True, show_default=True,
                     help="With --baseline: include the baseline's results that are gone (baselineState absent). "
                          "GitHub turns every uploaded result into an alert: use --no-absent-results for upload."),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


def export_options(workspace: Path, target: Path, repo_root: str | None, category: str | None, honour_nosec: bool,
                    baseline: str | None, only_new: bool, absent_results: bool) -> Any:
    """Builds the scan's ``ExportOptions``; checks the baseline now (a bad one is exit 2 before any work).

    Raises:
        UsageError: --only-new or --no-absent-results without --baseline, a baseline that is not
            SARIF or is a file the scan's export replaces (the workspace's findings.sarif: the
            comparison would be with the scan's own output), a --repo-root that does not hold the
            target, a bad --category.
    """
    from .jobs.scan.baseline import load
    from .jobs.scan.export_options import ExportOptions, resolve_repo_root

    if baseline is None and (only_new or not absent_results):
        raise errors.UsageError("--only-new and --no-absent-results compare with a baseline: give --baseline "
                                "PATH.sarif (e.g. the main branch's findings.sarif)")
    if baseline is not None:
        baseline = str(Path(baseline).resolve())
        if Path(baseline) == Path(workspace).resolve() / "findings.sarif":
            raise errors.UsageError(f"--baseline {baseline} is the file this scan writes its own SARIF to: "
                                    "copy it out first (e.g. cp .fleetledger/findings.sarif main.sarif)")
        load(baseline)
    return ExportOptions(repo_root=resolve_repo_root(target, repo_root), category=category, honour_nosec=honour_nosec,
                         baseline=baseline, absent_results=absent_results, only_new=only_new)

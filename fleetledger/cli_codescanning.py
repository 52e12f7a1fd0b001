"""``fleetledger scan``'s code-scanning options: what makes its SARIF one GitHub keeps (docs/ci.md).

The options change the export only (``jobs.scan.export_options.ExportOptions``), never what the
workers find; ``export_options`` turns them into that object and checks them before any work.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from . import errors, fsutil

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
        click.option("--baseline", metavar="SARIF|REF", default=None,
                     help="A previous findings.sarif (e.g. the main branch's, from a trusted run), or a git ref whose "
                          "tree is scanned first (kept in the workspace for later runs): mark each result "
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

    Returns:
        ``(options, ref)``: ``ref`` is the ``--baseline`` value when it names no file (a git ref
        for ``baseline_from_ref``; ``options.baseline`` is then None until it is scanned), else
        None.

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
    if baseline is not None and is_ref(baseline):
        baseline_ref = baseline  # scanned by ``baseline_from_ref`` once the workspace is made
        baseline = None
    else:
        baseline_ref = None
    if baseline is not None:
        baseline = str(Path(baseline).resolve())
        if Path(baseline) == Path(workspace).resolve() / "findings.sarif":
            raise errors.UsageError(f"--baseline {baseline} is the file this scan writes its own SARIF to: "
                                    "copy it out first (e.g. cp .fleetledger/findings.sarif main.sarif)")
        load(baseline)
    options = ExportOptions(repo_root=resolve_repo_root(target, repo_root), category=category, honour_nosec=honour_nosec,
                            baseline=baseline, absent_results=absent_results, only_new=only_new)
    if baseline_ref is not None:  # a ref that names no commit is bad input too: say so before any work
        from .jobs.scan.git_tree import commit_of

        if options.repo_root is None:
            raise errors.UsageError(f"--baseline {baseline_ref}: no such file, and {target} is in no git repository "
                                    "to read it as a ref from: give a SARIF file")
        commit_of(Path(options.repo_root), baseline_ref)
    return options, baseline_ref


def is_ref(baseline: str | None) -> bool:
    """True when ``--baseline`` names no file: it is then taken for a git ref."""
    return baseline is not None and not Path(baseline).is_file()


def baseline_from_ref(ws: Any, target: Path, ref: str, export: Any, *, model: str,
                      run: Callable[[Any, Any], Any], say: Callable[[str], None]) -> str:
    """Scans the tree of git ref ``ref`` (``--baseline REF``) and returns its SARIF's path.

    The commit's tree is written under ``<workspace>/baselines/<commit>/tree`` (``git_tree``:
    plumbing only, nothing of the repository run) and the same folder of it is scanned in its
    own workspace beside it (``baselines/<commit>/<key>/ws``, the key a hash of the folder and
    the model), with the same model and export options, so its fingerprints compare with this
    scan's; its SARIF is kept as ``baselines/<commit>/<key>/baseline.sarif``, and a later run
    (the next push to the same pull request) finds it and scans nothing. An interrupted baseline scan is resumed
    by the next run, as any scan.

    Args:
        ws: This scan's ``Workspace`` (made and checked already).
        target: The scanned folder.
        ref: The git ref (``origin/main``, a commit id...).
        export: This scan's ``ExportOptions`` (its repository root, category, nosec).
        model: This scan's model.
        run: Runs a job in a workspace and returns its ``RunResult`` (the CLI's own runner).
        say: Prints a line for the person.

    Raises:
        UsageError: the scanned folder is in no git repository, the ref names no commit, git
            failed, or the baseline scan did not finish (the message says how to go on).
    """
    from .jobs.registry import scan_job
    from .jobs.scan.codescanning import json_bytes
    from .jobs.scan.export_options import ExportOptions
    from .jobs.scan.git_tree import commit_of, materialise
    from .workspace import Workspace

    if export.repo_root is None:
        raise errors.UsageError(f"--baseline {ref}: no file of that name, and {target} is in no git repository "
                                "(give a SARIF file, or --repo-root)")
    root, target = Path(export.repo_root), Path(target).resolve()
    commit = commit_of(root, ref)
    prefix = export.prefix(str(target))
    # One scan per commit, scanned folder and model: another folder or model is another baseline.
    key = hashlib.sha256(f"{prefix}\0{model}".encode("utf-8", "surrogateescape")).hexdigest()[:12]
    home = ws.root / "baselines" / commit / key
    sarif = home / "baseline.sarif"
    if sarif.is_file():
        say(f"baseline: {ref} ({commit[:12]}) was scanned before; using {sarif}")
        return str(sarif)
    tree = home.parent / "tree"
    home.mkdir(parents=True, exist_ok=True)
    if not tree.is_dir():
        written, left_out = materialise(root, commit, tree)
        say(f"baseline: wrote {written} file(s) of {ref} ({commit[:12]}) to {tree} ({left_out} link(s), submodule(s) "
            "or oversized file(s) left out)")
    scanned = tree / prefix if prefix else tree
    if not scanned.is_dir():  # the folder is new in this change: everything in it is new
        say(f"baseline: {prefix} does not exist at {ref}; every finding is new")
        fsutil.atomic_write(sarif, json_bytes({"version": "2.1.0", "runs": []}))
        return str(sarif)
    options = ExportOptions(repo_root=str(tree), category=export.automation_id(str(target)),
                            honour_nosec=export.honour_nosec)
    nested = Workspace.at(home / "ws")
    result = run(scan_job(scanned, nested, model=model, export=options), nested)
    if result.exit_code != 0 or result.state != "JACKED_OUT":
        raise errors.UsageError(f"--baseline {ref}: the scan of {commit[:12]} did not finish ({result.message}); "
                                f"its workspace is {nested.root}: run the same command again to continue it")
    fsutil.atomic_write(sarif, (nested.root / "findings.sarif").read_bytes())
    say(f"baseline: scanned {ref} ({commit[:12]}); kept {sarif} for later runs")
    return str(sarif)


"""The ``fleetledger`` command: a thin shell over the library.

Each command builds the objects a Python user would (``Workspace``, ``ScanJob``,
``Coordinator``) and calls one method; library errors become CLI errors only here, with their
exit codes: 0 done, 1 error, 2 bad input, 3 the workspace is in use, 4 nothing to scan, 5 a finding
new against the baseline (``scan --only-new``), 75 HALTED.
"""

from __future__ import annotations

import errno
import json
import sys
from pathlib import Path
from typing import Any

import click

from . import errors
from .cli_codescanning import EXIT_NEW_FINDINGS, baseline_from_ref, code_scanning_options, export_options
from .cli_options import EXIT_NOTHING_TO_SCAN, run_options as _run_options, workspace_option as _workspace_option
from .cli_patch import patch_group
from .coordinator import EXIT_HALTED, Coordinator, RunOptions, wall_clock_ms
from .display import json_text, printable
from .ledger import open_storage
from .ledger.records import iso_utc
from .status import current_view
from .workspace import Workspace


def _echo(text: str, *, err: bool = False) -> None:
    """Prints a line for a person: every message may carry text from the scanned repository
    (a file name, a halt reason, a refused rule), so its control, bidi and other format
    characters are shown as escapes, never sent to the terminal (``display.printable``)."""
    click.echo(printable(text), err=err)


def _echo_json(data: Any, *, indent: int | None = None) -> None:
    """Prints JSON for a program: the exact data (non-ASCII text as it is), with the characters
    ``_echo`` escapes written as JSON escapes (``display.json_text``)."""
    click.echo(json_text(json.dumps(data, ensure_ascii=False, indent=indent)))


def _fail(exc: errors.FleetledgerError) -> None:
    _echo(f"fleetledger: {exc}", err=True)
    sys.exit(exc.exit_code)


def _fail_for_space(exc: OSError) -> None:
    """Exits 75 with a message when ``exc`` is a full disk (a workspace file could not be
    written outside a run: the run-state file while it is settled, say); re-raises it otherwise."""
    if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
        raise exc
    _fail(errors.OutOfSpaceError(f"the disk is full ({exc}); nothing was changed that the ledger does not hold: "
                                 "free some space and run the command again"))


def _run(ws: Workspace, job: Any, options: RunOptions, policy_path: str | None, progress: bool | None,
         allow_empty: bool) -> None:
    """Runs ``job`` under the policy ``trust.resolve_policy`` resolves (the workspace checked first); prints
    how the session ended, then, last, what it resumed, reused, redid and skipped (``RunResult.account``),
    and exits with the session's code (or ``EXIT_NOTHING_TO_SCAN``: nothing to work on, not allowed)."""
    from .model_broker import describe_spend

    coordinator, result = _session(ws, job, options, policy_path, progress)
    for line in [result.message, f"model spend: {describe_spend(coordinator.view.model)}",
                 *(result.account.lines() if result.account is not None else ())]:
        _echo(line)
    nothing = result.outcome.nothing_to_do if result.outcome is not None else None
    for warning in result.outcome.warnings if result.outcome is not None else ():
        _echo(f"warning: {warning}", err=True)
    if nothing and not allow_empty:
        _echo(f"fleetledger: {nothing}; pass --allow-empty to accept a scan with nothing to scan", err=True)
        sys.exit(EXIT_NOTHING_TO_SCAN)
    new = result.outcome.new_findings if result.outcome is not None else None
    if result.exit_code == 0 and new:
        _echo(f"fleetledger: {new} finding(s) new against the baseline (--only-new)", err=True)
        sys.exit(EXIT_NEW_FINDINGS)
    sys.exit(result.exit_code)


def _session(ws: Workspace, job: Any, options: RunOptions, policy_path: str | None, progress: bool | None) -> Any:
    """One coordinator session of ``job`` under the policy ``trust.resolve_policy`` resolves;
    returns ``(coordinator, RunResult)``."""
    from .progress import ProgressBars
    from .trust import resolve_policy

    policy = resolve_policy(ws, policy_path, job)
    with ProgressBars(sys.stderr.isatty() if progress is None else progress) as bars:
        coordinator = Coordinator(job, ws, options, policy=policy, on_progress=bars.update)
        for warning in coordinator.warnings:
            _echo(f"warning: {warning}", err=True)
        result = coordinator.run()
        bars.update(coordinator.view)
    return coordinator, result


def _warn(text: str) -> None:
    _echo(text, err=True)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="fleetledger")
def main() -> None:
    """fleetledger: a crash-only runtime for fleets of agent workers, and a multi-worker scan."""


@main.command()
@click.argument("path", default=".", type=click.Path(exists=True, file_okay=False))
@_workspace_option
@_run_options
@click.option("--new", "new_run", is_flag=True, help="Start a new run even if this job already has one.")
@click.option("--cache", "cache", type=click.Path(file_okay=False), default=None, envvar="FLEETLEDGER_CACHE",
              show_envvar=True, help="A result cache folder shared by runs (several hosts may share it): unchanged "
                                     "files' results are taken from it, and a finished run adds its own.")
@click.option("--reuse/--no-reuse", default=True, show_default=True,
              help="Take the results earlier runs recorded for unchanged inputs (same file contents, code and "
                   "policy) instead of computing them again.")
@click.option("--demo", is_flag=True, help="Scan the small vulnerable web shop embedded in fleetledger instead of PATH.")
@click.option("--join", "join", metavar="RUN_ID", default=None,
              help="Join the live run RUN_ID of the --ledger postgresql://... ledger as one more host: this "
                   "host's workers take its tasks; PATH must hold the same content as on the run's first host.")
@click.option("--model", default="offline", show_default=True, envvar="FLEETLEDGER_MODEL", show_envvar=True,
              help="PROVIDER:MODEL that judges candidates: offline, openai:MODEL (any OpenAI-compatible endpoint) "
                   "or anthropic:MODEL; the policy's models must allow it (see docs/models.md).")
@click.option("--fix", "fix", is_flag=True, help="Propose a validated patch per confirmed finding, exported to "
              "patches/ (docs/fixes.md); `fleetledger patch apply` applies one with your approval.")
@code_scanning_options
def scan(path: str, workspace: str, workers: int, model_quota: int | None, lease_ttl: float,
         ledger_retry: float | None, sandbox: str, policy_path: str | None, progress: bool | None, allow_empty: bool, new_run: bool, cache: str | None,
         reuse: bool, demo: bool, join: str | None, model: str, fix: bool, repo_root: str | None,
         category: str | None, honour_nosec: bool, baseline: str | None, only_new: bool,
         absent_results: bool) -> None:
    """Scan the source repository at PATH (default: the current folder).

    Running the same command again resumes the same run and pays only for missing work. After
    the run finished, it says so when the tree is unchanged; when files were added, changed or
    deleted (source files, and the templates the analysis reads), or the code or the policy
    changed (the repository's .fleetledger.toml included), it says which and starts a new run
    that takes the results of unchanged files from the earlier runs (and from --cache), so it
    pays only for what changed. See docs/ci.md for CI and code scanning.
    """
    from .jobs.registry import scan_job
    from .trust import resolve_policy

    try:
        ws = Workspace.at(workspace)
        target = Path(__file__).resolve().parent / "demo_repo" if demo else Path(path)
        export, ref = export_options(ws.root, target, repo_root, category, honour_nosec, baseline, only_new,
                                     absent_results)
        job = scan_job(target, ws, model=model, export=export, fix=fix)
        if not fix and resolve_policy(ws, policy_path, job).fix:  # the user's policy asks for the fix sprint
            job = scan_job(target, ws, model=model, export=export, fix=(fix := True))
        options = RunOptions(workers=workers, model_quota=model_quota, lease_ttl_s=lease_ttl, sandbox=sandbox,
                             ledger_retry_s=ledger_retry, new_run=new_run, explicit_resume=join is None, join=join, reuse=reuse, cache=cache)
        if ref is not None:  # scan the ref's tree first, in its own workspace inside this one
            from dataclasses import replace

            from .trust import check_workspace

            check_workspace(ws, job)
            ws.ensure()
            path = baseline_from_ref(ws, target, ref, export, model=model, say=_echo, run=lambda nested_job, nested:
                                     _session(nested, nested_job, replace(options, new_run=False, join=None,
                                                                          explicit_resume=True), policy_path, progress)[1])
            job = scan_job(target, ws, model=model, export=replace(export, baseline=path), fix=fix)
        _run(ws, job, options, policy_path, progress, allow_empty)
    except errors.FleetledgerError as exc:
        _fail(exc)
    except OSError as exc:
        _fail_for_space(exc)


def _resume(workspace: str, workers: int, model_quota: int | None, lease_ttl: float, ledger_retry: float | None,
            sandbox: str, policy_path: str | None, progress: bool | None, allow_empty: bool, *, explicit: bool,
            upgrade: bool = False) -> None:
    """``resume`` (``explicit``) and ``recover``: the three-state rule (``resumption.plan_resume``), then the run."""
    from .resumption import LIVE, NOTHING, WAIT, plan_resume

    try:
        ws = Workspace.at(workspace)
        decision = plan_resume(ws, explicit=explicit, warn=_warn)
        if decision.action == LIVE:
            _echo(f"run is live in fleetledger pid {decision.pid}; nothing to do (see `fleetledger status`)")
        elif decision.action == NOTHING:
            _echo(f"run {decision.run_id} is JACKED_OUT (finished); nothing to do")
        elif decision.action == WAIT:
            _echo(f"run {decision.run_id} is HALTED: {decision.halt.get('reason') if decision.halt else '?'}\n"
                  "it waits for an explicit `fleetledger resume` (or the same job command again)")
            sys.exit(EXIT_HALTED)
        else:
            _run(ws, decision.job, RunOptions(workers=workers, model_quota=model_quota, lease_ttl_s=lease_ttl,
                                              ledger_retry_s=ledger_retry, sandbox=sandbox,
                                              explicit_resume=explicit, join=decision.join,
                                              upgrade=upgrade), policy_path, progress, allow_empty)
    except errors.FleetledgerError as exc:
        _fail(exc)
    except OSError as exc:
        _fail_for_space(exc)


@main.command()
@_workspace_option
@_run_options
@click.option("--upgrade", is_flag=True,
              help="Continue a run recorded under other code: keep the results of the sprints whose code did not "
                   "change, plan the others again under this code, and record the decision.")
def resume(**kwargs: Any) -> None:
    """Continue the workspace's run: RUNNING or HALTED (an explicit resume); a finished run is left alone."""
    _resume(**kwargs, explicit=True)


@main.command()
@_workspace_option
@_run_options
def recover(**kwargs: Any) -> None:
    """Apply the three-state rule: RUNNING resumes now, HALTED prints why and waits, JACKED_OUT does nothing."""
    _resume(**kwargs, explicit=False)


@main.command()
@_workspace_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--watch", is_flag=True, help="Keep refreshing from the ledger until Ctrl-C (works while the run is alive and after it died).")
@click.option("--interval", "interval_s", type=click.FloatRange(min=0.05), default=1.0, show_default=True,
              help="With --watch: seconds between refreshes.")
@click.option("--until-stopped", is_flag=True, help="With --watch: end by itself once the run is HALTED or JACKED_OUT.")
def status(workspace: str, as_json: bool, watch: bool, interval_s: float, until_stopped: bool) -> None:
    """Show the run: state, sprints, who holds which task, heartbeat ages (read-only)."""
    if watch:
        from .watch import watch as watch_run

        try:
            if as_json:
                raise errors.UsageError("--json and --watch do not combine; poll `fleetledger status --json` instead")
            watch_run(Workspace.at(workspace), interval_s=interval_s, until_stopped=until_stopped)
        except errors.FleetledgerError as exc:
            _fail(exc)
        return
    from .status import status_data, status_lines

    try:
        ws = Workspace.at(workspace)
        data = status_data(current_view(ws, warn=_warn), ws, wall_clock_ms())
    except errors.FleetledgerError as exc:
        _fail(exc)
    if as_json:
        _echo_json(data, indent=2)
        return
    for line in status_lines(data):
        _echo(line)


@main.command()
@_workspace_option
@click.option("--reason", default="halted by `fleetledger halt`", show_default=True, help="Recorded halt reason.")
@click.option("--timeout", "timeout_s", default=60.0, show_default=True, help="Seconds to wait for a live run to stop.")
@click.option("--policy", "policy_path", type=click.Path(dir_okay=False, exists=True), default=None,
              envvar="FLEETLEDGER_POLICY", show_envvar=True,
              help="Policy TOML file whose hash the halt of a crashed run records (default: as `scan` resolves it).")
def halt(workspace: str, reason: str, timeout_s: float, policy_path: str | None) -> None:
    """Stop the run and mark it HALTED with a reason (a live coordinator is asked to stop)."""
    from .halting import halt_run

    try:
        view = halt_run(Workspace.at(workspace), reason, timeout_s=timeout_s, policy_path=policy_path, warn=_warn)
    except errors.FleetledgerError as exc:
        _fail(exc)
    _echo(f"run {view.run_id}: {view.state}" + (f" ({view.halt.get('reason')})" if view.halt else ""))


def _duration_ms(text: str) -> int:
    """Parses ``90s``, ``30m``, ``2h`` or ``1d`` into milliseconds."""
    units = {"s": 1_000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
    if len(text) < 2 or text[-1] not in units or not text[:-1].isdigit():
        raise errors.UsageError(f"--expires {text!r}: use a number and a unit, e.g. 90s, 30m, 2h, 1d")
    return int(text[:-1]) * units[text[-1]]


@main.command()
@_workspace_option
@click.option("--effect", "target", required=True, help="Effect kind (e.g. export) or idempotency key to approve.")
@click.option("--expires", default=None, help="Lapse after this long (90s, 30m, 2h, 1d); default: the rest of the run.")
@click.option("--reason", required=True, help="Why you approve it (recorded in the ledger).")
def approve(workspace: str, target: str, expires: str | None, reason: str) -> None:
    """Approve an effect the policy holds for approval; only this command approves anything."""
    from .coordinator import grant_approval

    try:
        expires_ms = wall_clock_ms() + _duration_ms(expires) if expires else None
        grant_approval(Workspace.at(workspace), action="effect", target=target, expires_ms=expires_ms, reason=reason)
    except errors.FleetledgerError as exc:
        _fail(exc)
    until = f" until {iso_utc(expires_ms)}" if expires_ms else " for the rest of the run"
    _echo(f"approved effect {target!r}{until}; run `fleetledger resume` to continue")


main.add_command(patch_group(workspace_option=_workspace_option, echo=_echo, fail=_fail, warn=_warn))


@main.command()
@click.argument("path")
@_workspace_option
@click.option("--worker", default=None, help="Only actions by this worker (e.g. w03).")
@click.option("--task", default=None, help="Only actions in this task.")
@click.option("--since", default=None, help="Only actions at or after this UTC time (ISO-8601).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON lines.")
def audit(path: str, workspace: str, worker: str | None, task: str | None, since: str | None, as_json: bool) -> None:
    """Every recorded action that touched PATH (relative to the scanned root): by whom, when, and why;
    then the account of each patch proposed for it (`scan --fix`)."""
    from .audit import audit_line, audit_workspace, patches_workspace
    from .jobs.scan.patch_account import account_lines

    try:
        rows = audit_workspace(Workspace.at(workspace), path, worker=worker, task=task, since=since, warn=_warn)
        patches = patches_workspace(Workspace.at(workspace), path, warn=_warn)
    except errors.FleetledgerError as exc:
        _fail(exc)
    if as_json:
        for item in [*rows, *({"patch": entry} for entry in patches)]:
            _echo_json(item)
    elif not rows:
        _echo(f"no recorded action touched {path}")
    else:
        for line in [*map(audit_line, rows), *(line for entry in patches for line in ("", *account_lines(entry)))]:
            _echo(line)


@main.command()
@_workspace_option
@click.option("--all-runs", is_flag=True, help="Every run in the ledger, not only the current one.")
@click.option("--kind", default=None, help="Only records of this kind.")
def log(workspace: str, all_runs: bool, kind: str | None) -> None:
    """Print the ledger's records as JSON lines."""
    try:
        ws = Workspace.at(workspace)
        run_id = None if all_runs else current_view(ws, warn=_warn).run_id
        with open_storage(ws.ledger_url) as storage:
            for record in storage.read(run_id):
                if kind is None or record.kind == kind:
                    _echo_json(record.to_json())
    except errors.FleetledgerError as exc:
        _fail(exc)


@main.command()
@_workspace_option
def verify(workspace: str) -> None:
    """Check the hash chains and invariants: every result has an intent, no key completed twice, no stale epoch;
    and each run against the head this user signed last (an edited record, a rewritten chain, a cut tail)."""
    from .verify import verify_workspace

    try:
        report = verify_workspace(Workspace.at(workspace), warn=_warn)
    except errors.FleetledgerError as exc:
        _fail(exc)
    for note in report.notes:
        _echo(f"note: {note}")
    for problem in report.problems:
        _echo(f"problem: {problem}")
    _echo(f"{report.records} records in {report.runs} run(s): {'OK' if report.ok else f'{len(report.problems)} problem(s)'}")
    sys.exit(0 if report.ok else 1)


@main.command()
@_workspace_option
def salvage(workspace: str) -> None:
    """Replace a damaged SQLite ledger with one holding every record that can be kept; say exactly what was lost.

    The damaged ledger, its run-state file and heads move to <workspace>/ledger.sqlite3.damaged-<ms>/ (never deleted),
    with every readable record after the loss in after-loss.jsonl; the report is <workspace>/salvage.json. Then
    `fleetledger resume` (or the same job command) continues the run from what is left and redoes what was lost."""
    from .salvage import salvage as run_salvage
    from .trust import check_workspace
    from .workspace import owner_key

    try:
        ws = Workspace.at(workspace)
        check_workspace(ws)
        found = run_salvage(ws, now_ms=wall_clock_ms(), key=owner_key())
    except errors.FleetledgerError as exc:
        _fail(exc)
    except OSError as exc:
        _fail(errors.OutOfSpaceError(f"salvage could not write ({exc}); the damaged ledger was left in place, "
                                     "untouched: free some space and run it again") if exc.errno == errno.ENOSPC
              else errors.FleetledgerError(f"salvage failed ({exc}); the damaged ledger was left in place"))
    for line in found.lines():
        _echo(line)
    sys.exit(0 if not found.problems else 1)


@main.command()
@_workspace_option
def upgrade(workspace: str) -> None:
    """Migrate the ledger to this fleetledger's schema version, in one transaction (a failure changes nothing)."""
    from .ledger.backends import upgrade as upgrade_ledger

    try:
        ws = Workspace.at(workspace)
        if not ws.exists():
            raise errors.NoRunError(f"no ledger in {ws.root}")
        before, after = upgrade_ledger(ws.ledger_url)
    except errors.FleetledgerError as exc:
        _fail(exc)
    _echo(f"ledger schema {after}: already current" if before == after else f"ledger schema {before} -> {after}")


@main.command()
@_workspace_option
@click.option("--html", "as_html", is_flag=True, help="Write one self-contained HTML page (works offline).")
@click.option("--out", type=click.Path(dir_okay=False), default=None, help="Where to write it (default: <workspace>/report.html).")
def report(workspace: str, as_html: bool, out: str | None) -> None:
    """Write a report a person reads: timeline of the workers, sprint progress, findings, skipped files."""
    from .report_html import write_report

    try:
        if not as_html:
            raise errors.UsageError("say which report: --html (SARIF, Markdown and JSON are written by the run's export)")
        path = write_report(Workspace.at(workspace), Path(out) if out else None)
    except errors.FleetledgerError as exc:
        _fail(exc)
    _echo(f"wrote {path}")


@main.group()
def hook() -> None:
    """Hooks for coding-agent CLIs (see docs/agent-sessions.md)."""


@hook.command("session-start")
@_workspace_option
@click.option("--stale-after", "stale_after_s", type=click.FloatRange(min=0), default=600.0, show_default=True,
              help="Seconds of silence after which a RUNNING run with no coordinator is reported as interrupted.")
def session_start(workspace: str, stale_after_s: float) -> None:
    """Print, as SessionStart hook JSON, what a new or compacted agent session does with the run."""
    from .hook import hook_output, session_start as advise

    try:
        advice = advise(Workspace.at(workspace), now_ms=wall_clock_ms(), stale_after_s=stale_after_s)
    except errors.FleetledgerError as exc:
        _fail(exc)
    _echo_json(hook_output(advice))


if __name__ == "__main__":
    main()

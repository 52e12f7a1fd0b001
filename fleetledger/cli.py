"""The ``fleetledger`` command: a thin shell over the library.

Each command builds the objects a Python user would (``Workspace``, ``ScanJob``,
``Coordinator``) and calls one method; library errors become CLI errors only here, with their
exit codes: 0 done, 1 error, 2 bad input, 3 the workspace is in use, 75 HALTED.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from . import errors, fsutil, runstate
from .coordinator import EXIT_HALTED, Coordinator, RunOptions, RunResult, wall_clock_ms
from .display import json_text, printable
from .jobs.base import Job
from .policy import Policy
from .ledger import open_storage
from .ledger.records import iso_utc
from .reader import RunReader, load_view
from .replay import RunView
from .workspace import LEDGER_ENV, Workspace

DEFAULT_WORKSPACE = ".run"
EXIT_NOTHING_TO_SCAN = 4
"""A run finished with nothing to work on (an empty folder, no Python file), unless --allow-empty."""


def _echo(text: str, *, err: bool = False) -> None:
    """Prints a line for a person: every message may carry text from the scanned repository
    (a file name, a halt reason, a refused rule), so its control, bidi and other format
    characters are shown as escapes, never sent to the terminal (``display.printable``)."""
    click.echo(printable(text), err=err)


def _echo_json(data: Any, *, indent: int | None = None) -> None:
    """Prints JSON for a program: the exact data (non-ASCII text as it is), with the characters
    ``_echo`` escapes written as JSON escapes (``display.json_text``)."""
    click.echo(json_text(json.dumps(data, ensure_ascii=False, indent=indent)))


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


def _workspace_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    fn = click.option("--ledger", envvar=LEDGER_ENV, show_envvar=True, expose_value=False, callback=_set_ledger,
                      help="Ledger URL: postgresql://... for a ledger shared by coordinators on several hosts "
                           "(default: the workspace's SQLite file).")(fn)
    return click.option("--workspace", "-w", default=DEFAULT_WORKSPACE, show_default=True, envvar="FLEETLEDGER_WORKSPACE",
                        show_envvar=True, type=click.Path(file_okay=False),
                        help="The folder fleetledger writes: ledger, run-state file, reports.")(fn)


def _run_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    options = [
        click.option("--workers", "-n", default=4, show_default=True, envvar="FLEETLEDGER_WORKERS", show_envvar=True,
                     type=click.IntRange(1, 256), help="Worker processes."),
        click.option("--model-quota", type=click.IntRange(0), default=None, envvar="FLEETLEDGER_MODEL_QUOTA",
                     show_envvar=True, help="Model calls the run may make in total; when spent the run HALTs (exit 75)."),
        click.option("--lease-ttl", type=click.FloatRange(0.1), default=30.0, show_default=True,
                     help="Seconds a task lease lasts without a heartbeat."),
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


def _policy(workspace: Workspace, policy_path: str | None, job: Job | None) -> Policy:
    """``--policy FILE``, else ``<workspace>/policy.toml`` unless the workspace lies inside the
    scanned tree (``Workspace.config_file`` refuses it), else the safe defaults (``job`` None:
    a run whose job cannot be rebuilt here, e.g. its target is gone).

    First of all, a workspace inside the scanned tree or the current folder that was not made
    here is refused (``Workspace.check_made_here``), before anything in it is read."""
    scanned = [Path(p) for p in job.read_only_paths()] if job is not None else []
    workspace.check_made_here(scanned, near=[Path.cwd()])
    if policy_path:
        return Policy.load(Path(policy_path))
    return Policy.load(workspace.config_file("policy.toml", scanned, instead="--policy FILE"))


class _Progress:
    """Rich progress bars, one per sprint, fed from the run view."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self._bars: dict[str, Any] = {}
        self._progress = None
        if enabled:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._progress = Progress(TextColumn("{task.description:<12}"), BarColumn(), MofNCompleteColumn(),
                                      TextColumn("tasks"), TimeElapsedColumn(), console=Console(stderr=True))

    def __enter__(self) -> "_Progress":
        if self._progress is not None:
            self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()

    def update(self, view: RunView) -> None:
        if self._progress is None:
            return
        for sprint in view.sprints.values():
            if sprint.status == "pending":
                continue
            done, total = view.sprint_progress(sprint.id)
            if sprint.id not in self._bars:
                self._bars[sprint.id] = self._progress.add_task(sprint.id, total=max(total, 1))
            self._progress.update(self._bars[sprint.id], total=max(total, 1),
                                  completed=done if total else (1 if sprint.status == "completed" else 0))


def _execute(coordinator_factory: Callable[[Callable[[RunView], None]], Coordinator], progress: bool | None,
             allow_empty: bool = False) -> None:
    enabled = sys.stderr.isatty() if progress is None else progress
    with _Progress(enabled) as bars:
        coordinator = coordinator_factory(bars.update)
        for warning in coordinator.warnings:
            _echo(f"warning: {warning}", err=True)
        result = coordinator.run()
        bars.update(coordinator.view)
    _report(result, coordinator.view, allow_empty)


def _report(result: RunResult, view: RunView, allow_empty: bool = False) -> None:
    """Prints how the session ended, then, last, what it resumed, reused, redid and skipped
    (``RunResult.account``, counted from the ledger), and exits with the session's code (or
    ``EXIT_NOTHING_TO_SCAN`` when the run had nothing to work on and that was not allowed)."""
    from .model_broker import describe_spend

    _echo(result.message)
    _echo(f"model spend: {describe_spend(view.model)}")
    for line in result.account.lines() if result.account is not None else ():
        _echo(line)
    nothing = result.outcome.nothing_to_do if result.outcome is not None else None
    if nothing and not allow_empty:
        _echo(f"fleetledger: {nothing}; pass --allow-empty to accept a scan with nothing to scan", err=True)
        sys.exit(EXIT_NOTHING_TO_SCAN)
    sys.exit(result.exit_code)


def _job_from_view(view: RunView, workspace: Workspace, target: str | None = None):  # type: ignore[no-untyped-def]
    from .jobs.scan.job import ScanJob

    job = view.job
    if job.get("kind") != "scan":
        raise errors.UsageError(f"run {view.run_id} is a {job.get('kind')!r} job, which this CLI cannot resume")
    return ScanJob(Path(target or job["target"]), workspace=workspace.root, argv=job.get("argv", []),
                   model=job.get("options", {}).get("model", "offline"))


def _joined_target(view: RunView, workspace: Workspace) -> str | None:
    """The checkout this workspace's coordinator used when it joined the run (a shared
    ledger; the run started on another host), or None when it did not join it."""
    joined = [s for s in view.sessions if s.get("kind") == "joined" and s.get("member") == workspace.member]
    return joined[-1].get("target") if joined else None


def _warn_if_not_made_here(workspace: Workspace) -> None:
    """Warns (on stderr) when a report command reads a workspace inside the current folder
    whose ledger was not made here: the repository may have shipped a forged history."""
    try:
        workspace.check_made_here([], near=[Path.cwd()])
    except errors.UsageError as exc:
        _echo(f"warning: {exc}; what follows may be a forged history", err=True)


def _current_view(workspace: Workspace) -> RunView:
    """Folds the workspace's current run from its latest checkpoint (read-only; the run-state
    file is not touched)."""
    from .coordinator import current_run_id
    from .heads import refuse_if_contradicted

    if not workspace.exists():
        raise errors.NoRunError(f"no ledger in {workspace.root}; start a run with `fleetledger scan PATH`")
    _warn_if_not_made_here(workspace)
    with open_storage(workspace.ledger_url) as storage:
        view = load_view(storage, current_run_id(workspace, storage))
        refuse_if_contradicted(storage, view.run_id, view.last_seq, workspace.state_path)
        return view


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="fleetledger")
def main() -> None:
    """fleetledger: a crash-only runtime for fleets of agent workers, and a multi-worker scan."""


@main.command()
@click.argument("path", default=".", type=click.Path(exists=True, file_okay=False))
@_workspace_option
@_run_options
@click.option("--new", "new_run", is_flag=True, help="Start a new run even if this job already has one.")
@click.option("--demo", is_flag=True, help="Scan the small vulnerable web shop embedded in fleetledger instead of PATH.")
@click.option("--join", "join", metavar="RUN_ID", default=None,
              help="Join the live run RUN_ID of the --ledger postgresql://... ledger as one more host: this "
                   "host's workers take its tasks; PATH must hold the same content as on the run's first host.")
@click.option("--model", default="offline", show_default=True, envvar="FLEETLEDGER_MODEL", show_envvar=True,
              help="PROVIDER:MODEL that judges candidates: offline, openai:MODEL (any OpenAI-compatible endpoint) "
                   "or anthropic:MODEL; the policy's models must allow it (see docs/models.md).")
def scan(path: str, workspace: str, workers: int, model_quota: int | None, lease_ttl: float, sandbox: str,
         policy_path: str | None, progress: bool | None, allow_empty: bool, new_run: bool, demo: bool, join: str | None,
         model: str) -> None:
    """Scan the source repository at PATH (default: the current folder).

    Running the same command again resumes the same run and pays only for missing work; after
    the run finished it does nothing but say so.
    """
    from .jobs.scan.job import ScanJob

    try:
        ws = Workspace.at(workspace)
        target = Path(__file__).resolve().parent / "demo_repo" if demo else Path(path)
        job = ScanJob(target, workspace=ws.root, argv=_job_command(target, ws, model), model=model)
        options = RunOptions(workers=workers, model_quota=model_quota, lease_ttl_s=lease_ttl, sandbox=sandbox,
                             new_run=new_run, explicit_resume=join is None, join=join)
        policy = _policy(ws, policy_path, job)
        _execute(lambda on_progress: Coordinator(job, ws, options, policy=policy, on_progress=on_progress), progress,
                 allow_empty)
    except errors.FleetledgerError as exc:
        _fail(exc)
    except OSError as exc:
        _fail_for_space(exc)


def _job_command(target: Path, workspace: Workspace, model: str) -> list[str]:
    """The scan's command as recorded in the ledger and the run-state file: absolute paths,
    so that it means the same job from any folder (never a password: ``--ledger`` is left out)."""
    command = ["fleetledger", "scan", str(Path(target).resolve()), "--workspace", str(workspace.root)]
    return command + (["--model", model] if model != "offline" else [])


def _resume(workspace: str, workers: int, model_quota: int | None, lease_ttl: float, sandbox: str,
            policy_path: str | None, progress: bool | None, allow_empty: bool, *, explicit: bool,
            upgrade: bool = False) -> None:
    from .coordinator import settle_state_file

    ws = Workspace.at(workspace)
    ws.check_made_here([], near=[Path.cwd()])  # before its lock, state file or ledger is opened
    holder = ws.lock_holder()
    if holder is not None:
        _echo(f"run is live in fleetledger pid {holder.get('pid', '?')}; nothing to do (see `fleetledger status`)")
        return
    view, note = settle_state_file(ws)
    if note:
        _echo(f"warning: {note}", err=True)
    joined = _joined_target(view, ws)  # resuming here means joining again, with this host's checkout
    job = _job_from_view(view, ws, joined)
    # Before trusting what the ledger says: the target it names may be the shipper's choice, so
    # the current folder (a checkout being worked in) counts as scanned too.
    ws.check_made_here([Path(p) for p in job.read_only_paths()], near=[Path.cwd()])
    if view.state == "JACKED_OUT":
        _echo(f"run {view.run_id} is JACKED_OUT (finished); nothing to do")
        return
    if view.state == "HALTED" and not explicit:
        _echo(f"run {view.run_id} is HALTED: {view.halt.get('reason') if view.halt else '?'}\n"
                   "it waits for an explicit `fleetledger resume` (or the same job command again)")
        sys.exit(EXIT_HALTED)
    options = RunOptions(workers=workers, model_quota=model_quota, lease_ttl_s=lease_ttl, sandbox=sandbox,
                         explicit_resume=explicit, join=view.run_id if joined else None, upgrade=upgrade)
    policy = _policy(ws, policy_path, job)
    _execute(lambda on_progress: Coordinator(job, ws, options, policy=policy, on_progress=on_progress), progress,
             allow_empty)


@main.command()
@_workspace_option
@_run_options
@click.option("--upgrade", is_flag=True,
              help="Continue a run recorded under other code: keep the results of the sprints whose code did not "
                   "change, plan the others again under this code, and record the decision.")
def resume(**kwargs: Any) -> None:
    """Continue the workspace's run: RUNNING or HALTED (an explicit resume); a finished run is left alone."""
    try:
        _resume(**kwargs, explicit=True)
    except errors.FleetledgerError as exc:
        _fail(exc)
    except OSError as exc:
        _fail_for_space(exc)


@main.command()
@_workspace_option
@_run_options
def recover(**kwargs: Any) -> None:
    """Apply the three-state rule: RUNNING resumes now, HALTED prints why and waits, JACKED_OUT does nothing."""
    try:
        _resume(**kwargs, explicit=False)
    except errors.FleetledgerError as exc:
        _fail(exc)
    except OSError as exc:
        _fail_for_space(exc)


def status_data(view: RunView, workspace: Workspace, now_ms: int) -> dict[str, Any]:
    """Returns the status of a run as JSON-ready data (read-only)."""
    holder = workspace.lock_holder()
    sprints = []
    for s in view.sprints.values():
        done, total = view.sprint_progress(s.id)
        sprints.append({"id": s.id, "status": s.status, "tasks_done": done, "tasks_total": total})
    workers = {}
    for wid, w in sorted(view.workers.items()):
        workers[wid] = {"task": w.get("task"), "pid": w.get("pid"),
                        "heartbeat_age_s": round((now_ms - w["last_seen_ms"]) / 1000, 1) if w.get("last_seen_ms") else None}
    leases = [{"task": l.task, "worker": l.worker, "epoch": l.epoch,
               "expires_in_s": round((l.expires_ms - now_ms) / 1000, 1),
               "heartbeat_age_s": round((now_ms - l.renewed_ms) / 1000, 1)} for l in view.leases()]
    leader = None
    if view.leader is not None:  # a run shared by coordinators on several hosts
        session = next((s for s in reversed(view.sessions) if s.get("id") == view.leader.session), {})
        leader = {"session": view.leader.session, "host": session.get("host"), "pid": session.get("pid"),
                  "epoch": view.leader.epoch, "expires_in_s": round((view.leader.expires_ms - now_ms) / 1000, 1)}
    return {"run_id": view.run_id, "state": view.state, "live_pid": holder.get("pid") if holder else None,
            "leader": leader,
            "target": view.job.get("target"), "started": iso_utc(view.started_ms),
            "last_activity": iso_utc(view.last_activity_ms),
            "last_activity_age_s": round((now_ms - view.last_activity_ms) / 1000, 1),
            "halt": view.halt, "sprints": sprints, "leases": leases, "workers": workers,
            "model": view.model, "records": view.records, "last_seq": view.last_seq}


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
    try:
        ws = Workspace.at(workspace)
        data = status_data(_current_view(ws), ws, wall_clock_ms())
    except errors.FleetledgerError as exc:
        _fail(exc)
    if as_json:
        _echo_json(data, indent=2)
        return
    live = f"live (pid {data['live_pid']})" if data["live_pid"] else "no coordinator running"
    _echo(f"run {data['run_id']}: {data['state']}, {live}")
    _echo(f"target {data['target']}; last activity {data['last_activity']} ({data['last_activity_age_s']} s ago)")
    if data["halt"]:
        _echo(f"halted: {data['halt'].get('reason')}")
    if data["leader"]:
        lead = data["leader"]
        _echo(f"leader: coordinator {lead['session']} on {lead['host']} (pid {lead['pid']}), "
                   f"lease epoch {lead['epoch']} expires in {lead['expires_in_s']} s")
    for s in data["sprints"]:
        _echo(f"  {s['id']:<12} {s['status']:<12} {s['tasks_done']}/{s['tasks_total']} tasks")
    for lease in data["leases"]:
        _echo(f"  lease {lease['task']} -> {lease['worker']} epoch {lease['epoch']}, "
                   f"expires in {lease['expires_in_s']} s, heartbeat {lease['heartbeat_age_s']} s ago")
    from .model_broker import describe_spend

    if data["halt"] and data["halt"].get("reset_at"):
        _echo(f"the model quota resets at {data['halt']['reset_at']}")
    _echo(f"model spend: {describe_spend(data['model'])}; records: {data['records']}")


@main.command()
@_workspace_option
@click.option("--reason", default="halted by `fleetledger halt`", show_default=True, help="Recorded halt reason.")
@click.option("--timeout", "timeout_s", default=60.0, show_default=True, help="Seconds to wait for a live run to stop.")
@click.option("--policy", "policy_path", type=click.Path(dir_okay=False, exists=True), default=None,
              envvar="FLEETLEDGER_POLICY", show_envvar=True,
              help="Policy TOML file whose hash the halt of a crashed run records (default: as `scan` resolves it).")
def halt(workspace: str, reason: str, timeout_s: float, policy_path: str | None) -> None:
    """Stop the run and mark it HALTED with a reason (a live coordinator is asked to stop)."""
    ws = Workspace.at(workspace)
    try:
        holder = ws.lock_holder()
        if holder is not None and holder.get("pid"):
            fd = fsutil.open_nofollow(ws.root / "halt-request", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
            with os.fdopen(fd, "w", encoding="utf-8") as request:
                request.write(reason)
            os.kill(int(holder["pid"]), signal.SIGTERM)
            deadline = time.monotonic() + timeout_s
            while ws.lock_holder() is not None:
                if time.monotonic() > deadline:
                    raise errors.FleetledgerError(f"the run (pid {holder['pid']}) did not stop within {timeout_s:g} s")
                time.sleep(0.1)
        else:
            from .coordinator import halt_idle_run, policy_in_force

            crashed = _current_view(ws)
            try:
                job = _job_from_view(crashed, ws, _joined_target(crashed, ws))
            except errors.UsageError:
                job = None  # its target is gone: no repository rules to narrow the policy with
            halt_idle_run(ws, reason, policy=policy_in_force(_policy(ws, policy_path, job), job))
        view = _current_view(ws)
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
        ws = Workspace.at(workspace)
        now = wall_clock_ms()
        expires_ms = now + _duration_ms(expires) if expires else None
        grant_approval(ws, action="effect", target=target, expires_ms=expires_ms, reason=reason)
    except errors.FleetledgerError as exc:
        _fail(exc)
    until = f" until {iso_utc(expires_ms)}" if expires_ms else " for the rest of the run"
    _echo(f"approved effect {target!r}{until}; run `fleetledger resume` to continue")


@main.command()
@click.argument("path")
@_workspace_option
@click.option("--worker", default=None, help="Only actions by this worker (e.g. w03).")
@click.option("--task", default=None, help="Only actions in this task.")
@click.option("--since", default=None, help="Only actions at or after this UTC time (ISO-8601).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON lines.")
def audit(path: str, workspace: str, worker: str | None, task: str | None, since: str | None, as_json: bool) -> None:
    """Every recorded action that touched PATH (relative to the scanned root): by whom, when, and why."""
    import datetime as dt

    from .audit import audit as run_audit
    from .coordinator import current_run_id
    from .heads import refuse_if_contradicted

    try:
        ws = Workspace.at(workspace)
        if not ws.exists():
            raise errors.NoRunError(f"no ledger in {ws.root}; start a run with `fleetledger scan PATH`")
        since_ms = None
        if since:
            try:
                moment = dt.datetime.fromisoformat(since.replace("Z", "+00:00"))
            except ValueError as exc:
                raise errors.UsageError(f"--since {since!r} is not an ISO-8601 time such as 2026-11-29T10:00:00Z") from exc
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=dt.timezone.utc)
            since_ms = int(moment.timestamp() * 1000)
        _warn_if_not_made_here(ws)
        with open_storage(ws.ledger_url) as storage:
            run = RunReader(storage, load_view(storage, current_run_id(ws, storage)))
            refuse_if_contradicted(storage, run.view.run_id, run.view.last_seq, ws.state_path)
            rows = run_audit(run, path, worker=worker, task=task, since_ms=since_ms)
    except errors.FleetledgerError as exc:
        _fail(exc)
    if as_json:
        for row in rows:
            _echo_json(row)
        return
    if not rows:
        _echo(f"no recorded action touched {path}")
        return
    for row in rows:
        where = f"{row['task']}@{row['epoch']}" if row["task"] else "-"
        _echo(f"{row['ts']}  {row['worker']:<11} {where:<20} {row['kind']:<13} {row['step'] or '':<40} {row['why']}")


@main.command()
@_workspace_option
@click.option("--all-runs", is_flag=True, help="Every run in the ledger, not only the current one.")
@click.option("--kind", default=None, help="Only records of this kind.")
def log(workspace: str, all_runs: bool, kind: str | None) -> None:
    """Print the ledger's records as JSON lines."""
    try:
        ws = Workspace.at(workspace)
        run_id = None if all_runs else _current_view(ws).run_id
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
    from .heads import HeadCheck, gather
    from .verify import verify_records
    from .workspace import owner_key

    try:
        ws = Workspace.at(workspace)
        if not ws.exists():
            raise errors.NoRunError(f"no ledger in {ws.root}")
        _warn_if_not_made_here(ws)
        with open_storage(ws.ledger_url) as storage:
            check = HeadCheck(gather(storage.url, runstate.signed_head(ws.state_path, storage.url)), owner_key())
            report = verify_records(storage.read(), check)
            report.problems.extend(storage.integrity_problems())
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
    from .workspace import owner_key

    try:
        ws = Workspace.at(workspace)
        ws.check_made_here([], near=[Path.cwd()])
        found = run_salvage(ws, now_ms=wall_clock_ms(), key=owner_key())
    except errors.FleetledgerError as exc:
        _fail(exc)
    except OSError as exc:
        _fail(errors.OutOfSpaceError(f"salvage could not write ({exc}); the damaged ledger was left in place, "
                                     "untouched: free some space and run it again") if exc.errno == errno.ENOSPC
              else errors.FleetledgerError(f"salvage failed ({exc}); the damaged ledger was left in place"))
    from .ledger.damage import ranges, text

    for damage in [found.wal, *found.pages]:
        if damage:
            _echo(f"damaged: {damage}")
    first, last = found.kept
    _echo(f"kept {last} records ({text([[first, last]]) if last else 'none'}) in a new ledger; the damaged one is in "
          f"{found.damaged_kept_in}")
    if found.unreadable:
        _echo(f"lost: {text(found.unreadable)}: unreadable")
    if found.corrupt:
        _echo(f"lost: {text(ranges(found.corrupt))}: "
              "read back with a hash that does not match their content")
    if found.after_loss:
        _echo(f"not kept: {text(ranges(found.after_loss))}: readable, but after the loss (their chain cannot continue "
              f"there); kept as they were in {found.after_loss_file}")
    for run, spans in found.lost_by_run.items():
        _echo(f"run {run}: not kept: seq {', '.join(spans)}")
    for run, seq in found.heads.items():
        _echo(f"run {run}: its signed head was at seq {seq}: records up to it are gone without a trace")
    if found.unknown_run:
        _echo(f"{text(found.unknown_run)}: their run cannot be told")
    for problem in found.problems:
        _echo(f"problem in the new ledger: {problem}")
    _echo("nothing was lost" if not found.lost_anything else
          "the new ledger verifies; `fleetledger resume` continues the run from what is left and redoes what was lost"
          if not found.problems else "the new ledger does NOT verify; see the problems above")
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

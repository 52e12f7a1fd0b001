"""``fleetledger status --watch``: a live view of the fleet, read from the ledger alone.

The watcher is another process than the coordinator: it opens the ledger, folds the run once
from its latest checkpoint, and then, at every refresh, folds only the records appended since
the last sequence number it saw (``storage.read(run_id, after_seq=...)`` and
``RunView.apply``). So it works while the run is alive, after it died, and after it finished,
and neither its start nor a refresh costs the length of the ledger. The fold itself keeps what
the watch shows: which workers exited (and how), and the last few notable events (a crash, a
resume, an expired lease, a halt); the findings so far are read from the ledger's step results.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.panel import Panel
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from . import errors, runstate
from .version import __version__
from .coordinator import current_run_id, wall_clock_ms
from .display import printable
from .jobs.scan import report
from .jobs.scan.shapes import SEVERITIES, survives
from .ledger import Storage, open_storage
from .ledger.records import iso_utc
from .reader import RunReader, load
from .replay import RunView
from .workspace import Workspace

STOPPED_STATES = frozenset({"HALTED", "JACKED_OUT"})
"""States after which ``--until-stopped`` ends the watch."""


@dataclass(frozen=True, kw_only=True)
class WorkerRow:
    """One worker as the watch shows it.

    Attributes:
        id: Worker id (``w01``).
        pid: Its process id, when recorded.
        task: The task it holds, or None.
        epoch: The lease epoch of that task, or None.
        lease_expires_in_s: Seconds until the lease expires (negative: overdue), or None.
        heartbeat_age_s: Seconds since its last lease renewal or record, or None.
        exited: How it ended (``worker.exited``'s reason), or None while it may be alive.
    """

    id: str
    pid: int | None
    task: str | None
    epoch: int | None
    lease_expires_in_s: float | None
    heartbeat_age_s: float | None
    exited: str | None


@dataclass(frozen=True, kw_only=True)
class Snapshot:
    """What one refresh shows, computed from the fold at one instant (read-only).

    Attributes:
        view: The folded run.
        now_ms: The instant, epoch ms UTC.
        live_pid: Pid of the coordinator holding the workspace lock, or None.
        workers: One row per worker, by id.
        findings: Scan counts (``candidates``, ``confirmed``, ``findings``, ``by_severity``),
            or None for a job that is not a scan.
        events: The last few notable records, oldest first, as ``(ts_ms, kind, why)``.
    """

    view: RunView
    now_ms: int
    live_pid: int | None
    workers: tuple[WorkerRow, ...]
    findings: dict[str, Any] | None
    events: tuple[tuple[int, str, str], ...]

    @property
    def stopped(self) -> bool:
        """True when the run is HALTED or JACKED_OUT."""
        return self.view.state in STOPPED_STATES


@dataclass
class Watcher:
    """Follows the workspace's current run, folding only new records at each ``poll``.

    Args:
        workspace: The workspace to watch.
        storage: Its ledger, open for the whole watch.

    Attributes:
        view: The run folded so far (empty until the first ``poll``, which starts it from the
            run's latest checkpoint).

    Raises:
        NoRunError: the ledger holds no run (when the watcher is made).
    """

    workspace: Workspace
    storage: Storage
    view: RunView = field(init=False)
    _findings: tuple[tuple[str, int], dict[str, Any] | None] = field(init=False, default=(("", -1), None))

    def __post_init__(self) -> None:
        self.view = RunView(run_id=current_run_id(self.workspace, self.storage))

    @property
    def events(self) -> tuple[tuple[int, str, str], ...]:
        """The last few notable records of the run, oldest first, as ``(ts_ms, kind, why)``."""
        return tuple((ts, kind, why) for ts, kind, why in self.view.recent)

    def poll(self) -> int:
        """Folds the records appended since the last poll; follows a new run of the workspace.

        The first poll of a run starts from its latest checkpoint.

        Returns:
            The number of records folded.
        """
        self._follow_new_run()
        if self.view.records == 0:
            loaded = load(self.storage, self.view.run_id)
            self.view = loaded.view
            return loaded.folded
        n = 0
        for record in self.storage.read(self.view.run_id, after_seq=self.view.last_seq):
            self.view.apply(record)
            n += 1
        return n

    def snapshot(self, now_ms: int) -> Snapshot:
        """Returns what the watch shows at ``now_ms`` (read-only on the ledger)."""
        holder = self.workspace.lock_holder()
        rows = []
        for wid, w in sorted(self.view.workers.items()):
            task = w.get("task")
            lease = self.view.tasks[task].lease if task in self.view.tasks else None
            if lease is not None and lease.worker != wid:
                lease = None
            seen = max(w.get("last_seen_ms") or 0, lease.renewed_ms if lease else 0)
            rows.append(WorkerRow(
                id=wid, pid=w.get("pid"), task=task, epoch=lease.epoch if lease else None,
                lease_expires_in_s=round((lease.expires_ms - now_ms) / 1000, 1) if lease else None,
                heartbeat_age_s=round((now_ms - seen) / 1000, 1) if seen else None,
                exited=w.get("exited")))
        return Snapshot(view=self.view, now_ms=now_ms, live_pid=holder.get("pid") if holder else None,
                        workers=tuple(rows), findings=self._findings_summary(), events=self.events)

    def _follow_new_run(self) -> None:
        try:
            state = runstate.read(self.workspace.state_path)
        except errors.StateFileError:
            return
        if state is not None and state.plan_id != self.view.run_id:
            self.view = RunView(run_id=state.plan_id)

    def _findings_summary(self) -> dict[str, Any] | None:
        if self.view.job.get("kind") != "scan":
            return None
        at = (self.view.run_id, self.view.steps_done)
        if self._findings[0] == at:
            return self._findings[1]
        run = RunReader(self.storage, self.view)
        scan = report.build_report(run, tool_version=__version__)
        summary = {"candidates": len({c.id for f in scan.files for c in f.candidates}),
                   "confirmed": sum(1 for a in report.answers(run, "investigate").values() if survives(a)),
                   "findings": len(scan.findings),
                   "by_severity": {s: n for s in SEVERITIES if (n := sum(f.severity == s for f in scan.findings))}}
        self._findings = (at, summary)
        return summary


def _age(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    return f"{seconds:.1f} s" if abs(seconds) < 120 else f"{seconds / 60:.1f} min"


def _header(s: Snapshot) -> Text:
    v = s.view
    colour = {"RUNNING": "green", "HALTED": "red", "JACKED_OUT": "blue"}.get(v.state or "", "white")
    text = Text.assemble(("run ", "bold"), (v.run_id, "bold"), ": ", (str(v.state), f"bold {colour}"), ", ")
    if s.live_pid:
        text.append(f"coordinator live (pid {s.live_pid})", "green")
    elif v.state == "RUNNING":
        text.append("no coordinator: interrupted (`fleetledger recover` resumes it)", "yellow")
    else:
        text.append("no coordinator running")
    age = (s.now_ms - v.last_activity_ms) / 1000
    text.append(f"\ntarget {printable(str(v.job.get('target', '?')))}; last record #{v.last_seq} at "
                f"{iso_utc(v.last_activity_ms)} ({_age(age)} ago); {v.records} records")
    hosts = {x.get("member") for x in v.sessions if x.get("kind") == "joined"}
    if v.leader is not None or hosts:  # a run shared by coordinators on several hosts
        session = next((x for x in reversed(v.sessions) if v.leader and x.get("id") == v.leader.session), {})
        leader = (f"coordinator {v.leader.session} on {session.get('host', '?')}, lease expires in "
                  f"{_age((v.leader.expires_ms - s.now_ms) / 1000)}" if v.leader else "none (being taken over)")
        text.append(f"\nshared ledger: {len(hosts)} host(s) joined; leader: {leader}")
    return text


def _sprints(v: RunView) -> Table:
    table = Table(title="sprints (progress against the plan)", title_justify="left", expand=False)
    for name in ("sprint", "status", "", "tasks"):
        table.add_column(name)
    for sprint in v.sprints.values():
        done, total = v.sprint_progress(sprint.id)
        failed = sum(1 for t in sprint.tasks if v.tasks[t].status == "failed")
        bar_total = total or 1
        bar_done = done if total else (1 if sprint.status == "completed" else 0)
        tasks = f"{done}/{total}" + (f" ({failed} failed)" if failed else "")
        table.add_row(sprint.id, sprint.status, ProgressBar(total=bar_total, completed=bar_done, width=30), tasks)
    return table


def _workers(s: Snapshot) -> Table:
    table = Table(title="workers", title_justify="left")
    for name in ("worker", "pid", "task", "epoch", "lease expires in", "heartbeat age", "state"):
        table.add_column(name)
    for w in s.workers:
        overdue = w.lease_expires_in_s is not None and w.lease_expires_in_s < 0
        expires = Text(_age(w.lease_expires_in_s), "red" if overdue else "")
        if w.exited:
            state = Text(f"exited: {printable(str(w.exited))}", "dim")
        elif not s.live_pid:
            state = Text("not running (no coordinator)", "dim")
        else:
            state = Text("holding a lease" if w.task else "idle")
        table.add_row(w.id, str(w.pid or "-"), w.task or "-", str(w.epoch or "-"), expires,
                      _age(w.heartbeat_age_s), state)
    return table


def _totals(s: Snapshot) -> Text:
    m = s.view.model
    text = Text(f"model: {int(m['calls'])} calls, {int(m['input_tokens'])} tokens in, "
                f"{int(m['output_tokens'])} out, ${m['cost_usd']:.4f}")
    f = s.findings
    if f is not None:
        severities = ", ".join(f"{n} {sev}" for sev, n in f["by_severity"].items())
        text.append(f"\nfindings so far: {f['candidates']} candidates, {f['confirmed']} confirmed by investigate, "
                    f"{f['findings']} revalidated" + (f" ({severities})" if severities else ""))
    return text


def _events(s: Snapshot) -> Table:
    table = Table(title="recent events", title_justify="left", show_header=False, box=None)
    for ts, kind, why in s.events:
        table.add_row(iso_utc(ts), kind, Text(printable(why)))
    return table


def render(s: Snapshot) -> RenderableType:
    """Returns the rich renderable of one refresh.

    Args:
        s: The snapshot to show.

    Returns:
        A renderable: header, halt reason, sprints, workers, spend and findings, recent events.
    """
    parts: list[RenderableType] = [_header(s)]
    if s.view.halt is not None:
        parts.append(Panel(Text(printable(str(s.view.halt.get("reason", "?")))), title="HALTED", border_style="red",
                           expand=False))
    parts += [_sprints(s.view), _workers(s), _totals(s)]
    if s.events:
        parts.append(_events(s))
    return Group(*parts)


def watch(workspace: Workspace, *, interval_s: float = 1.0, until_stopped: bool = False,
          console: Console | None = None) -> RunView:
    """Shows the run, refreshing every ``interval_s``, until Ctrl-C (or until it stops).

    Args:
        workspace: The workspace whose current run to watch.
        interval_s: Seconds between refreshes.
        until_stopped: End by itself once the run is HALTED or JACKED_OUT.
        console: Where to draw (default: stdout). A console that is not a terminal gets the
            last refresh only, when the watch ends.

    Returns:
        The run as last folded.

    Raises:
        NoRunError: the workspace holds no ledger or no run.
        LedgerError: the ledger cannot be read.
    """
    if not workspace.exists():
        raise errors.NoRunError(f"no ledger in {workspace.root}; start a run with `fleetledger scan PATH`")
    with open_storage(workspace.ledger_url) as storage:
        watcher = Watcher(workspace, storage)
        watcher.poll()
        snap = watcher.snapshot(wall_clock_ms())
        try:
            with Live(render(snap), console=console, auto_refresh=False) as live:
                while not (until_stopped and snap.stopped):
                    time.sleep(interval_s)
                    watcher.poll()
                    snap = watcher.snapshot(wall_clock_ms())
                    live.update(render(snap), refresh=True)
        except KeyboardInterrupt:
            pass
        return watcher.view

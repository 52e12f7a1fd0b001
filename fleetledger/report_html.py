"""``fleetledger report --html``: one self-contained HTML page about a run, for a person.

The page holds a timeline of the run (a lane for the coordinator's sessions and one per worker:
which task it held when, from ``task.assigned`` to the end of that lease; crashes, resumes,
expired leases and halts marked), the progress of each sprint against the plan, the findings
with their severity, CWE, location, rationale and revalidation verdict, and the files that were
skipped with the reason. Everything is computed from one pass over all of the run's records (the
fold, plus the lease intervals the fold does not keep: the timeline is the whole history, so it
does not start from a checkpoint) and from ``build_report``.

The page needs no network: CSS, the SVG timeline and the one small script (sortable tables)
are inline, and its Content-Security-Policy forbids every fetch and every script but that one
(by hash). Everything taken from the ledger is escaped: file names and rationales come from an
untrusted repository, and a ``<script>`` in a file name must show as text, never run.
"""

from __future__ import annotations

import base64
import hashlib
import html
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import errors, fsutil
from .version import __version__
from .display import printable
from .coordinator import current_run_id, wall_clock_ms
from .jobs.scan.patch_account import account_html, patch_account
from .jobs.scan.report import build_report
from .jobs.scan.sarif import finding_cwe, finding_verdict
from .jobs.scan.shapes import SEVERITIES, ScanReport
from .ledger import Record, open_storage
from .leases import LEADER_TASK, LEASE_END_KINDS
from .ledger.records import iso_utc
from .reader import RunReader
from .replay import RunView
from .workspace import Workspace

REPORT_FILE = "report.html"

_END_NAMES = {"task.finished": "finished", "task.failed": "failed", "lease.expired": "expired",
              "lease.released": "released"}
_RUN_MARKS = {"run.started": "started", "run.resumed": "resumed", "run.halted": "halted", "run.finished": "finished"}
_LANE_MARKS = frozenset({"worker.exited", "lease.expired"})


@dataclass(frozen=True, kw_only=True)
class Segment:
    """A task held by a worker, from its assignment to the end of that lease.

    Attributes:
        worker, task, sprint, epoch: Who held what, in which sprint, at which lease epoch.
        start_ms, end_ms: ``task.assigned`` and the record that ended the lease (epoch ms UTC).
        end: ``finished``, ``failed``, ``expired``, ``released``, or ``open`` (still held at
            the last record).
        why: The reason recorded with the end, if any.
    """

    worker: str
    task: str
    sprint: str
    epoch: int
    start_ms: int
    end_ms: int
    end: str
    why: str = ""


@dataclass(frozen=True, kw_only=True)
class Session:
    """A coordinator session, from ``run.started``/``run.resumed`` to its last record.

    Attributes:
        start_ms, end_ms: First and last record of the session (epoch ms UTC).
        kind: ``started`` or ``resumed``.
        ended: ``halted``, ``finished``, ``interrupted`` (a later session began without a halt
            or finish: the coordinator died), or ``open`` (the last session, still running or
            dead without a word).
    """

    start_ms: int
    end_ms: int
    kind: str
    ended: str


@dataclass(frozen=True, kw_only=True)
class Marker:
    """A moment worth marking: a run event, or a worker's exit or expired lease.

    Attributes:
        ts_ms: When (epoch ms UTC).
        kind: ``started``, ``resumed``, ``halted``, ``finished``, ``worker.exited`` or ``lease.expired``.
        worker: The worker's lane for the last two, else None.
        why: The recorded reason.
    """

    ts_ms: int
    kind: str
    worker: str | None
    why: str


@dataclass
class Timeline:
    """The run laid out in time, built record by record (``add``) next to the fold.

    Attributes:
        start_ms, end_ms: The first and last record.
        sessions: Coordinator sessions, oldest first.
        lanes: Per worker id, the tasks it held, oldest first.
        markers: Marked moments, oldest first.
    """

    start_ms: int = 0
    end_ms: int = 0
    sessions: list[Session] = field(default_factory=list)
    lanes: dict[str, list[Segment]] = field(default_factory=dict)
    markers: list[Marker] = field(default_factory=list)
    _held: dict[tuple[str, int], tuple[str, int]] = field(default_factory=dict, init=False, repr=False)
    _session: tuple[int, str] | None = field(default=None, init=False, repr=False)

    def add(self, r: Record, view: RunView) -> None:
        """Lays out one record; ``view`` is the fold including it (records in sequence order)."""
        if not self.start_ms:
            self.start_ms = r.ts_ms
        if r.kind in ("run.started", "run.resumed"):
            self._close_session("interrupted")
            self._session = (r.ts_ms, _RUN_MARKS[r.kind])
        if r.task == LEADER_TASK:
            pass  # the leader lease of a shared run: no worker lane
        elif r.kind == "task.assigned":
            self._held[(r.task, r.epoch)] = (r.payload["worker"], r.ts_ms)
            self.lanes.setdefault(r.payload["worker"], [])
        elif r.kind in LEASE_END_KINDS and (r.task, r.epoch) in self._held:
            worker, start = self._held.pop((r.task, r.epoch))
            self.lanes[worker].append(Segment(worker=worker, task=r.task, sprint=view.tasks[r.task].sprint,
                                              epoch=r.epoch, start_ms=start, end_ms=r.ts_ms,
                                              end=_END_NAMES[r.kind], why=r.why))
        if r.kind in _RUN_MARKS:
            self.markers.append(Marker(ts_ms=r.ts_ms, kind=_RUN_MARKS[r.kind], worker=None, why=r.why))
        elif r.kind in _LANE_MARKS and r.payload.get("worker"):
            worker = r.payload["worker"]
            self.lanes.setdefault(worker, [])
            self.markers.append(Marker(ts_ms=r.ts_ms, kind=r.kind, worker=worker, why=r.why))
        self.end_ms = r.ts_ms
        if r.kind in ("run.halted", "run.finished"):
            self._close_session(_RUN_MARKS[r.kind])

    def finish(self, view: RunView) -> "Timeline":
        """Closes what is still open at the last record and returns the timeline."""
        for (task, epoch), (worker, start) in sorted(self._held.items()):
            self.lanes[worker].append(Segment(worker=worker, task=task, sprint=view.tasks[task].sprint, epoch=epoch,
                                              start_ms=start, end_ms=self.end_ms, end="open"))
        self._held.clear()
        self._close_session("open")
        return self

    def _close_session(self, ended: str) -> None:
        if self._session is not None:
            start, kind = self._session
            self.sessions.append(Session(start_ms=start, end_ms=self.end_ms, kind=kind, ended=ended))
            self._session = None


def fold_with_timeline(records: Iterable[Record], run_id: str) -> tuple[RunView, Timeline]:
    """Folds a run's records into its view and its timeline in one pass.

    Args:
        records: The run's records in sequence order.
        run_id: The run.

    Returns:
        ``(view, timeline)``.
    """
    view = RunView(run_id=run_id)
    timeline = Timeline()
    for r in records:
        view.apply(r)
        timeline.add(r, view)
    return view, timeline.finish(view)


def _e(value: object) -> str:
    """Escapes text for HTML and SVG (also inside attributes); control, bidi and other format
    characters (and a lone surrogate of a name that is not UTF-8) show as visible escapes
    (``display.printable``)."""
    return html.escape(printable(str(value)), quote=True)


def _duration(ms: int) -> str:
    s = ms / 1000
    if s < 120:
        return f"{s:.1f} s"
    if s < 7200:
        return f"{s / 60:.1f} min"
    return f"{s / 3600:.1f} h"


# -- the timeline as SVG ------------------------------------------------------------------

_W, _LABEL, _RIGHT, _AXIS, _LANE, _GAP = 1000, 110, 16, 30, 22, 6


def _tick_step(span_ms: int) -> int:
    raw = max(span_ms / 6, 1)
    scale = 10 ** (len(str(int(raw))) - 1)
    for mult in (1, 2, 5, 10):
        if raw <= mult * scale:
            return mult * scale
    return 10 * scale


def _svg(t: Timeline, sprint_index: dict[str, int]) -> str:
    lanes = ["coordinator", *sorted(t.lanes)]
    span = max(t.end_ms - t.start_ms, 1)
    height = _AXIS + len(lanes) * (_LANE + _GAP) + 4
    bottom = height - 4

    def x(ts: int) -> float:
        return _LABEL + (ts - t.start_ms) / span * (_W - _LABEL - _RIGHT)

    def lane_y(name: str) -> int:
        return _AXIS + lanes.index(name) * (_LANE + _GAP)

    out = [f'<svg id="timeline-svg" viewBox="0 0 {_W} {height}" width="100%" role="img" '
           f'aria-label="timeline of the run" xmlns="http://www.w3.org/2000/svg">']
    step = _tick_step(span)
    for tick in range(0, span + 1, step):
        label = f"+{tick / 60000:g} min" if step >= 60000 else f"+{tick / 1000:g} s"
        out.append(f'<line class="tick" x1="{x(t.start_ms + tick):.1f}" x2="{x(t.start_ms + tick):.1f}" '
                   f'y1="{_AXIS - 6}" y2="{bottom}"/><text class="axis" x="{x(t.start_ms + tick):.1f}" '
                   f'y="{_AXIS - 10}">{_e(label)}</text>')
    for name in lanes:
        y = lane_y(name)
        out.append(f'<rect class="lane" x="{_LABEL}" y="{y}" width="{_W - _LABEL - _RIGHT}" height="{_LANE}"/>'
                   f'<text class="lane-label" x="{_LABEL - 8}" y="{y + _LANE / 2 + 4}">{_e(name)}</text>')
    y = lane_y("coordinator")
    for s in t.sessions:
        width = max(x(s.end_ms) - x(s.start_ms), 2)
        tip = f"coordinator session ({s.kind}) {iso_utc(s.start_ms)} to {iso_utc(s.end_ms)}: {s.ended}"
        out.append(f'<rect class="session ended-{s.ended}" x="{x(s.start_ms):.1f}" y="{y + 3}" width="{width:.1f}" '
                   f'height="{_LANE - 6}"><title>{_e(tip)}</title></rect>')
        if s.ended == "interrupted":
            out.append(_cross(x(s.end_ms), y + _LANE / 2, f"coordinator died at {iso_utc(s.end_ms)} (no halt, no finish)"))
    for worker, segments in t.lanes.items():
        y = lane_y(worker)
        for g in segments:
            left, width = x(g.start_ms), max(x(g.end_ms) - x(g.start_ms), 2)
            tip = (f"{g.task} ({g.sprint}) epoch {g.epoch}, held by {g.worker} for {_duration(g.end_ms - g.start_ms)}; "
                   f"{g.end}" + (f": {g.why}" if g.why else ""))
            label = f'<text class="seg-label" x="{left + 3:.1f}" y="{y + _LANE / 2 + 4}">{_e(g.task)}</text>' if width > 70 else ""
            out.append(f'<g class="seg end-{g.end}"><rect class="sprint-{sprint_index.get(g.sprint, 0) % len(_PALETTE)}" '
                       f'x="{left:.1f}" y="{y + 2}" width="{width:.1f}" height="{_LANE - 4}"/>{label}'
                       f'<title>{_e(tip)}</title></g>')
    for m in t.markers:
        if m.worker is None:
            mx = x(m.ts_ms)
            out.append(f'<g class="mark mark-{m.kind}"><line x1="{mx:.1f}" x2="{mx:.1f}" y1="{_AXIS - 4}" y2="{bottom}"/>'
                       f'<title>{_e(f"run {m.kind} at {iso_utc(m.ts_ms)}: {m.why}")}</title></g>')
        elif m.kind == "lease.expired":
            cy = lane_y(m.worker) + _LANE / 2
            mx = x(m.ts_ms)
            out.append(f'<polygon class="mark-expired" points="{mx:.1f},{cy - 7} {mx + 6:.1f},{cy} {mx:.1f},{cy + 7} '
                       f'{mx - 6:.1f},{cy}"><title>{_e(f"lease expired at {iso_utc(m.ts_ms)}: {m.why}")}</title></polygon>')
        else:
            out.append(_cross(x(m.ts_ms), lane_y(m.worker) + _LANE / 2, f"worker exited at {iso_utc(m.ts_ms)}: {m.why}"))
    out.append("</svg>")
    return "".join(out)


def _cross(cx: float, cy: float, tip: str) -> str:
    return (f'<path class="mark-crash" d="M{cx - 6:.1f},{cy - 6:.1f} L{cx + 6:.1f},{cy + 6:.1f} '
            f'M{cx - 6:.1f},{cy + 6:.1f} L{cx + 6:.1f},{cy - 6:.1f}"><title>{_e(tip)}</title></path>')


# -- the sections -------------------------------------------------------------------------


def _summary(view: RunView, t: Timeline, scan: ScanReport | None) -> str:
    m = view.model
    crashes = sum(1 for s in t.sessions if s.ended == "interrupted")
    rows = [("run", view.run_id), ("state", view.state or "?"), ("job", view.job.get("kind", "?")),
            ("target", view.job.get("target", "?")), ("started", iso_utc(view.started_ms)),
            ("last record", f"#{view.last_seq} at {iso_utc(view.last_activity_ms)}"),
            ("duration", _duration(view.last_activity_ms - view.started_ms)),
            ("coordinator sessions", f"{len(t.sessions)} ({crashes} ended in a crash)"),
            ("workers", f"{len(t.lanes)}; {sum(1 for k in t.markers if k.kind == 'worker.exited')} exit(s) during the run, "
                        f"{sum(1 for k in t.markers if k.kind == 'lease.expired')} lease(s) expired"),
            ("model spend", f"{int(m['calls'])} calls, {int(m['input_tokens'])} tokens in, "
                            f"{int(m['output_tokens'])} out, ${m['cost_usd']:.4f}")]
    if scan is not None:
        rows.append(("report", f"{'complete' if scan.complete else 'partial'}: {len(scan.findings)} finding(s), "
                               f"{scan.dismissed} candidate verdict(s) dismissed"))
    body = "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in rows)
    banner = ""
    if view.halt is not None:
        banner = (f'<p class="banner halted">HALTED at {_e(iso_utc(view.halt.get("ts_ms", view.last_activity_ms)))}: '
                  f'{_e(view.halt.get("reason", "?"))}</p>')
    elif scan is not None and scan.halt_reason:
        banner = f'<p class="banner halted">{_e(scan.halt_reason)}</p>'
    return f'{banner}<dl class="summary">{body}</dl>'


def _legend(sprint_index: dict[str, int]) -> str:
    sprints = "".join(f'<li><span class="swatch sprint-{i % len(_PALETTE)}"></span>{_e(s)}</li>' for s, i in sprint_index.items())
    return (f'<ul class="legend"><li><span class="swatch session"></span>coordinator session</li>'
            '<li><span class="swatch crashed"></span>session that ended in a crash</li>'
            f'{sprints}<li><span class="swatch failed"></span>task failed</li>'
            '<li><span class="swatch open"></span>still held</li><li><span class="line resumed"></span>run resumed</li>'
            '<li><span class="line halted"></span>run halted</li><li><span class="line finished"></span>run finished</li>'
            '<li><span class="sym crash">&#x2715;</span>crash (worker exit, coordinator died)</li>'
            '<li><span class="sym expired">&#x25C6;</span>lease expired</li></ul>')


def _events(t: Timeline) -> str:
    rows = "".join(f'<tr><td class="nowrap">+{_e(_duration(m.ts_ms - t.start_ms))}</td><td class="nowrap">{_e(m.kind)}</td>'
                   f'<td>{_e(m.worker or "coordinator")}</td><td>{_e(m.why)}</td></tr>' for m in t.markers)
    return ('<table class="events"><thead><tr><th>when</th><th>event</th><th>lane</th><th>recorded reason</th></tr>'
            f'</thead><tbody>{rows}</tbody></table>')


def _sprints(view: RunView) -> str:
    rows = []
    for s in view.sprints.values():
        done, total = view.sprint_progress(s.id)
        failed = sum(1 for task in s.tasks if view.tasks[task].status == "failed")
        pct = 100 if (s.status == "completed" and not total) else (100 * done // total if total else 0)
        rows.append(f'<tr><td>{_e(s.id)}</td><td class="status-{_e(s.status)}">{_e(s.status)}</td>'
                    f'<td>{done}/{total}' + (f" ({failed} failed)" if failed else "") +
                    f'</td><td class="bar"><progress max="100" value="{pct}">{pct}%</progress></td></tr>')
    return ('<table class="sprints"><thead><tr><th>sprint</th><th>status</th><th>tasks</th><th>progress</th>'
            f'</tr></thead><tbody>{"".join(rows)}</tbody></table>')


def _findings(scan: ScanReport) -> str:
    if not scan.findings:
        return '<p class="empty">No finding survived revalidation.</p>'
    rank = {s: i for i, s in enumerate(SEVERITIES)}
    rows = []
    for f in sorted(scan.findings, key=lambda f: (rank.get(f.severity, 9), f.candidate.path, f.candidate.line)):
        c, inv, rev = f.candidate, f.investigation, f.revalidation
        severity = f.severity if f.severity in rank else "unknown"
        number = finding_cwe(f)  # the CWE, verdict and severity findings.json, SARIF and Markdown give
        cwe = f"CWE-{number}" if number is not None else "-"
        rows.append(
            f'<tr><td data-key="{rank.get(f.severity, 9)}"><span class="sev sev-{severity}">{_e(f.severity)}</span></td>'
            f'<td class="nowrap" data-key="{number or 0}">{_e(cwe)}</td><td class="loc">{_e(c.path)}:{c.line}</td>'
            f'<td>{_e(c.rule_id)} {_e(c.rule_name)}</td>'
            f'<td class="why">{_e(inv.rationale)}<div class="sub">triage: {_e(f.severity_reason)}</div></td>'
            f'<td class="why"><b>{_e(finding_verdict(f))}</b> ({rev.confidence}/10)<div class="sub">{_e(rev.rationale)}</div></td></tr>')
    return ('<table class="findings sortable"><thead><tr><th>severity</th><th>CWE</th><th>location</th><th>rule</th>'
            '<th>rationale</th><th>revalidation</th></tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table>')


def _skipped(scan: ScanReport) -> str:
    skipped = [f for f in scan.files if f.status == "skipped"]
    if not skipped:
        return '<p class="empty">No file was skipped.</p>'
    rows = "".join(f'<tr><td class="loc">{_e(f.path)}</td><td>{_e(f.reason or "?")}</td></tr>' for f in skipped)
    return f'<table class="skipped sortable"><thead><tr><th>file</th><th>reason</th></tr></thead><tbody>{rows}</tbody></table>'


_SCRIPT = """
document.querySelectorAll("table.sortable th").forEach(function (th) {
  th.addEventListener("click", function () {
    var column = th.cellIndex, body = th.closest("table").tBodies[0];
    var dir = th.dataset.dir === "asc" ? -1 : 1;
    th.dataset.dir = dir === 1 ? "asc" : "desc";
    var key = function (row) { var c = row.cells[column]; return c.dataset.key || c.textContent; };
    Array.from(body.rows).sort(function (a, b) {
      return dir * key(a).localeCompare(key(b), undefined, {numeric: true});
    }).forEach(function (row) { body.appendChild(row); });
  });
});
"""

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"DejaVu Sans",sans-serif;margin:24px auto;max-width:1200px;padding:0 16px;color:#1d2330;background:#fff}
h1{font-size:22px;margin:0 0 8px}h3{font-size:14px;margin:16px 0 6px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #d8dce4;padding-bottom:4px}
dl.summary{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px;margin:8px 0}dt{color:#5a6375}dd{margin:0;word-break:break-all}
.banner{padding:8px 12px;border-radius:4px}.banner.halted{background:#fdecea;border:1px solid #e0645c;color:#8c1d18}
table{border-collapse:collapse;width:100%}th,td{text-align:left;vertical-align:top;padding:4px 8px;border-bottom:1px solid #e6e8ee}
th{background:#f3f5f9}table.sortable th{cursor:pointer}.loc{font-family:"DejaVu Sans Mono",monospace;word-break:break-all}
.why{max-width:420px}.nowrap{white-space:nowrap}.loc{min-width:16ch}.sub{color:#5a6375;font-size:12px;margin-top:2px}.empty{color:#5a6375}
.sev{display:inline-block;padding:0 6px;border-radius:3px;color:#fff;font-weight:600}
.sev-critical{background:#8c1d18}.sev-high{background:#d0421b}.sev-medium{background:#c98a00}.sev-low{background:#3d7ab8}.sev-info,.sev-unknown{background:#6b7280}
.sprints td.bar{width:45%}progress{width:100%}.status-completed{color:#1a7f37}.status-in_progress{color:#9a6700}
svg{display:block;border:1px solid #d8dce4;border-radius:4px;background:#fcfcfd}
.lane{fill:#eef1f6}.lane-label{font:12px sans-serif;text-anchor:end;fill:#1d2330}.axis{font:11px sans-serif;text-anchor:middle;fill:#5a6375}
.tick{stroke:#dde1e8;stroke-width:1}.seg-label{font:11px sans-serif;fill:#fff;pointer-events:none}
.session{fill:#7b8494}.session.ended-interrupted{fill:#b4534b}
.end-failed rect{stroke:#c0211a;stroke-width:2}.end-expired rect{opacity:.55}.end-open rect{stroke:#1d2330;stroke-dasharray:4 2}
.mark line{stroke-width:2}.mark-started line{stroke:#5a6375}.mark-resumed line{stroke:#2f6fb3;stroke-dasharray:5 3}
.mark-halted line{stroke:#c0211a}.mark-finished line{stroke:#1a7f37}
.mark-crash{stroke:#c0211a;stroke-width:3;fill:none}.mark-expired{fill:#e08a00;stroke:#fff}
ul.legend{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:4px 18px;font-size:12px;color:#39404f}
.swatch{display:inline-block;width:14px;height:10px;margin-right:5px;border-radius:2px}
.swatch.session{background:#7b8494}.swatch.crashed{background:#b4534b}.swatch.failed{border:2px solid #c0211a}.swatch.open{border:2px dashed #1d2330}
.line{display:inline-block;width:16px;height:0;margin:0 5px 3px 0;border-top:2px solid}.line.resumed{border-color:#2f6fb3;border-top-style:dashed}
.line.halted{border-color:#c0211a}.line.finished{border-color:#1a7f37}.sym{margin-right:5px;font-weight:700}.sym.crash{color:#c0211a}.sym.expired{color:#e08a00}
footer{margin-top:28px;color:#5a6375;font-size:12px}
"""
_PALETTE = ("#2f6fb3", "#7a4fb5", "#1f8a70", "#c27c0e", "#b8447a", "#4d7c0f")
_SPRINT_CSS = "".join(f".sprint-{i}{{fill:{c}}}.swatch.sprint-{i}{{background:{c}}}" for i, c in enumerate(_PALETTE))


def render(view: RunView, timeline: Timeline, scan: ScanReport | None, *, generated_ms: int,
           patches: list[dict[str, Any]] | None = None) -> str:
    """Renders the whole page (pure).

    Args:
        view: The folded run.
        timeline: Its timeline, from the same records.
        scan: The scan report, or None for a job that is not a scan.
        generated_ms: When the page is made (epoch ms UTC), shown in the footer.
        patches: The account of each proposed patch (``patch_account``); a section only for
            a run with a fix sprint.

    Returns:
        The HTML document.
    """
    script_hash = base64.b64encode(hashlib.sha256(_SCRIPT.encode()).digest()).decode()
    csp = (f"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{script_hash}'; "
           "img-src data:; base-uri 'none'; form-action 'none'")
    sprint_index = {s: i for i, s in enumerate(view.sprints)}
    if scan is None:
        findings = skipped = f'<p class="empty">A {_e(view.job.get("kind", "?"))} job has no findings.</p>'
    else:
        findings, skipped = _findings(scan), _skipped(scan)
    n_findings = f" ({len(scan.findings)})" if scan is not None else ""
    n_skipped = f" ({sum(1 for f in scan.files if f.status == 'skipped')})" if scan is not None else ""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>fleetledger run {_e(view.run_id)}</title>"
        f"<style>{_CSS}{_SPRINT_CSS}</style></head><body>"
        f"<h1>fleetledger run {_e(view.run_id)}: {_e(view.state or '?')}</h1>"
        f'<section id="summary">{_summary(view, timeline, scan)}</section>'
        f'<section id="timeline"><h2>Timeline</h2>{_svg(timeline, sprint_index)}{_legend(sprint_index)}'
        f'<h3>Run events</h3>{_events(timeline)}</section>'
        f'<section id="sprints"><h2>Sprint progress</h2>{_sprints(view)}</section>'
        f'<section id="findings"><h2>Findings{n_findings}</h2>{findings}</section>'
        f'<section id="skipped"><h2>Skipped files{n_skipped}</h2>{skipped}</section>'
        + (f'<section id="patches"><h2>Patches ({len(patches)})</h2>{account_html(patches, _e)}</section>'
           if "fix" in view.sprints and patches is not None else "")
        + f"<footer>Made by fleetledger {_e(__version__)} at {_e(iso_utc(generated_ms))} from ledger record "
        f"#{view.last_seq} (hash {_e(view.last_hash[:16])}); a view of the ledger, not a statement of what is allowed."
        f"</footer><script>{_SCRIPT}</script></body></html>\n")


def write_report(workspace: Workspace, out: Path | None = None) -> Path:
    """Writes the HTML report of the workspace's current run (the ledger is only read).

    Args:
        workspace: The workspace.
        out: Where to write; default ``<workspace>/report.html``.

    Returns:
        The path written.

    Raises:
        NoRunError: the workspace holds no ledger or no run.
        FleetledgerError: the file cannot be written (the message says why).
    """
    if not workspace.exists():
        raise errors.NoRunError(f"no ledger in {workspace.root}; start a run with `fleetledger scan PATH`")
    with open_storage(workspace.ledger_url) as storage:
        run_id = current_run_id(workspace, storage)
        view, timeline = fold_with_timeline(storage.read(run_id), run_id)
        scan = build_report(RunReader(storage, view), tool_version=__version__) if view.job.get("kind") == "scan" else None
        patches = patch_account(RunReader(storage, view)) if scan is not None and "fix" in view.sprints else None
    page = render(view, timeline, scan, generated_ms=wall_clock_ms(), patches=patches)
    path = out if out is not None else workspace.root / REPORT_FILE
    try:
        fsutil.atomic_write(path, page.encode("utf-8"), fault_prefix="report_html")
    except OSError as exc:
        raise errors.FleetledgerError(f"cannot write the report to {path}: {exc}", path=str(path)) from exc
    return path

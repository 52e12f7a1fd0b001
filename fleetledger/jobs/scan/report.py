"""The scan's results, computed from the run view (never from memory).

Each function reads the recorded step results of one sprint. ``build_report`` assembles the
``ScanReport`` that export writes; status and audit use the same functions.
"""

from __future__ import annotations

from typing import Any

from ...replay import RunView
from .shapes import Candidate, FileReport, Finding, ModelAnswer, ScanReport, survives

def _results(view: RunView, sprint: str) -> list[dict[str, Any]]:
    out = []
    s = view.sprints.get(sprint)
    if s is None:
        return out
    for task_id in s.tasks:
        for key in view.steps_by_task.get(task_id, ()):
            out.append(view.steps[key]["result"])
    return out


def planned_files(view: RunView) -> dict[str, dict[str, Any]]:
    """Returns ``{path: planned file}`` of every detect task, in plan order."""
    out: dict[str, dict[str, Any]] = {}
    s = view.sprints.get("detect")
    for task_id in s.tasks if s else ():
        for f in view.tasks[task_id].inputs.get("files", ()):
            out[f["path"]] = f
    return out


def file_reports(view: RunView) -> dict[str, FileReport]:
    """Returns what detect recorded per file, by path. A planned file without a result is
    reported as skipped, with the failure recorded for it (never silently dropped)."""
    recorded = {r["path"]: FileReport.from_json(r) for r in _results(view, "detect") if "path" in r}
    out: dict[str, FileReport] = {}
    for path, f in planned_files(view).items():
        if path in recorded:
            out[path] = recorded[path]
            continue
        failures = [msg for key, msgs in view.step_failures.items() if key.split("/", 1)[-1].startswith(f"detect:{path}@") for msg in msgs]
        denials = [d["rule"] for d in view.denials if d.get("step") == f"detect:{path}"]
        if denials:
            reason = f"denied by policy: {denials[-1]}"
        elif failures:
            reason = f"internal error: {failures[-1]}"
        else:
            reason = "not scanned (the run stopped before this file)"
        out[path] = FileReport(path=path, sha256=f.get("sha256", ""), size_bytes=f.get("size_bytes", 0),
                               status="skipped", reason=reason)
    return out


def candidates(view: RunView) -> list[Candidate]:
    """Returns every candidate detect recorded, deduplicated by id, sorted by location."""
    seen: dict[str, Candidate] = {}
    for report in file_reports(view).values():
        for c in report.candidates:
            seen.setdefault(c.id, c)
    return sorted(seen.values(), key=lambda c: (c.path, c.line, c.col, c.rule_id, c.id))


def answers(view: RunView, pass_name: str) -> dict[str, ModelAnswer]:
    """Returns ``{candidate id: answer}`` recorded by the ``investigate`` or ``revalidate`` sprint."""
    return {r["candidate"]: ModelAnswer.from_json(r["answer"]) for r in _results(view, pass_name)}


def severities(view: RunView) -> dict[str, tuple[str, str]]:
    """Returns ``{candidate id: (severity, reason)}`` recorded by triage."""
    return {r["candidate"]: (r["severity"], r["reason"]) for r in _results(view, "triage")}


def build_report(view: RunView, *, tool_version: str) -> ScanReport:
    """Assembles the scan report from the view (read-only).

    The report is complete when every sprint before export completed and no task failed; a
    halted run gives a partial report with its halt reason.
    """
    first = answers(view, "investigate")
    second = answers(view, "revalidate")
    triaged = severities(view)
    findings = []
    by_id = {c.id: c for c in candidates(view)}
    for cid, answer in second.items():
        if cid in by_id and cid in first and cid in triaged and survives(answer):
            severity, reason = triaged[cid]
            findings.append(Finding(candidate=by_id[cid], investigation=first[cid], severity=severity,
                                    severity_reason=reason, revalidation=answer))
    dismissed = sum(1 for a in first.values() if not survives(a)) + sum(1 for a in second.values() if not survives(a))
    before_export = [s for s in view.sprints.values() if s.id != "export"]
    failed = [t for t in view.tasks.values() if t.status == "failed"]
    complete = all(s.status == "completed" for s in before_export) and not failed
    halt_reason = view.halt.get("reason") if view.halt else None
    if failed and not halt_reason:
        halt_reason = f"{len(failed)} task(s) failed: " + "; ".join(f"{t.id}: {t.errors[-1] if t.errors else '?'}" for t in failed[:3])
    return ScanReport(run_id=view.run_id, target=view.job.get("target", ""), findings=tuple(findings),
                      files=tuple(file_reports(view).values()), complete=complete, halt_reason=halt_reason,
                      dismissed=dismissed, tool_version=tool_version,
                      started_utc=_iso(view.started_ms))


def _iso(ms: int) -> str:
    from ...ledger.records import iso_utc

    return iso_utc(ms).split(".")[0] + "Z"

"""The scan's results, computed from the ledger (never from memory).

Each function reads the recorded step results of one sprint's tasks through a ``RunReader``
(the run view says which tasks a sprint has; their inputs and results are read from the
ledger). ``build_report`` assembles the ``ScanReport`` that export writes; status and audit use
the same functions.
"""

from __future__ import annotations

import dataclasses
import json

from collections.abc import Iterator
from typing import Any

from ...analysis.facts import CHANNEL_RANK
from ...reader import RunReader
from ..base import task_name
from .exclusions import DENIED, exclusions
from .retry import may_retry
from .shapes import Candidate, FileReport, Finding, Gap, ModelAnswer, ScanReport, survives


def _tasks(run: RunReader, sprint: str) -> list[str]:
    s = run.view.sprints.get(sprint)
    return list(s.tasks) if s is not None else []


def _results(run: RunReader, sprint: str) -> Iterator[dict[str, Any]]:
    return run.results(_tasks(run, sprint))


def planned_files(run: RunReader) -> dict[str, dict[str, Any]]:
    """Returns ``{path: planned file}`` of every detect task, in plan order (read-only; kept
    by the reader while the detect sprint has the same tasks, whose plans never change)."""
    tasks = _tasks(run, "detect")

    def read() -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for spec in run.planned(tasks):
            for f in spec.inputs.get("files", ()):
                out[f["path"]] = f
        return out

    return run.memo("scan.planned_files", tuple(tasks), read)


def planned_templates(run: RunReader) -> dict[str, str] | None:
    """Returns ``{path: sha256}`` of the template files the run planned (the files besides its
    source files that the taint engine may read, recorded with the brief task), or None for a
    run planned before they were recorded."""
    for spec in reversed(run.planned([t for t in _tasks(run, "detect") if task_name(t) == "brief"])):
        templates = spec.inputs.get("templates")
        if isinstance(templates, dict):
            return {str(path): str(sha) for path, sha in templates.items()}
    return None


def file_reports(run: RunReader) -> dict[str, FileReport]:
    """Returns what detect recorded per file, by path. A planned file without a result is
    reported as skipped, with the failure recorded for it (never silently dropped).

    Read-only; kept by the reader while no detect task changed: its status, assignments
    (which record the denials of its steps) and step counts (``RunReader.memo``)."""
    return run.memo("scan.file_reports", _signature(run, "detect"), lambda: _file_reports(run))


def _signature(run: RunReader, sprint: str) -> tuple[tuple[str, str, int, int, int], ...]:
    """What changes whenever the records a sprint's results are read from may have: each task
    with its status, assignments (which record the denials of its steps) and step counts."""
    tasks = run.view.tasks
    return tuple((t, tasks[t].status, tasks[t].attempts, tasks[t].steps_done, tasks[t].steps_failed)
                 for t in _tasks(run, sprint))


def _file_reports(run: RunReader) -> dict[str, FileReport]:
    recorded = {r["path"]: FileReport.from_json(r) for r in _results(run, "detect") if "path" in r}
    planned = planned_files(run)
    failures: dict[str, str] = {}
    denials: dict[str, str] = {}
    if any(path not in recorded for path in planned):
        detect = _tasks(run, "detect")
        for r in run.step_failures(detect):  # the last failure of each step, by its name
            failures[(r.key or "").split("/", 1)[-1].rsplit("@", 1)[0]] = r.why
        for r in run.denials(detect):
            payload = r.payload
            if payload.get("step"):
                denials[payload["step"]] = payload.get("rule", r.why)
    out: dict[str, FileReport] = {}
    for path, f in planned.items():
        if path in recorded:
            out[path] = recorded[path]
            continue
        step = f"detect:{path}"
        if step in denials:
            reason = f"{DENIED}{denials[step]}"
        elif step in failures:
            reason = f"internal error: {failures[step]}"
        else:
            reason = "not scanned (the run stopped before this file)"
        out[path] = FileReport(path=path, sha256=f.get("sha256", ""), size_bytes=f.get("size_bytes", 0),
                               status="skipped", reason=reason)
    return out


def candidates(run: RunReader) -> list[Candidate]:
    """Returns every candidate detect recorded, deduplicated by id, sorted by location
    (read-only; kept by the reader as ``file_reports`` is)."""
    return run.memo("scan.candidates", _signature(run, "detect"), lambda: _unique_candidates(file_reports(run)))


def _unique_candidates(files: dict[str, FileReport]) -> list[Candidate]:
    """One candidate per id. A taint flow into another file is found by the file where its data
    enters as well as by the file of its sink: their traces are merged, the strongest origin
    first (a web request before a command line before a public function's parameter), so the
    result does not depend on which file's report came first."""
    seen: dict[str, Candidate] = {}
    for report in files.values():
        for c in report.candidates:
            old = seen.get(c.id)
            seen[c.id] = c if old is None else _merged(old, c)
    return sorted(seen.values(), key=lambda c: (c.path, c.line, c.col, c.rule_id, c.id))




def _merged(first: Candidate, second: Candidate) -> Candidate:
    traces = [*(first.trace or {}).get("traces", []), *(second.trace or {}).get("traces", [])]
    if not traces:
        return first
    unique = {json.dumps(t, sort_keys=True): t for t in traces}
    ordered = sorted(unique.values(), key=lambda t: (CHANNEL_RANK.get(t["source"]["channel"], 4), len(t["steps"]),
                                                    json.dumps(t, sort_keys=True)))
    # The candidate whose own first trace is the strongest; of equals, the same one whatever
    # the order the reports came in.
    best = min((first, second), key=lambda c: ((c.trace or {}).get("traces", [None])[0] != ordered[0],
                                               json.dumps(c.to_json(), sort_keys=True)))
    also = {json.dumps(a, sort_keys=True): a for a in [*(first.trace or {}).get("also", []),
                                                      *(second.trace or {}).get("also", [])]}
    trace = {**(best.trace or {}), "traces": ordered[:3], "also": sorted(also.values(), key=lambda a: json.dumps(a, sort_keys=True))}
    return dataclasses.replace(best, trace=trace)


def answers(run: RunReader, pass_name: str) -> dict[str, ModelAnswer]:
    """Returns ``{candidate id: answer}`` recorded by the ``investigate`` or ``revalidate`` sprint
    (read-only; kept by the reader while the sprint's tasks are unchanged)."""
    return run.memo(f"scan.answers.{pass_name}", _signature(run, pass_name),
                    lambda: {r["candidate"]: ModelAnswer.from_json(r["answer"]) for r in _results(run, pass_name)})


def severities(run: RunReader) -> dict[str, tuple[str, str]]:
    """Returns ``{candidate id: (severity, reason)}`` recorded by triage."""
    return {r["candidate"]: (r["severity"], r["reason"]) for r in _results(run, "triage")}


def fixes(run: RunReader) -> dict[str, dict[str, Any]]:
    """Returns ``{finding id: {"proposal", "validation", "worker"}}`` recorded by the fix sprint
    (``Finding.fix``; ``validation`` None until its check step is recorded; read-only)."""
    tasks = _tasks(run, "fix")
    if not tasks:
        return {}

    def read() -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        holders: dict[tuple[str | None, int | None], str] = {}
        for r in run.history(tasks):
            if r.kind == "task.assigned":
                holders[(r.task, r.epoch)] = r.payload.get("worker", "?")
            if r.kind != "step.done":
                continue
            name, result = r.payload.get("name", ""), r.payload.get("result") or {}
            if name.startswith(("fix:", "fix-model:")):  # a model's proposal comes after the rules found none
                worker = r.actor if r.actor != "coordinator" else holders.get((r.task, r.epoch), "coordinator")
                out[result["finding"]] = {"proposal": result, "validation": None, "worker": worker}
            elif name.startswith("fix-check:") and result.get("finding") in out:
                out[result["finding"]]["validation"] = {k: v for k, v in result.items() if k != "finding"}
        return out

    return run.memo("scan.fixes", _signature(run, "fix"), read)


def step_failures(run: RunReader, sprint: str) -> dict[str, tuple[int, dict[str, Any], str]]:
    """Returns, per step name of the sprint's tasks (every round), ``(failures, last step.failed
    payload, its why)``: the count is over every session, read from the ledger."""
    out: dict[str, tuple[int, dict[str, Any], str]] = {}
    for r in run.step_failures(_tasks(run, sprint)):
        name = r.payload.get("name") or (r.key or "").split("/", 1)[-1].rsplit("@", 1)[0]
        out[name] = (out.get(name, (0, {}, ""))[0] + 1, r.payload, r.why)
    return out


def planned_items(run: RunReader, sprint: str) -> set[str]:
    """Returns the ids of the candidates the sprint's tasks (every round) were planned with."""
    return {it["candidate"]["id"] for spec in run.planned(_tasks(run, sprint)) for it in spec.inputs.get("items", ())}


def retryable(run: RunReader, sprint: str, done: set[str]) -> list[str]:
    """Returns the ids of the sprint's candidates without a result (``done``: those with one)
    whose step failed for a kind that may clear, under the bound of ``retry.may_retry``
    (read-only)."""
    failed = step_failures(run, sprint)
    out = []
    for cid in sorted(planned_items(run, sprint) - done):
        count, payload, _ = failed.get(f"{sprint}:{cid}", (0, {}, ""))
        if count and may_retry(count, payload.get("error"), payload.get("code")):
            out.append(cid)
    return out


def gaps(run: RunReader, by_id: dict[str, Candidate], first: dict[str, ModelAnswer],
         triaged: dict[str, tuple[str, str]], second: dict[str, ModelAnswer]) -> list[Gap]:
    """Returns every candidate not judged to the end, with the step that was not done and why
    (read-only): never silently dropped."""
    view = run.view
    stopped = (f"the run stopped before this step ({view.halt.get('reason')})" if view.halt
               else "the run stopped before this step")
    out: list[Gap] = []
    for stage, wanted, done in (("investigate", set(by_id), first),
                                ("triage", {c for c, a in first.items() if survives(a)}, triaged),
                                ("revalidate", {c for c in triaged if c in first}, second)):
        missing = [cid for cid in wanted if cid in by_id and cid not in done]
        if not missing:
            continue
        failed = step_failures(run, stage)
        denied = {r.payload.get("step"): r.payload.get("rule", r.why) for r in run.denials(_tasks(run, stage))}
        for cid in missing:
            name = f"{stage}:{cid}"
            count, payload, why = failed.get(name, (0, {}, ""))
            if name in denied:
                out.append(Gap(candidate=by_id[cid], stage=stage, reason=f"{DENIED}{denied[name]}"))
            elif count:
                retry = may_retry(count, payload.get("error"), payload.get("code"))
                then = ("the same command tries it again" if retry
                        else "given up: it is not tried again")
                out.append(Gap(candidate=by_id[cid], stage=stage, failures=count, retry=retry,
                               reason=f"{why} (failed {count} time(s); {then})"))
            else:
                out.append(Gap(candidate=by_id[cid], stage=stage, reason=stopped, retry=view.state != "JACKED_OUT"))
    order = {cid: n for n, cid in enumerate(by_id)}
    return sorted(out, key=lambda g: order[g.candidate.id])


def build_report(run: RunReader, *, tool_version: str) -> ScanReport:
    """Assembles the scan report from the ledger (read-only).

    The report is complete when every sprint before export completed, no task failed and every
    candidate was judged to the end; a halted run gives a partial report with its halt reason,
    and every candidate not judged is kept as a ``Gap`` with the reason (``gaps``). Its exclusions are judged against
    the policy of the run's latest session (``RunView.policy``).
    """
    view = run.view
    first = answers(run, "investigate")
    second = answers(run, "revalidate")
    triaged = severities(run)
    files = file_reports(run)
    findings = []
    by_id = {c.id: c for c in candidates(run)}
    fixed = fixes(run)
    for cid, answer in second.items():
        if cid in by_id and cid in first and cid in triaged and survives(answer):
            severity, reason = triaged[cid]
            findings.append(Finding(candidate=by_id[cid], investigation=first[cid], severity=severity,
                                    severity_reason=reason, revalidation=answer, fix=fixed.get(cid)))
    dismissed = sum(1 for a in first.values() if not survives(a)) + sum(1 for a in second.values() if not survives(a))
    before_export = [s for s in view.sprints.values() if s.id != "export"]
    failed = [t for t in view.tasks.values() if t.status == "failed"]
    missing = gaps(run, by_id, first, triaged, second)
    complete = all(s.status == "completed" for s in before_export) and not failed and not missing
    halt_reason = view.halt.get("reason") if view.halt else None
    if missing and not halt_reason:
        halt_reason = f"{len(missing)} candidate(s) not judged to the end (see Coverage in findings.md)"
    if failed and not halt_reason:
        halt_reason = f"{len(failed)} task(s) failed: " + "; ".join(f"{t.id}: {t.errors[-1] if t.errors else '?'}" for t in failed[:3])
    return ScanReport(run_id=view.run_id, target=view.job.get("target", ""), findings=tuple(findings),
                      files=tuple(files.values()), complete=complete, halt_reason=halt_reason,
                      dismissed=dismissed, tool_version=tool_version,
                      started_utc=_iso(view.started_ms),
                      exclusions=exclusions(files.values(), view.policy.get("body", {})), gaps=tuple(missing),
                      code=_code_identities(view.sessions))


def _code_identities(sessions: list[dict[str, Any]]) -> tuple[dict[str, str], ...]:
    """The distinct code identities the run's sessions recorded, in order of first use."""
    seen: list[dict[str, str]] = []
    for session in sessions:
        code = session.get("code")
        if isinstance(code, dict) and code not in seen:
            seen.append(code)
    return tuple(seen)


def _iso(ms: int) -> str:
    from ...ledger.records import iso_utc

    return iso_utc(ms).split(".")[0] + "Z"

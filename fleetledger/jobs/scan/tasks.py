"""The scan's worker side: what a worker process does with each kind of task.

``run_task(ctx)`` dispatches on the task's ``kind`` input: the brief, detect and triage steps
are here, the model passes (investigate, revalidate) in ``investigate``. Every unit of work is a
step (``ctx.step``), so a task that is run again after a crash skips what is already recorded.
These modules run inside the worker process (and its sandbox): they are the only part of the
scan that reads the repository's content (the coordinator only hashes its files, to plan and
to settle tasks whose every result is reused: ``step_inputs``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ... import faults
from ...steps import TaskContext, each, input_hash
from .brief import BRIEF_FILES, brief_holds, derive_brief
from .investigate import judge
from .modules import UNREAD_REASONS
from .shapes import Candidate, FileReport, ModelAnswer
from .step_inputs import current_hashes, detect_holds, detect_step, readable_modules, triage_step
from .triage import triage


def run_task(ctx: TaskContext) -> dict[str, Any]:
    """Runs one scan task; returns the task's summary (``task.finished`` payload).

    Raises:
        ValueError: the task's ``kind`` is unknown (a planning bug).
    """
    kind = ctx.inputs["kind"]
    handler = {"brief": _brief, "detect": _detect, "investigate": judge, "revalidate": judge,
               "triage": _triage, "fix": _fix}.get(kind)
    if handler is None:
        raise ValueError(f"unknown scan task kind {kind!r}")
    return handler(ctx)



def _fix(ctx: TaskContext) -> dict[str, Any]:
    # By name: the fixer is its own part of the scan's code identity (``job.code_parts``), so a
    # changed rewrite library redoes the fix sprint only, not every sprint whose worker imports it.
    import importlib

    return importlib.import_module("fleetledger.jobs.scan.fix_steps").run_fix(ctx)


def _brief(ctx: TaskContext) -> dict[str, Any]:
    root = Path(ctx.context["root"])
    readable = [name for name in BRIEF_FILES if f"brief:{name}" not in ctx.denied]
    ctx.denied_steps.extend(f"brief:{name}" for name in BRIEF_FILES if f"brief:{name}" in ctx.denied)
    # The key holds the Python files' listing; what the brief read besides (README, packaging,
    # the top level) is in the result (``depends``), checked before a recorded brief is reused.
    ctx.step("brief", input_hash("brief", ctx.inputs.get("listing_sha", ""), *readable),
             lambda key: derive_brief(root, readable), why="derive the repository brief",
             still_valid=lambda result: brief_holds(result, root, readable))
    return {"steps": ctx.ran_steps}


def _detect(ctx: TaskContext) -> dict[str, Any]:
    # Imported by the first detect task: bandit and the taint engine take a third of a second
    # to import, which a worker that only derives the brief or judges candidates never needs.
    from .detect import detect_file

    root = Path(ctx.context["root"])
    readable, module_paths, index = readable_modules(ctx.context.get("shas", {}), ctx.context.get("readable", []))
    # A recorded result is reused only for files still at their planned content, as this
    # task's own analysis would find them (one read of each file per task).
    on_disk = current_hashes(root)

    def one(f: dict[str, Any]) -> None:
        def run(key: str) -> dict[str, Any]:
            faults.hit(f"scan.detect:{f['path']}")
            if f.get("link"):
                return FileReport(path=f["path"], sha256="", size_bytes=0, status="skipped",
                                  reason="symbolic link, not followed").to_json()
            if f.get("skip_reason"):  # cut by the walk (too large, too deep...): not read
                return FileReport(path=f["path"], sha256=f["sha256"], size_bytes=f["size_bytes"], status="skipped",
                                  reason=f["skip_reason"]).to_json()
            report = detect_file(root, f["path"], readable=readable)
            if report.status == "skipped" and (report.reason or "").startswith(UNREAD_REASONS):
                return report.to_json()  # not read at all (unreadable, a link...): its own reason, not "changed"
            if report.sha256 != f["sha256"]:
                return FileReport(path=f["path"], sha256=report.sha256, size_bytes=report.size_bytes,
                                  status="skipped",
                                  reason=f"changed during the scan (planned sha256 {f['sha256'][:12]}, "
                                         f"now {report.sha256[:12]}); start a new run with --new").to_json()
            return report.to_json()

        ctx.step(*detect_step(f), run, why=f"detect {f['path']}", outcome=_detect_outcome,
                 still_valid=detect_holds(f, readable, module_paths, index, on_disk))

    each(ctx.inputs["files"], one)
    return {"steps": ctx.ran_steps, "reused": ctx.reused_steps, "failed": len(ctx.failed_steps)}


def _detect_outcome(report: dict[str, Any]) -> str:
    if report["status"] == "skipped":
        return f"skipped: {report['reason']}"
    return f"scanned: {len(report['candidates'])} candidate(s)"


def _triage(ctx: TaskContext) -> dict[str, Any]:
    def one(item: dict[str, Any]) -> None:
        candidate = Candidate.from_json(item["candidate"])
        answer = ModelAnswer.from_json(item["answer"])

        def run(key: str) -> dict[str, Any]:
            severity, reason = triage(candidate, answer)
            return {"candidate": candidate.id, "severity": severity, "reason": reason}

        ctx.step(*triage_step(item), run, outcome=lambda r: f"{r['severity']}: {r['reason']}",
                 why=f"triage {candidate.rule_id} at {candidate.path}:{candidate.line}")

    each(ctx.inputs["items"], one)
    return {"steps": ctx.ran_steps, "failed": len(ctx.failed_steps)}

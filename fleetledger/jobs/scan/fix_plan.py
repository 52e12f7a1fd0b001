"""The fix sprint on the coordinator: what it plans (one item per confirmed finding), which
steps a task may record, what they read, and the recorded proposals a resumed task is handed
back (so its worker validates them without proposing again). The worker's side is
``fix_steps``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...version import __version__
from ..base import TaskSpec
from . import report

if TYPE_CHECKING:
    from ...reader import RunReader

MAX_FIX_CONTEXT = 200
"""Most files copied beside a patched file for its re-scan (those the engine read for it)."""
STEPS = ("fix", "fix-model", "fix-check")


def plan_items(run: "RunReader") -> list[dict[str, Any]]:
    """One item per confirmed finding not yet planned for a fix (read-only): the candidate and
    the files the engine read for its file (copied beside it when the patch is re-scanned)."""
    earlier = report.planned_items(run, "fix") if run.view.sprints["fix"].tasks else set()
    files = report.file_reports(run)
    return [{"candidate": f.candidate.to_json(),
             "context": sorted(p for p in files[f.candidate.path].read if p != f.candidate.path)[:MAX_FIX_CONTEXT]
             if f.candidate.path in files else []}
            for f in report.build_report(run, tool_version=__version__).findings if f.candidate.id not in earlier]


def step_names(task: TaskSpec) -> frozenset[str]:
    """The steps a fix task may record: a proposal and a validation per finding."""
    return frozenset(f"{step}:{it['candidate']['id']}" for it in task.inputs["items"] for step in STEPS)


def step_reads(task: TaskSpec, target: Path) -> dict[str, str]:
    """Each step reads its finding's file."""
    return {f"{step}:{it['candidate']['id']}": str(target / it["candidate"]["path"])
            for it in task.inputs["items"] for step in STEPS}


def context_reads(task: TaskSpec, target: Path) -> dict[str, str]:
    """The neighbouring files a validation copies beside the patched one (the gate decides which)."""
    return {path: str(target / path) for it in task.inputs["items"] for path in it.get("context", ())}


def recorded_proposals(task: TaskSpec, run: "RunReader") -> dict[str, dict[str, Any]]:
    """``{step name: proposal}`` the task's proposal steps (``fix:``, ``fix-model:``) recorded
    (read-only)."""
    return {payload["name"]: payload["result"] for steps in run.step_results([task.id]).values()
            for payload in steps.values() if payload.get("name", "").startswith(("fix:", "fix-model:"))}


def calls_needed(task: TaskSpec, run: "RunReader") -> int:
    """Model calls a fix task may still make with a paid model: one per finding whose model
    proposal is not recorded (a finding a rule fixes makes none; the allowance is an upper bound)."""
    done = sum(1 for name in recorded_proposals(task, run) if name.startswith("fix-model:"))
    return max(0, len(task.inputs["items"]) - done)


def task_context(task: TaskSpec, run: "RunReader") -> dict[str, Any]:
    """What a fix task's worker gets besides the root: the proposals its steps recorded (a
    resumed task validates them without proposing again), and whether the repository's tests
    may run: only when the policy in force (this session's, read afresh) lists ``pytest``."""
    return {"proposals": recorded_proposals(task, run),
            "run_tests": "pytest" in run.view.policy.get("body", {}).get("tools", ())}

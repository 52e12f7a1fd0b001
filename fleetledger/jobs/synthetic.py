"""A synthetic fleet job, for benchmarks and the chaos harness.

``tasks`` tasks of ``steps`` steps each; a step's result is a SHA-256 chain over its inputs
(``work_us`` microseconds of CPU per step on top), so every result is checkable and a step done
twice gives the same answer. The host sprint ``publish`` performs one effect per task through
``effects.perform`` against an outside target (a folder of files standing for a ticket API
that deduplicates by idempotency key), so effects can be counted at the target.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import effects, faults
from ..replay import RunView
from ..steps import TaskContext, input_hash
from .base import Job, JobOutcome, TaskSpec

if TYPE_CHECKING:
    from ..coordinator import HostContext


def step_value(task: str, n: int) -> str:
    """The expected result of step ``n`` of ``task`` (a function of its inputs only)."""
    return hashlib.sha256(f"{task}:{n}".encode()).hexdigest()[:16]


class SyntheticJob(Job):
    """``tasks`` x ``steps`` recorded steps, then one effect per task into ``target``.

    Args:
        name: Job name; runs of the same name, sizes and target are one job.
        tasks: Number of tasks.
        steps: Steps per task.
        work_us: CPU microseconds each step burns (0 for a pure ledger benchmark).
        target: Folder where effects land (``<key>.json`` files); None for no effects.
    """

    kind = "synthetic"
    host_sprints = frozenset({"publish"})
    worker_module = "fleetledger.jobs.synthetic"

    def __init__(self, name: str, *, tasks: int, steps: int, work_us: int = 0, target: Path | None = None) -> None:
        self.name = name
        self.tasks = tasks
        self.steps = steps
        self.work_us = work_us
        self.target = target
        self.sprints = ("work", "publish") if target is not None else ("work",)

    def describe(self) -> dict[str, Any]:
        identity = {"kind": "synthetic", "name": self.name, "tasks": self.tasks, "steps": self.steps,
                    "target": str(self.target) if self.target else None}
        return {"kind": "synthetic", "target": str(self.target or ""), "argv": [], "identity": identity,
                "options": {"work_us": self.work_us}}

    def plan(self, sprint: str, view: RunView) -> list[TaskSpec]:
        if sprint != "work":
            return []
        return [TaskSpec(id=f"t{n:04d}", inputs={"steps": self.steps, "work_us": self.work_us}, why="synthetic work")
                for n in range(self.tasks)]

    def run_host_sprint(self, sprint: str, host: "HostContext") -> None:
        assert self.target is not None
        for task in sorted(host.view.sprints["work"].tasks):
            key = f"publish:{task}"
            effects.perform(host, key, lambda k: publish(self.target, k), kind="ticket",
                            why=f"open the ticket of {task}", reconcile=lambda k: lookup(self.target, k))

    def outcome(self, view: RunView, workspace: str) -> JobOutcome:
        return JobOutcome(summary=f"{len(view.steps)} steps recorded")


def publish(target: Path, key: str) -> dict[str, Any]:
    """The outside effect: creates ticket ``key`` at the target, counting every delivery.

    The target deduplicates by idempotency key (as a ticket API that takes one does), and
    appends one line per delivery to ``deliveries.log`` so a harness counts duplicates at the
    target rather than from the ledger.
    """
    target.mkdir(parents=True, exist_ok=True)
    with open(target / "deliveries.log", "a", encoding="utf-8") as log:
        log.write(key + "\n")
        log.flush()
        os.fsync(log.fileno())
    ticket = target / f"{key.replace(':', '_')}.json"
    if not ticket.exists():
        ticket.write_text(json.dumps({"key": key}), encoding="utf-8")
    return {"ticket": ticket.name}


def lookup(target: Path, key: str) -> dict[str, Any] | None:
    """Reconcile: asks the target whether ticket ``key`` exists; its result if so, else None."""
    ticket = target / f"{key.replace(':', '_')}.json"
    return {"ticket": ticket.name} if ticket.exists() else None


def run_task(ctx: TaskContext) -> dict[str, Any]:
    """Worker side: runs the task's steps (skipping recorded ones)."""
    work_us = ctx.inputs["work_us"]
    for n in range(ctx.inputs["steps"]):
        def compute(key: str, n: int = n) -> dict[str, Any]:
            if work_us:
                end = time.perf_counter() + work_us / 1e6
                while time.perf_counter() < end:
                    pass
            return {"value": step_value(ctx.task, n)}

        ctx.step(f"s{n}", input_hash(ctx.task, n), compute)
        faults.hit("synthetic.after_step")
    return {"steps": ctx.ran_steps}

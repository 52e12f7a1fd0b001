"""A synthetic fleet job, for benchmarks and the chaos harness.

``tasks`` tasks of ``steps`` steps each; a step's result is a SHA-256 chain over its inputs
(``work_us`` microseconds of CPU per step on top), so every result is checkable and a step done
twice gives the same answer. The host sprint ``publish`` performs one effect per task through
``effects.perform`` against an outside target (a folder of files standing for a ticket API
that does not deduplicate, with a lookup to reconcile against), so duplicated effects are
counted at the target.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import effects, faults
from ..steps import StepFailed, TaskContext, input_hash
from .base import Job, JobOutcome, TaskSpec, task_name

if TYPE_CHECKING:
    from ..coordinator import HostContext
    from ..reader import RunReader


def step_value(task: str, n: int) -> str:
    """The expected result of step ``n`` of ``task`` (a function of its inputs only)."""
    return hashlib.sha256(f"{task}:{n}".encode()).hexdigest()[:16]


class SyntheticJob(Job):
    """``tasks`` x ``steps`` recorded steps, then one effect per task into ``target``.

    Args:
        name: Job name; runs of the same name, sizes and target are one job.
        tasks: Number of tasks.
        steps: Steps per task.
        work_us: CPU microseconds each step burns (0 for a pure ledger benchmark); not part
            of the job's identity, so a resume may run the same tasks faster.
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

    def plan(self, sprint: str, run: "RunReader") -> list[TaskSpec]:
        if sprint != "work":
            return []
        return [TaskSpec(id=f"t{n:04d}", inputs={"steps": self.steps}, why="synthetic work")
                for n in range(self.tasks)]

    def task_context(self, task: TaskSpec, run: "RunReader") -> dict[str, Any]:
        return {"work_us": self.work_us}

    def run_host_sprint(self, sprint: str, host: "HostContext") -> None:
        assert self.target is not None
        for task in sorted(host.view.sprints["work"].tasks):
            key = f"publish:{task_name(task)}"  # the same effect after an upgrade planned the task again
            effects.perform(host, key, lambda k: publish(self.target, k), kind="ticket",
                            why=f"open the ticket of {task}", reconcile=lambda k: lookup(self.target, k))

    def outcome(self, run: "RunReader", workspace: str) -> JobOutcome:
        return JobOutcome(summary=f"{run.view.steps_done} steps recorded")


def _safe(key: str) -> str:
    return key.replace(":", "_").replace("/", "_")


def publish(target: Path, key: str) -> dict[str, Any]:
    """The outside effect: opens a ticket at a target that does NOT deduplicate.

    Each call creates a new ticket file ``<key>.<nonce>.json`` with one atomic rename, so the
    number of files per key is the number of times the effect happened at the target: a
    harness counts duplicates there, not in our own ledger.
    """
    target.mkdir(parents=True, exist_ok=True)
    nonce = os.urandom(6).hex()
    tmp = target / f".{_safe(key)}.{nonce}.tmp"
    tmp.write_text(json.dumps({"key": key, "nonce": nonce}), encoding="utf-8")
    ticket = target / f"{_safe(key)}.{nonce}.json"
    os.replace(tmp, ticket)
    return {"ticket": ticket.name}


def lookup(target: Path, key: str) -> dict[str, Any] | None:
    """Reconcile: asks the target whether a ticket for ``key`` exists; its result if so, else None."""
    found = sorted(target.glob(f"{_safe(key)}.*.json")) if target.is_dir() else []
    return {"ticket": found[0].name} if found else None


def deliveries(target: Path) -> dict[str, int]:
    """Counts tickets per effect key at the target (a key counted twice is a duplicated effect)."""
    counts: dict[str, int] = {}
    for ticket in target.glob("*.json") if target.is_dir() else ():
        key = json.loads(ticket.read_text(encoding="utf-8"))["key"]
        counts[key] = counts.get(key, 0) + 1
    return counts


def run_task(ctx: TaskContext) -> dict[str, Any]:
    """Worker side: runs the task's steps (skipping recorded ones)."""
    work_us = ctx.context.get("work_us", 0)
    for n in range(ctx.inputs["steps"]):
        def compute(key: str, n: int = n) -> dict[str, Any]:
            faults.hit("synthetic.in_step")
            if work_us:
                end = time.perf_counter() + work_us / 1e6
                while time.perf_counter() < end:
                    pass
            return {"value": step_value(task_name(ctx.task), n)}

        try:
            ctx.step(f"s{n}", input_hash(task_name(ctx.task), n), compute)
        except StepFailed:
            continue
        faults.hit("synthetic.after_step")
    return {"steps": ctx.ran_steps}


def main(argv: list[str] | None = None) -> int:
    """Runs (or resumes) a synthetic job: ``python -m fleetledger.jobs.synthetic WORKSPACE ...``.

    For benchmarks, tests and the chaos harness; exits with the run's exit code.
    """
    import argparse

    from ..coordinator import Coordinator, RunOptions
    from ..workspace import Workspace

    parser = argparse.ArgumentParser(prog="python -m fleetledger.jobs.synthetic", description=main.__doc__)
    parser.add_argument("workspace")
    parser.add_argument("--name", default="synthetic")
    parser.add_argument("--tasks", type=int, default=4)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--work-us", type=int, default=0)
    parser.add_argument("--target", default=None, help="Folder where effects land (default: no publish sprint).")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--lease-ttl", type=float, default=30.0)
    parser.add_argument("--heartbeat", type=float, default=None)
    parser.add_argument("--ledger-retry", type=float, default=10.0)
    parser.add_argument("--stall-after", type=float, default=1800.0)
    parser.add_argument("--breaker", type=int, default=10)
    parser.add_argument("--checkpoint-every", type=int, default=RunOptions.checkpoint_every)
    parser.add_argument("--sandbox", default=os.environ.get("FLEETLEDGER_SANDBOX", "bubblewrap"))
    parser.add_argument("--upgrade", action="store_true", help="Continue a run recorded under other code (resume --upgrade).")
    args = parser.parse_args(argv)
    job = SyntheticJob(args.name, tasks=args.tasks, steps=args.steps, work_us=args.work_us,
                       target=Path(args.target) if args.target else None)
    options = RunOptions(workers=args.workers, lease_ttl_s=args.lease_ttl, heartbeat_s=args.heartbeat,
                         ledger_retry_s=args.ledger_retry, stall_after_s=args.stall_after, breaker_failures=args.breaker,
                         sandbox=args.sandbox, checkpoint_every=args.checkpoint_every, upgrade=args.upgrade)
    from ..errors import FleetledgerError

    try:
        result = Coordinator(job, Workspace.at(args.workspace), options).run()
    except FleetledgerError as exc:  # as the CLI does: a message and the error's exit code, no traceback
        print(f"fleetledger: {exc}", file=sys.stderr)
        return exc.exit_code
    print(result.message)
    return result.exit_code


if __name__ == "__main__":
    raise SystemExit(main())

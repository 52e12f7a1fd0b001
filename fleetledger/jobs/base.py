"""What a job must provide to run on the coordinator.

A job splits its work into sprints and tasks (``plan``), says what its tasks need (model calls,
actions the gate must allow), runs the sprints that belong on the host (``run_host_sprint``,
e.g. export), and names the module whose ``run_task(ctx)`` a worker process runs. Planning is a
pure function of the run (its view, and the results recorded in the ledger, read through a
``RunReader``), so a crash during planning plans the same tasks again. A task is handed to the
job's methods as planned (a ``TaskSpec`` read back from its ``task.planned`` record).
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..gate import Action

if TYPE_CHECKING:
    from ..coordinator import HostContext
    from ..reader import RunReader


@dataclass(frozen=True, kw_only=True)
class TaskSpec:
    """A planned task: ``id`` unique in the run, ``inputs`` for the worker, ``why`` for the audit."""

    id: str
    inputs: dict[str, Any]
    why: str = ""


def task_name(task_id: str) -> str:
    """Returns the id a job planned for a task: ``task_id`` without the round suffix
    (``@<seq>``) the coordinator adds when a sprint is planned again under other code
    (``upgrade``). An effect's key names what the effect does in the world, so a job keys its
    effects by this name: a task planned again then finds its effect recorded, and never
    performs it twice."""
    return task_id.split("@", 1)[0]


@dataclass(frozen=True, kw_only=True)
class KnownStep:
    """A step of a task as the worker would key it, for the coordinator to settle from an
    earlier result (``Job.known_steps``).

    Attributes:
        name: The step's name (one of ``Job.step_names``).
        inputs_hash: Its full input hash, as the worker computes it.
        still_valid: Says whether an offered result with the step's reuse key still holds now
            (``TaskContext.step``'s check, run on the coordinator); None: it always does.
    """

    name: str
    inputs_hash: str
    still_valid: Callable[[dict[str, Any]], bool] | None = None


@dataclass(frozen=True, kw_only=True)
class KnownTask:
    """Every step of a task, keyed (``KnownStep``), and the ``task.finished`` payload the
    worker would send when it reused a result for each (``summary``)."""

    steps: tuple[KnownStep, ...]
    summary: dict[str, Any]


@dataclass(frozen=True, kw_only=True)
class JobOutcome:
    """What the job says at the end of a run: a one-line ``summary`` and the output paths;
    ``nothing_to_do`` says why the job found nothing to work on (None when it had work), which
    the command line turns into a failure unless asked not to (``--allow-empty``); ``warnings``
    are lines the command line prints on stderr (a report trimmed to fit an upload limit);
    ``new_findings`` counts results new against a baseline, when the job was asked to fail on
    them (``--only-new``), else None."""

    summary: str
    outputs: dict[str, str] = field(default_factory=dict)
    nothing_to_do: str | None = None
    warnings: tuple[str, ...] = ()
    new_findings: int | None = None


class Job(abc.ABC):
    """A job the coordinator can run.

    Attributes:
        kind: Job kind, e.g. ``"scan"``.
        sprints: Sprint ids in order.
        host_sprints: Sprints the coordinator runs itself (no worker tasks).
        worker_module: Module with ``run_task(ctx: TaskContext) -> dict`` for worker processes.
    """

    kind: str
    sprints: tuple[str, ...]
    host_sprints: frozenset[str] = frozenset()
    worker_module: str

    @abc.abstractmethod
    def describe(self) -> dict[str, Any]:
        """Returns the job record of ``run.started``: ``kind``, ``target``, ``argv``,
        ``identity`` (what makes two runs the same job) and ``options``."""

    def code_identity(self) -> dict[str, str]:
        """Returns the identity of the code that decides this job's results (``identity``):
        fleetledger's version and a digest of the job's own package and of the step runtime.
        Jobs whose results depend on more (an analyst, detectors, a model) add those parts."""
        from ..version import __version__
        from ..identity import source_digest

        module = self.worker_module.split(".")
        part = "/".join(module[1:-1]) or "."  # the job's package, e.g. jobs/scan
        if part == "jobs":
            part = f"jobs/{module[-1]}.py"
        return {"fleetledger": __version__, "job": source_digest(part, "jobs/base.py", "steps.py")}

    def sprint_code(self) -> dict[str, frozenset[str]]:
        """Returns, per sprint, the parts of ``code_identity()`` that decide its results, for
        ``resume --upgrade`` (``upgrade``); a sprint left out is decided by every part, which
        is the default: an upgrade plans every begun sprint again."""
        return {}

    @abc.abstractmethod
    def plan(self, sprint: str, run: "RunReader") -> list[TaskSpec]:
        """Plans a sprint's tasks from the run so far (pure, deterministic)."""

    def calls_needed(self, task: TaskSpec, run: "RunReader") -> int:
        """Returns how many model calls the task still needs (0 by default)."""
        return 0

    def actions(self, task: TaskSpec) -> list[Action]:
        """Returns the actions the gate must allow before the task may be assigned."""
        return []

    def step_names(self, task: TaskSpec) -> frozenset[str] | None:
        """Returns the names of the steps the task may run (its workers' step and model-call
        records are refused for any other name), or None for no limit."""
        return None

    def step_reads(self, task: TaskSpec) -> dict[str, str]:
        """Returns ``{step name: absolute path}`` of the files the task's steps read; the gate
        checks each before the task is handed out, and a denied step is skipped."""
        return {}

    def analyses(self, path: str) -> bool:
        """Whether the job analyses the file at ``path`` (relative to ``repository()``), as a
        scan analyses source files: the repository's own ``exclude`` rules may not hide such
        a file unless the user's policy sets ``repository_may_exclude`` (read-only, pure). By
        default: no file."""
        return False

    def repository(self) -> str | None:
        """Returns the untrusted repository the job reads (its rules file may narrow the
        policy), or None."""
        return None

    def join_problems(self, run: "RunReader") -> list[str] | None:
        """Compares what this host would work on with what the run planned, before a
        coordinator that joined a shared run leases any task.

        Returns:
            The differences (each a sentence naming what differs; empty: none), or None when
            nothing is planned yet to compare with. By default: none.
        """
        return []

    reruns_when_changed: bool = False
    """True for a job whose finished run is run again (a new run) when its input
    (``changed_since``), its code or the policy changed since: the scan, whose unchanged results
    are reused and whose only effect is rewriting its reports. False (the default) for a job
    with effects outside the workspace: its finished run stays finished, as a new run would
    perform them again."""

    def changed_since(self, run: "RunReader") -> str | None:
        """Says what changed in the job's input since ``run`` (a finished run of the same
        job) planned its work, in one sentence, or None when nothing did: the same command then
        starts a new run (which reuses the unchanged results, ``fleetledger.reuse``) instead of
        reporting the finished one. By default nothing changes."""
        return None

    def task_context(self, task: TaskSpec, run: "RunReader") -> dict[str, Any]:
        """Returns job data a worker needs besides the task inputs (e.g. the target root)."""
        return {}

    def context_reads(self, task: TaskSpec, run: "RunReader") -> dict[str, str]:
        """Returns ``{key: absolute path}`` of files a task's steps may read besides their own
        (``step_reads``), e.g. the modules an analysis follows imports into. The coordinator
        asks the gate about each and passes the allowed keys to the worker as the context's
        ``"readable"`` list; a denied file is never read. By default: none."""
        return {}

    def read_only_paths(self) -> list[str]:
        """Returns the folders worker processes may read (bound read-only in a sandbox)."""
        return []

    def known_steps(self, tasks: Sequence[tuple[TaskSpec, dict[str, Any]]], run: "RunReader") -> dict[str, KnownTask]:
        """Keys the steps of pending tasks on the coordinator, so that a task whose every step
        has a reusable earlier result is settled there, with no worker (``run.reusing``).

        The keys and checks must be the worker's own (the same functions), and computing them
        must not run or parse the repository's code: the coordinator may hash its files, and
        nothing more. A check may read each file once for the whole call.

        Args:
            tasks: Pending tasks with no step recorded in this run, each with the context the
                worker would get (``task_context`` and the allowed ``readable`` files).
            run: The run.

        Returns:
            ``{task id: KnownTask}`` for the tasks the job can key here; the others go to a
            worker. By default: none.
        """
        return {}

    def run_host_sprint(self, sprint: str, host: "HostContext") -> None:
        """Runs a sprint on the coordinator (for ``host_sprints``)."""
        raise NotImplementedError(sprint)

    def on_halt(self, host: "HostContext") -> None:
        """Called when the run halts, e.g. to write partial outputs (optional)."""

    def retry_sprint(self, run: "RunReader") -> tuple[str, str] | None:
        """Returns ``(sprint, reason)`` when steps that failed for a cause that may clear are to
        be tried again by a later session, from that sprint on; None (the default) when not.
        The coordinator halts instead of finishing while there are, and reopens the sprints on
        the next explicit resume."""
        return None

    @abc.abstractmethod
    def outcome(self, run: "RunReader", workspace: str) -> JobOutcome:
        """Summarises a run for the person at the terminal."""

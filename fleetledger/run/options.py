"""How a run is run and how it ended: ``RunOptions``, ``RunResult``, the exit codes, and the
lease length of a task that already failed."""

from __future__ import annotations

import errno
import time
from dataclasses import dataclass

from .. import errors
from ..account import SessionAccount
from ..jobs.base import JobOutcome


EXIT_OK = 0

EXIT_HALTED = 75

LEDGER_RETRY_S = {False: 10.0, True: 120.0}
"""Default ``RunOptions.ledger_retry_s`` by whether the ledger is shared between hosts."""

SHARED_POLL_S = 0.25
"""Longest wait between two reads of a shared ledger for what the other coordinators appended."""

NO_SPACE = (errno.ENOSPC, errno.EDQUOT)
"""``OSError`` numbers of a full disk (or quota): the run halts (exit 75) and resumes once there is space."""

MAX_FAILED_STARTS = 3
"""Worker processes that die before they start, in a row, before the run halts (a broken install)."""

BROKER_POLL_S = 0.02
"""Longest wait for worker output while host-side model calls are in flight (their answers
arrive on the broker's queue, not on a worker's pipe)."""

def wall_clock_ms() -> int:
    """Returns the current UTC time in epoch milliseconds."""
    return time.time_ns() // 1_000_000


@dataclass(frozen=True, kw_only=True)
class RunOptions:
    """How to run (none of these changes what the run computes).

    Attributes:
        workers: Number of worker processes (logical workers ``w01``...).
        lease_ttl_s: Seconds a lease lasts without a heartbeat.
        heartbeat_s: Seconds between a busy worker's heartbeats (default ``lease_ttl_s / 3``;
            0 switches heartbeats off, for tests of leases that outlive their work).
        model_quota: Model calls the run may make in total, or None for no limit.
        max_task_attempts: Assignments of one task in one session before the run halts (a
            task that keeps failing needs a person; ``resume`` gives it as many again).
        state_interval_s: Least seconds between two writes of the run-state file.
        sandbox: Sandbox backend name for worker processes.
        ledger_retry_s: Seconds a failing ledger read or write is retried before the session
            gives up (default: 10 s on a ledger of its own, whose failures are the disk's;
            120 s on a shared one, where a server restart or a failover takes that long).
        explicit_resume: True when a person asked to continue a HALTED run (``resume``, or
            the same job command again); ``recover`` passes False and leaves HALTED alone.
        new_run: Start a new run even if a run of the same job exists.
        stall_after_s: Seconds without a completed step (while workers are busy and their
            heartbeats keep coming) after which the run halts as stalled: a heartbeat alone
            never counts as progress.
        breaker_failures: Step failures in a row with the same error after which the circuit
            breaker halts the run (a systemic failure, not one bad file).
        checkpoint_every: Records between two ``checkpoint`` records (at least as many as the
            run has tasks, since a checkpoint's size grows with the plan); one more is written
            at the end of each sprint.
        join: Id of a live run in a shared (PostgreSQL) ledger that this coordinator joins, as
            one more host of it, instead of starting or resuming this workspace's run.
        reuse: Offer the workers the results recorded by earlier runs (``fleetledger.reuse``);
            False (``--no-reuse``) recomputes everything.
        cache: A shared result cache folder (``--cache``, ``result_cache``): read for offers,
            filled when a run finishes; None for none.
        upgrade: Continue a run recorded under other code (``resume --upgrade``): keep the
            results of the sprints whose code is unchanged, plan the rest again (``upgrade``).
    """

    workers: int = 4
    lease_ttl_s: float = 30.0
    heartbeat_s: float | None = None
    model_quota: int | None = None
    max_task_attempts: int = 3
    state_interval_s: float = 1.0
    sandbox: str = "bubblewrap"
    ledger_retry_s: float | None = None
    explicit_resume: bool = True
    new_run: bool = False
    stall_after_s: float = 1800.0
    breaker_failures: int = 10
    checkpoint_every: int = 10_000
    join: str | None = None
    upgrade: bool = False
    reuse: bool = True
    cache: str | None = None

    def __post_init__(self) -> None:
        if self.workers < 1:
            raise errors.UsageError(f"--workers must be at least 1, not {self.workers}")
        if self.lease_ttl_s <= 0:
            raise errors.UsageError("--lease-ttl must be positive (seconds)")
        if self.model_quota is not None and self.model_quota < 0:
            raise errors.UsageError("--model-quota must be zero or more")
        if self.checkpoint_every < 1:
            raise errors.UsageError("--checkpoint-every must be at least 1 (records)")


@dataclass(frozen=True, kw_only=True)
class RunResult:
    """How a coordinator session ended.

    Attributes:
        run_id: The run.
        state: RUNNING, HALTED or JACKED_OUT after the session.
        exit_code: 0 finished (or nothing to do), 75 halted.
        message: What to tell the person.
        outcome: The job's summary, when the run finished.
        already_done: True when the run had finished before this session (nothing was done).
        account: What the session resumed, reused, redid and skipped, counted from the ledger
            (None when the ledger could not be read at the end).
    """

    run_id: str
    state: str
    exit_code: int
    message: str
    outcome: JobOutcome | None = None
    already_done: bool = False
    account: SessionAccount | None = None


def lease_ttl_ms(base_ttl_s: float, previous_attempts: int) -> int:
    """Returns the lease TTL of an assignment in ms: the base TTL, doubled for each earlier
    attempt (at most 8x), so work that outlives its lease without heartbeats still finishes
    on a later attempt instead of being taken over forever."""
    return int(base_ttl_s * 1000 * min(8, 2 ** previous_attempts))


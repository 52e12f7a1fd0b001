"""Leases and fencing: which worker holds which task, and which records it may still write.

A task is held under a lease: a worker, an epoch and an expiry. The epoch is a fencing token
(Kleppmann, "How to do distributed locking", 2016): it grows by one with each assignment, every
record a holder writes carries it, and the ledger refuses a record whose epoch is not the
task's current, open lease. A worker paused past its expiry that wakes up after the task was
handed to someone else is therefore refused at the writer, whatever it believes.

The rules here are pure: the storage applies ``check_fence`` inside its append transaction,
and the coordinator uses ``expired`` to decide when to take a lease back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from . import errors

if TYPE_CHECKING:
    from .ledger import records as rec


LEADER_TASK = "@leader"
"""The pseudo-task of a run's leader lease (coordinators on several hosts, one ledger).

The coordinator holding it plans sprints, closes them, runs host sprints (export), writes
checkpoints and finishes the run; the others only lease tasks to their workers. It is taken,
renewed and given up with the same records and fencing rules as a task's lease
(``task.assigned``, ``lease.renewed``, ``lease.expired``/``lease.released``), so the ledger's
append transaction decides between two coordinators claiming it at once. No planned task has
this id (task ids never start with ``@``).
"""


LEASE_END_KINDS: frozenset[str] = frozenset({"lease.expired", "lease.released", "task.finished", "task.failed"})
"""Kinds that end the lease at their epoch; after one, records at that epoch are fenced."""


class LeaseEvent(NamedTuple):
    """The last lease event of a task: ``kind`` is task.assigned, a lease-ending kind or
    task.reopened (whose ``epoch`` is then the task's last assigned epoch, 0 if none)."""

    kind: str
    epoch: int


def lease_event_after(last: LeaseEvent | None, kind: str, epoch: int | None) -> LeaseEvent | None:
    """The task's last lease event once a record of ``kind`` at ``epoch`` is stored after ``last``.

    A record that is no lease event leaves ``last`` as it is; ``task.reopened`` carries no
    epoch and keeps the task's last one (the next assignment is at that epoch + 1).
    """
    if kind == "task.reopened":
        return LeaseEvent(kind, last.epoch if last is not None else 0)
    if epoch is not None and (kind == "task.assigned" or kind in LEASE_END_KINDS):
        return LeaseEvent(kind, epoch)
    return last


def remember_lease_event(known: "dict[tuple[str, str], LeaseEvent | None]", key: tuple[str, str], kind: str,
                         epoch: int | None) -> None:
    """Updates a writer's cache of last lease events (``(run, task)`` -> event) for a stored
    record. A ``task.reopened`` of a task the cache does not hold leaves it out (its epoch is
    the stored last one, which the storage looks up)."""
    if kind == "task.reopened" and key not in known:
        return
    if kind == "task.reopened" or (epoch is not None and (kind == "task.assigned" or kind in LEASE_END_KINDS)):
        known[key] = lease_event_after(known.get(key), kind, epoch)


def check_fence(new: "rec.NewRecord", last: LeaseEvent | None) -> errors.LedgerError | None:
    """Checks a record that carries a task and an epoch against the task's last lease event.

    Rules:
        * ``task.assigned`` at epoch E needs E == previous epoch + 1 (1 for a first assignment)
          and no open lease (a lease ends with lease.expired, task.finished or task.failed);
          a task whose last lease event is ``task.finished`` is never assigned again (only
          after ``task.reopened``): a coordinator that decided from a view older than the
          finish (another host's worker finished it meanwhile) is refused here.
        * any other record at epoch E needs the open lease to be at E.

    Args:
        new: The submitted record (``task`` and ``epoch`` set).
        last: The task's last lease event in the ledger, or None if it was never assigned.

    Returns:
        None when the record may be appended, else the error to refuse it with:
        ``LeaseHeldError`` for an assignment of a held task, ``StaleEpochError`` otherwise.
    """
    assert new.task is not None and new.epoch is not None
    is_open = last is not None and last.kind == "task.assigned"
    if new.kind == "task.assigned":
        expected = (last.epoch if last else 0) + 1
        if is_open:
            return errors.LeaseHeldError(
                f"task {new.task} is still leased at epoch {last.epoch}; record lease.expired first",
                task=new.task, epoch=last.epoch)
        if last is not None and last.kind == "task.finished":
            return errors.StaleEpochError(
                f"assignment of task {new.task} refused: it finished at epoch {last.epoch} (a finished task is "
                "assigned again only after task.reopened)", task=new.task, epoch=new.epoch, current=last.epoch)
        if new.epoch != expected:
            return errors.StaleEpochError(
                f"assignment of task {new.task} at epoch {new.epoch}, expected {expected}",
                task=new.task, epoch=new.epoch, current=expected - 1)
        return None
    if is_open and last.epoch == new.epoch:
        return None
    current = last.epoch if last else 0
    state = "open" if is_open else (last.kind if last else "never assigned")
    return errors.StaleEpochError(
        f"{new.kind} for task {new.task} at epoch {new.epoch} refused: the task's lease is at "
        f"epoch {current} ({state}); the writer was fenced and must stop working on it",
        task=new.task, epoch=new.epoch, current=current)


@dataclass(frozen=True, kw_only=True, slots=True)
class Lease:
    """A held lease as replay sees it.

    Attributes:
        task: Task id.
        worker: Worker id holding it.
        epoch: Fencing token.
        expires_ms: Expiry, epoch ms UTC; renewed by heartbeats.
        renewed_ms: Time of the last assignment or renewal, epoch ms UTC.
        session: Id of the coordinator process that granted it.
        ttl_ms: How long each grant or renewal lasts, ms.
    """

    task: str
    worker: str
    epoch: int
    expires_ms: int
    renewed_ms: int
    session: str
    ttl_ms: int = 30_000


def expired(lease: Lease, now_ms: int) -> bool:
    """True when the lease's expiry has passed at ``now_ms`` (epoch ms)."""
    return now_ms >= lease.expires_ms


def leader_action(leader: Lease | None, *, session: str, now_ms: int, ttl_ms: int) -> str | None:
    """Decides what a coordinator of a shared run does about the run's leader lease now.

    Args:
        leader: The open leader lease (``RunView.leader``), or None.
        session: This coordinator session's id.
        now_ms: Now, epoch ms UTC.
        ttl_ms: The leader lease's time to live, ms; it is renewed after a third of it.

    Returns:
        ``"claim"`` (no leader: take the lease), ``"renew"`` (we lead and a third of the TTL
        has passed), ``"expire"`` (another coordinator leads and its lease ran out: end it, so
        that the next turn claims it), or None (nothing to do). Two coordinators doing the same
        at once is safe: the ledger's fence accepts one of the two records and refuses the other.
    """
    if leader is None:
        return "claim"
    if leader.session == session:
        return "renew" if now_ms - leader.renewed_ms >= ttl_ms / 3 else None
    return "expire" if expired(leader, now_ms) else None

"""``fleetledger verify``: check the ledger's hash chains and invariants (read-only).

Checks, per run unless noted:
    * sequence numbers are contiguous from 1 across the ledger;
    * each record's ``prev_hash`` is the hash of the run's previous record, and its ``hash``
      recomputes from its fields (an edited or removed record breaks the chain);
    * every ``step.done``/``step.failed`` has an earlier ``step.intent`` with its key (but a
      ``step.done`` that reused an earlier run's result, ``reuse``, which is no effect), and
      every ``effect.done`` an earlier ``effect.intent``;
    * no idempotency key is completed twice (at most one record per (kind, key) of
      ``UNIQUE_KINDS``);
    * no record carries a stale lease epoch (the fence rules replayed over the records);
    * every ``checkpoint`` of the current ``CHECKPOINT_FORMAT`` carries exactly the fold of its
      run's records before it: each run is folded from its first record, whatever its
      checkpoints say, and compared at each one (readers never use one of another format);
    * with ``heads``, each run's records against the newest head this user signed (see
      ``heads``): an edited head, a cut tail, a rewritten chain, a removed run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .heads import HeadCheck
from .leases import LeaseEvent, check_fence, lease_event_after
from .ledger.records import (GENESIS_HASH, UNIQUE_KINDS, NewRecord, Record, canonical_json,
                             expected_hash)
from .reader import checkpoint_payload
from .replay import CHECKPOINT_FORMAT, RunView
from .replay_rules import APPROVER

if TYPE_CHECKING:
    from .workspace import Workspace


@dataclass
class VerifyReport:
    """What ``verify`` found: ``problems`` (empty when the ledger is sound), ``notes`` (what
    could not be vouched for, which is not a problem), and counts."""

    records: int = 0
    runs: int = 0
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when no problem was found."""
        return not self.problems


def verify_records(records: Iterable[Record], heads: HeadCheck | None = None) -> VerifyReport:
    """Verifies records of a whole ledger given in sequence order (read-only).

    Args:
        records: Every record of the ledger, in sequence order.
        heads: The runs' signed heads to check the records against (None: the chain only).

    Returns:
        The report; each problem names the record's seq and run.
    """
    report = VerifyReport()
    chain: dict[str, str] = {}
    intents: dict[tuple[str, str], int] = {}
    effects: set[tuple[str, str]] = set()
    unique: dict[tuple[str, str, str], int] = {}
    leases: dict[tuple[str, str], LeaseEvent | None] = {}
    folds = _Folds()
    expected_seq = 1
    for r in records:
        report.records += 1
        problems = report.problems
        if r.seq != expected_seq:
            problems.append(f"seq {r.seq}: expected seq {expected_seq} (records missing or out of order)")
        expected_seq = r.seq + 1
        if r.run_id not in chain:
            report.runs += 1
        prev = chain.get(r.run_id, GENESIS_HASH)
        if r.prev_hash != prev:
            problems.append(f"seq {r.seq} (run {r.run_id}): prev_hash does not match the run's previous record; "
                            "a record was removed or changed")
        if expected_hash(r) != r.hash:
            problems.append(f"seq {r.seq} (run {r.run_id}): hash does not match the record's content; it was edited")
        chain[r.run_id] = r.hash
        if heads is not None:
            heads.see(r.run_id, r.seq, r.hash)
        if r.kind == "step.intent":
            intents[(r.run_id, r.key or "")] = r.seq
        elif r.kind in ("step.done", "step.failed") and (r.run_id, r.key or "") not in intents \
                and not (r.kind == "step.done" and "reused" in r.payload):
            problems.append(f"seq {r.seq} (run {r.run_id}): {r.kind} {r.key!r} has no step.intent before it")
        elif r.kind == "effect.intent":
            effects.add((r.run_id, r.key or ""))
        elif r.kind == "effect.done" and (r.run_id, r.key or "") not in effects:
            problems.append(f"seq {r.seq} (run {r.run_id}): effect.done {r.key!r} has no effect.intent before it")
        elif r.kind == "approval.granted" and r.actor != APPROVER:
            problems.append(f"seq {r.seq} (run {r.run_id}): approval.granted by {r.actor!r}; only `fleetledger approve` "
                            f"({APPROVER!r}) approves, so it approves nothing")
        if r.kind in UNIQUE_KINDS:
            ident = (r.run_id, r.kind, r.key or "")
            if ident in unique:
                problems.append(f"seq {r.seq} (run {r.run_id}): {r.kind} {r.key!r} recorded twice (first at seq {unique[ident]})")
            unique[ident] = r.seq
        if r.task is not None and r.epoch is not None:
            lease_key = (r.run_id, r.task)
            new = NewRecord(run_id=r.run_id, actor=r.actor, kind=r.kind, key=r.key or ("-" if r.kind in UNIQUE_KINDS else None),
                            task=r.task, epoch=r.epoch)
            problem = check_fence(new, leases.get(lease_key))
            if problem is not None:
                problems.append(f"seq {r.seq} (run {r.run_id}): stale epoch: {problem}")
        if r.task is not None:
            leases[(r.run_id, r.task)] = lease_event_after(leases.get((r.run_id, r.task)), r.kind, r.epoch)
        problem = folds.check_and_apply(r)
        if problem is not None:
            problems.append(problem)
    if heads is not None:
        heads.finish(chain)
        report.problems += heads.problems
        report.notes += heads.notes
    return report


class _Folds:
    """Each run folded from its first record, to check its checkpoints against.

    A run whose records do not fold (a record about a task that was never planned, say) is
    not a problem by itself; only a checkpoint that cannot be checked because of it is.
    """

    def __init__(self) -> None:
        self.views: dict[str, RunView] = {}
        self.broken: dict[str, str] = {}

    def check_and_apply(self, r: Record) -> str | None:
        """Checks ``r`` if it is a checkpoint, then folds it; returns the problem found, if any."""
        if r.run_id in self.broken:
            if r.kind != "checkpoint":
                return None
            return (f"seq {r.seq} (run {r.run_id}): checkpoint cannot be checked: the run's records before it "
                    f"do not fold ({self.broken[r.run_id]})")
        view = self.views.setdefault(r.run_id, RunView(run_id=r.run_id))
        problem = None
        if (r.kind == "checkpoint" and r.payload.get("format") == CHECKPOINT_FORMAT
                and canonical_json(checkpoint_payload(view)) != r.payload_json):
            problem = (f"seq {r.seq} (run {r.run_id}): checkpoint does not match the fold of the run's records "
                       "before it; readers that trust it would see another run")
        try:
            view.apply(r)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            self.broken[r.run_id] = f"seq {r.seq}: {type(exc).__name__}: {exc}"
            del self.views[r.run_id]
        return problem


def verify_workspace(workspace: "Workspace", *, warn: Callable[[str], None]) -> VerifyReport:
    """``fleetledger verify``: checks every run of the workspace's ledger (``verify_records``)
    against the heads this user signed last, plus the storage's own integrity check.

    Args:
        workspace: The workspace.
        warn: Called with a warning when the workspace lies in the current folder and was not
            made here (what follows may be a forged history); checking goes on.

    Returns:
        The report (its ``problems`` include the storage's integrity problems).

    Raises:
        NoRunError: the workspace has no ledger.
        LedgerError: the ledger cannot be read.
    """
    from . import errors, runstate
    from .heads import gather
    from .ledger import open_storage
    from .trust import warn_if_not_made_here
    from .workspace import owner_key

    if not workspace.exists():
        raise errors.NoRunError(f"no ledger in {workspace.root}")
    warn_if_not_made_here(workspace, warn)
    with open_storage(workspace.ledger_url) as storage:
        check = HeadCheck(gather(storage.url, runstate.signed_head(workspace.state_path, storage.url)), owner_key())
        report = verify_records(storage.read(), check)
        report.problems.extend(storage.integrity_problems())
    return report

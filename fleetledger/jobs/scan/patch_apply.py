"""``fleetledger patch apply FINDING``: a validated patch written to the working tree, as an
effect: gated by the policy, approved by a person, recorded, idempotent.

Applying a patch changes the user's repository, so it always needs an ``approval.granted``
record for ``patch-apply`` (every patch) or ``patch-apply:<finding>`` (this one), whatever the
policy's ``approval_required`` says, and the policy's ``write`` patterns must allow the file
(the safe default allows only the workspace). The effect's key is the finding's: applying it
again changes nothing (the file already has the patched bytes), and a crash between the
intent and the result is settled by doing it again, which is harmless for the same reason.
A file that is neither the one the patch was made against nor the patched one changed since
the scan: nothing is written.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import secrets
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any

from ... import errors, fsutil
from ...gate import Action, Gate
from ...ledger import Appended, NewRecord, open_storage
from ...policy import Policy
from ...reader import RunReader, load_view
from ...replay import RunView
from ...workspace import Workspace
from .fixes import Proposal
from .fixes.validate import patched_bytes
from .plan import EXCLUDED_DIRS
from .report import fixes

EFFECT_KIND = "patch-apply"


class PatchNotAvailable(errors.FleetledgerError):
    """The run has no validated patch for this finding; see the "Proposed fix" sections of findings.md."""

    exit_code = 2


class FileChangedSinceScan(errors.FleetledgerError):
    """The file is neither the one the patch was made against nor the patched one: it changed since the scan; scan again for a patch of the file as it is."""

    exit_code = 75


class _Host:
    """What ``effects.perform`` needs, over a ledger this process holds the run lock of."""

    def __init__(self, storage: Any, view: RunView, gate: Gate, policy_hash: str, clock: Callable[[], int]) -> None:
        self.storage = storage
        self.view = view
        self.gate = gate
        self._policy_hash = policy_hash
        self._clock = clock

    def now_ms(self) -> int:
        return self._clock()

    def record(self, kind: str, **fields: Any) -> list[Any]:
        record = NewRecord(run_id=self.view.run_id, actor="coordinator", kind=kind, policy_hash=self._policy_hash,
                           **fields)
        outcomes = self.storage.append([record], now_ms=self._clock())
        for outcome in outcomes:
            if isinstance(outcome, Appended):
                self.view.apply(outcome.record)
        return outcomes


def effect_key(finding: str) -> str:
    """The idempotency key (and approval scope) of applying a finding's patch."""
    return f"{EFFECT_KIND}:{finding}"


def apply_patch(workspace: Workspace, finding: str, *, policy: Policy, clock: Callable[[], int]) -> dict[str, Any]:
    """Applies the validated patch of ``finding`` to the scanned tree (``fleetledger patch apply``).

    Args:
        workspace: The workspace of the scan that proposed it (its current run).
        finding: The finding's id (as in findings.md and ``patches/<id>.diff``).
        policy: The user's policy, read afresh (narrowed here by the repository's rules).
        clock: Epoch ms UTC.

    Returns:
        The effect's result: ``file``, ``sha256`` (after), ``changed`` (False when the file
        already had the patch), ``before_sha256``.

    Raises:
        PatchNotAvailable: no validated patch for ``finding`` in the run.
        FileChangedSinceScan: the file changed since the scan (nothing written).
        EffectDenied: the policy does not allow writing the file, or no approval covers it
            (the denial is recorded; ``fleetledger approve --effect patch-apply:FINDING``).
        LedgerDamagedError: a record of the run was edited, or its history contradicts its
            signed head (nothing appended).
        EffectUncertain, RunLockedError, NoRunError: as ``effects.perform`` and the lock.
    """
    from ...effects import EffectDenied, perform
    from ...run.operations import current_run_id, policy_in_force
    from ..registry import job_for_run

    with workspace.lock(f"patch-{secrets.token_hex(2)}"), open_storage(workspace.ledger_url) as storage:
        view = load_view(storage, current_run_id(workspace, storage))
        _refuse_an_edited_run(storage, view, workspace)
        fix = fixes(RunReader(storage, view)).get(finding)
        if fix is None or not fix["proposal"].get("diff") or not (fix.get("validation") or {}).get("ok"):
            why = ("it has none" if fix is None else fix["proposal"]["rationale"] if not fix["proposal"].get("diff")
                   else (fix.get("validation") or {}).get("reason", "its validation was not recorded"))
            raise PatchNotAvailable(f"run {view.run_id} has no validated patch for finding {finding}: {why}")
        job = job_for_run(view, workspace)
        in_force = policy_in_force(policy, job)
        # Writing into the user's tree always needs a person's approval, whatever the policy lists.
        gated = dataclasses.replace(in_force, approval_required=tuple({*in_force.approval_required, EFFECT_KIND}))
        target = Path(job.repository() or view.job.get("target", ""))
        gate = Gate(gated, target=target, workspace=workspace.root, analysed=job.analyses)
        host = _Host(storage, view, gate, in_force.hash, clock)
        proposal = Proposal.from_json(fix["proposal"])
        validation = fix["validation"]
        path = target / proposal.path
        decision = gate.check(Action(kind="write", target=str(path)))
        if not decision.allowed:
            host.record("policy.denied", key=effect_key(finding), why=decision.rule,
                        payload={"action": "write", "target": str(path)})
            raise EffectDenied(f"writing {path} denied: {decision.rule}; allow it in your policy's write list "
                               "(e.g. \"$TARGET/**\") to apply patches", key=effect_key(finding))
        _check_file(path, proposal, validation, target)  # before the intent: a changed file records nothing

        def do(key: str) -> dict[str, Any]:
            data = _check_file(path, proposal, validation, target)
            before = hashlib.sha256(data).hexdigest()
            if before == validation["patched_sha256"]:
                return {"file": proposal.path, "sha256": before, "before_sha256": before, "changed": False}
            after = patched_bytes(proposal, data)
            if hashlib.sha256(after).hexdigest() != validation["patched_sha256"]:
                raise FileChangedSinceScan(f"{path}: the patch gives other bytes than were validated; nothing written")
            mode = os.stat(path).st_mode
            fsutil.atomic_write(path, after, fault_prefix="patch.apply")
            os.chmod(path, mode & 0o7777)
            return {"file": proposal.path, "sha256": hashlib.sha256(after).hexdigest(), "before_sha256": before,
                    "changed": True}

        recorded = view.effects.get(effect_key(finding), {}).get("done")
        if recorded is not None:  # applied before: the file is checked above, nothing is done again
            return {**recorded, "changed": False, "recorded": True}
        try:
            return perform(host, effect_key(finding), do, kind=EFFECT_KIND, idempotent=True,
                           why=f"apply the validated patch for {finding} ({proposal.author}) to {proposal.path}",
                           intent={"finding": finding, "file": proposal.path, "base_sha256": proposal.base_sha256,
                                   "patched_sha256": validation["patched_sha256"], "author": proposal.author})
        except EffectDenied as exc:
            raise EffectDenied(f"applying the patch for {finding} needs your approval: read patches/{finding}.diff, "
                               f"then `fleetledger approve --effect {effect_key(finding)} --reason WHY` ({exc})",
                               key=effect_key(finding)) from exc


def _refuse_an_edited_run(storage: Any, view: RunView, workspace: Workspace) -> None:
    """Refuses a run whose records were edited (a record's hash or its link to the one before
    does not match) or rewritten against its signed head: the patch, its validation and the
    approvals are read from them, so an edited diff would be written to the user's tree.

    Raises:
        LedgerDamagedError: what ``fleetledger verify`` would report as an edited record, or a
            history that contradicts the run's head; nothing is appended.
    """
    from ...heads import refuse_if_contradicted
    from ...ledger.records import GENESIS_HASH, expected_hash

    prev = GENESIS_HASH
    for record in storage.read(view.run_id):
        if record.prev_hash != prev or expected_hash(record) != record.hash:
            raise errors.LedgerDamagedError(
                f"run {view.run_id}: record {record.seq} was edited (its hash or its link does not match); no patch "
                "is applied from an edited history. Nothing was appended; `fleetledger verify` shows what differs")
        prev = record.hash
    refuse_if_contradicted(storage, view.run_id, view.last_seq, workspace.state_path)


def _check_file(path: Path, proposal: Proposal, validation: dict[str, Any], target: Path) -> bytes:
    """The file's bytes when they are the patch's base or its validated result, and the file
    is where the scan found it: inside the scanned tree, through no link. A folder on its way
    replaced by a link since the scan (``pkg -> /elsewhere``), or a path that leaves the tree
    (absolute, ``..``), would make the write land outside the repository, which the policy's
    ``$TARGET/**`` pattern, a plain string match, cannot see.

    Raises:
        FileChangedSinceScan: they are neither (or the file is gone, is a link, is reached
            through a link, or lies outside the scanned tree).
    """
    relative = PurePosixPath(proposal.path)
    if not relative.parts or relative.is_absolute() or ".." in relative.parts:
        raise FileChangedSinceScan(f"{proposal.path!r} is not a path inside the scanned tree; nothing written")
    if EXCLUDED_DIRS.intersection(relative.parts[:-1]):  # never scanned (.git/hooks...): no patch is for it
        raise FileChangedSinceScan(f"{proposal.path!r} lies in a folder the scan never reads; nothing written")
    root = target.resolve()
    if os.path.realpath(path) != str(root.joinpath(*relative.parts)):
        raise FileChangedSinceScan(f"{path} is reached through a link (a folder on its way was replaced since the "
                                   "scan?) or lies outside the scanned tree; nothing written")
    if path.is_symlink() or not path.is_file():
        raise FileChangedSinceScan(f"{path} is no longer a regular file; nothing written")
    data = path.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    if sha not in (proposal.base_sha256, validation["patched_sha256"]):
        raise FileChangedSinceScan(f"{path} changed since the scan (sha256 {sha[:12]}, the patch was made against "
                                   f"{proposal.base_sha256[:12]}); nothing written: scan again for a patch of it as it is")
    return data

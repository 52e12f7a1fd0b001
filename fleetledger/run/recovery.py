"""Recovery: finding the run to continue, checking it may be continued (its signed head, its
code), beginning the session, rebuilding the run-state file and taking back what a dead
predecessor left (leases, failed tasks, steps to try again)."""

from __future__ import annotations

import os
import shlex
import socket
from typing import Any

from .. import errors, faults, heads, identity, runstate, upgrade
from ..gate import Action
from ..ledger import Appended, NewRecord
from ..ledger.records import canonical_json
from ..reader import Loaded, load, load_view
from ..replay import RunView
from ..salvage import unnoted_whole_loss
from ..upgrade import Upgrade
from ..workspace import owner_key
from .host import atomic



class RecoveryMixin:
    """Recovery (mixed into ``Coordinator``, whose state it uses)."""

    def _find_run(self) -> Loaded | None:
        """Returns the latest run of this job, folded from its latest checkpoint, or None."""
        assert self.storage is not None
        identity = self.job.describe()["identity"]
        for first in reversed(self.storage.first_records()):
            if first.kind == "run.started" and first.payload["job"].get("identity") == identity:
                return load(self.storage, first.run_id)
        return None

    def _session_payload(self) -> dict[str, Any]:
        return {"session": {"id": self.session, "pid": os.getpid(), "host": socket.gethostname(), "member": self.member,
                            "code": self.code},
                "policy": {"hash": self.policy.hash, "source": self.policy.source, "body": self.policy.body(),
                           "refused_rules": list(self.policy.refused_rules)},
                "sandbox": self.sandbox.describe(),
                "options": {"workers": self.options.workers, "lease_ttl_s": self.options.lease_ttl_s,
                            "model_quota": self.model_quota}}

    def _begin_session(self, record: NewRecord, *more: NewRecord) -> None:
        """Appends the session's first record (with ``more`` in the same transaction) and notes
        its sequence number."""
        outcome = self.append(atomic([record, *more]))[0]
        if isinstance(outcome, Appended) and self.session_seq is None:
            self.session_seq = outcome.record.seq

    def _whole_loss_note(self) -> list[NewRecord]:
        """The ``decision`` a new run records with its ``run.started`` when the workspace's last
        salvage kept nothing of some run (``salvage.unnoted_whole_loss``): its effects are then
        settled with their target before they are performed.

        Raises:
            LedgerError: the ledger cannot be read.
        """
        assert self.storage is not None
        note = unnoted_whole_loss(self.workspace, self.storage)
        if note is None:
            return []
        lost = ", ".join(note["runs"]) or "of unknown runs"
        return [self.new_record("decision", payload={"salvage": note},
                                why=f"`fleetledger salvage` kept no record of run(s) {lost}: their effects may have "
                                    "happened, so this run settles each effect with its target before performing it")]

    def _check_head(self, view: RunView) -> None:
        """Refuses to go on with a run whose ledger contradicts the head this user signed last
        (``heads``): a cut tail or a rewritten chain would otherwise be resumed, reported as
        whole, and signed again, which would launder the change.

        Raises:
            LedgerTamperedError: the ledger ends before the head, or its record there differs.
        """
        assert self.storage is not None
        problem = heads.contradiction(self.storage, self.ledger_url, view.run_id, view.last_seq, owner_key(),
                                      runstate.signed_head(self.workspace.state_path, self.ledger_url))
        if problem is not None:
            raise errors.LedgerTamperedError(
                f"{problem}; nothing was appended. Run `fleetledger verify --workspace {self.workspace.root}` to see "
                "what differs; `fleetledger salvage` keeps what is left and lets the run continue, or start over "
                "with --new or another --workspace")

    def _latest_other_run(self, mine: RunView | None) -> RunView | None:
        """The workspace's latest run when it is another job's run than ``mine`` (its reports
        are the ones in the workspace), else None; None on a shared ledger, whose runs belong
        to many workspaces."""
        assert self.storage is not None
        if self.shared:
            return None
        starts = [r for r in self.storage.first_records() if r.kind == "run.started"]
        if not starts or (mine is not None and starts[-1].run_id == mine.run_id):
            return None
        return load_view(self.storage, starts[-1].run_id)

    def _check_code(self, view: RunView) -> Upgrade | None:
        """Refuses to continue a run recorded under other code (``identity``): its report
        would mix results of both versions. With ``RunOptions.upgrade`` it decides instead what
        the run keeps and redoes (``upgrade.plan``).

        Returns:
            None when the code is the same (or the run recorded no identity); the ``Upgrade``
            to record when it differs and an upgrade was asked for.

        Raises:
            UsageError: the identity of the run's last session differs from this code's and no
                upgrade was asked for, or one was asked for on a shared ledger while the run is
                not HALTED (another host may be working on it under the old code).
        """
        recorded = _recorded_code(view)
        changed = self._code_changed(view)
        if recorded is None or changed is None:
            return None
        if self.options.upgrade:
            if self.shared and view.state != "HALTED":
                raise errors.UsageError(f"run {view.run_id} may be live on another host of the shared ledger: halt it "
                                        "(`fleetledger halt`), then `fleetledger resume --upgrade` on one host")
            return upgrade.plan(view, recorded, self.code, self.job.sprints, self.job.sprint_code())
        target = view.job.get("target", "TARGET")
        raise errors.UsageError(
            f"run {view.run_id} was recorded under other code than this fleetledger's ({changed}); continuing it "
            "would mix results of both versions in one report, so nothing was run. Choose: continue it under this "
            f"code with `fleetledger resume --workspace {self.workspace.root} --upgrade` (keeps the results whose "
            "code did not change and runs the rest again), start a new run under "
            f"this code with `fleetledger scan {shlex.quote(str(target))} --workspace {self.workspace.root} --new` "
            "(the recorded run stays in the ledger), or finish it with the fleetledger that recorded it "
            f"(version {recorded.get('fleetledger', '?')})")

    def _code_changed(self, view: RunView) -> str | None:
        """What differs between the code identity of the run's last session and this code's
        (``identity.differences``, joined), or None when nothing does or the run recorded none."""
        recorded = _recorded_code(view)
        if recorded is None or recorded == self.code:
            return None
        return "; ".join(identity.differences(recorded, self.code))

    def _policy_changed(self, view: RunView) -> str | None:
        """What differs between the policy of the run's last session and the policy in force
        (the keys whose values differ, the repository's rules applied), or None when nothing
        does or the run recorded no policy hash (read-only)."""
        recorded = view.policy.get("hash") if isinstance(view.policy, dict) else None
        if not recorded or recorded == self.policy.hash:
            return None
        before = view.policy.get("body") if isinstance(view.policy.get("body"), dict) else {}
        now = self.policy.body()
        keys = sorted(k for k in {*before, *now} if canonical_json(before.get(k)) != canonical_json(now.get(k)))
        return f"{', '.join(keys) or 'its content'} (policy {recorded} -> {self.policy.hash})"

    def _upgrade_records(self, decided: Upgrade | None) -> list[NewRecord]:
        """The records of an upgrade (``upgrade``): the decision, then one ``sprint.reopened``
        that supersedes each redone sprint's tasks; [] for none."""
        if decided is None:
            return []
        records = [self.new_record("decision", why=decided.summary(), payload={"upgrade": decided.to_json()})]
        return records + [self.new_record("sprint.reopened", key=s,
                                          payload={"sprint": s, "supersede": True},
                                          why=f"planned again under this code ({', '.join(decided.changed)} changed)")
                          for s in decided.redone]

    def _reconcile_state(self) -> None:
        _, note = runstate.reconcile(self.workspace.state_path, self.view, self.ledger_url, now_ms=self.clock())
        self._state_written_ms = self.clock()
        if note:
            self.append([self.new_record("decision", why=f"run-state file rebuilt: {note}", payload={"state_file": note})])

    def _adopt_orphans(self) -> None:
        """Takes back every lease granted by an earlier coordinator session (it is gone: we hold
        the lock), and reopens tasks that failed for good in an earlier session (a resume is a
        person's decision to try again)."""
        joining = self.options.join is not None
        records = [self.new_record("task.reopened", task=t.id, why=f"retry after resume; it failed: {t.errors[-1] if t.errors else '?'}")
                   for t in self.view.tasks.values() if t.status == "failed" and not joining]
        denied = [t for t in self.view.tasks.values() if not joining and
                  t.status == "finished" and (t.result or {}).get("denied") and self.view.sprints[t.sprint].status != "completed"]
        for t, spec in zip(denied, self.reader().planned(t.id for t in denied)):
            reads = self.job.step_reads(spec)
            allowed = [n for n in t.result["denied"] if self.gate.check(Action(kind="read", target=reads.get(n, ""))).allowed]
            if allowed:
                records.append(self.new_record("task.reopened", task=t.id,
                                               why=f"the policy in force now allows {len(allowed)} step(s) it denied before"))
        # Sessions known dead: every earlier one, or on a shared ledger those of this host and
        # workspace (we hold its lock); other hosts' leases end by their expiry only.
        mine = {s.get("id") for s in self.view.sessions if s.get("member") == self.member}
        leader = [self.view.leader] if self.view.leader is not None else []
        for lease in self.view.leases() + leader:
            if lease.session != self.session and (not self.shared or lease.session in mine):
                records.append(self.new_record(
                    "lease.expired", task=lease.task, epoch=lease.epoch,
                    why=f"holder {lease.worker} belonged to coordinator session {lease.session or '?'}, which is gone",
                    payload={"worker": lease.worker, "cause": "coordinator restarted"}))
        retry = None if joining or self.view.current_sprint() is not None else self.job.retry_sprint(self.reader())
        if retry is not None:  # steps that failed for a cause that may have cleared: a new round of their sprints
            sprints = list(self.view.sprints)
            records += [self.new_record("sprint.reopened", key=s, payload={"sprint": s},
                                        why=f"try again: {retry[1]}" if s == retry[0] else f"after {retry[0]} is tried again")
                        for s in sprints[sprints.index(retry[0]):]]
        if records:
            self.append(records)
            faults.hit("recovery.after_adopt")


def _recorded_code(view: RunView) -> dict[str, str] | None:
    """The code identity of the run's last session that recorded one, or None."""
    return next((s["code"] for s in reversed(view.sessions) if isinstance(s.get("code"), dict)), None)

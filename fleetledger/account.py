"""What one coordinator session did, counted from the ledger: resumed, reused, redone, skipped.

A session begins with its own ``run.started``, ``run.resumed`` or ``run.joined`` record; what
it did is the records after that one. The counts are of step keys (a step is recorded once per
key), so they are exact with respect to the ledger:

* **reused**: steps whose ``step.done`` precedes the session: their results were not computed
  again (the run view's ``steps_done`` at the end, less the steps done in the session);
* **carried over**: steps done in the session by taking a result an earlier run recorded for
  the same inputs, code and policy (``step.done`` with ``reused``, ``fleetledger.reuse``);
* **redone**: steps done in the session whose ``step.intent`` precedes it without a result: an
  earlier session began them and stopped before their result;
* **new**: the other steps done in the session;
* **skipped**: steps the policy in force denied in the session, and steps that failed in the
  session and have no result (each is named in the ledger: ``fleetledger log --kind ...``);
* the leases of a dead session taken back, tasks reopened, model calls made and reused, and the
  tasks left unfinished when the session ended;
* an upgrade (``resume --upgrade``): what it decided, and the step results of the old code it
  set aside (those of the superseded tasks, which are neither reused nor reported).

A pure step whose intent was lost in a crash (it rides in a group commit) counts as new: the
ledger does not know it was begun.
"""

from __future__ import annotations

from dataclasses import dataclass

from .ledger import Storage
from .replay import RunView
from .reuse import reused_from

START_KINDS = ("run.started", "run.resumed", "run.joined")


@dataclass(frozen=True, kw_only=True)
class SessionAccount:
    """What a coordinator session did (see the module's docstring for each count).

    Attributes:
        run_id: The run.
        how: ``started``, ``resumed`` or ``joined``; ``none`` when the session appended nothing
            (the run had finished, or waits HALTED).
        why: The ``why`` of the session's first record (e.g. "resume after a crash").
        start_seq: Sequence number of that record (0 for ``none``).
        reused, redone, new, carried: Step counts.
        denied, failed: Steps skipped: denied by the policy, failed without a result.
        taken_back: Leases of an earlier, dead session taken back.
        reopened: Tasks reopened for another try.
        calls_made, calls_reused: Model calls recorded in the session, and before it.
        unfinished: Tasks not finished when the session ended (planned ones only).
        upgrade: The session's upgrade decision (``Upgrade.summary``), or "".
        set_aside: Step results of superseded tasks (an upgrade planned their sprints again).
    """

    run_id: str
    how: str
    why: str = ""
    start_seq: int = 0
    reused: int = 0
    redone: int = 0
    new: int = 0
    carried: int = 0
    denied: int = 0
    failed: int = 0
    taken_back: int = 0
    reopened: int = 0
    calls_made: int = 0
    calls_reused: int = 0
    unfinished: int = 0
    upgrade: str = ""
    set_aside: int = 0

    def lines(self) -> list[str]:
        """Returns what to tell the person, one sentence a line."""
        if self.how == "none":
            return [f"nothing was resumed, reused or redone: {self.reused} step result(s) were recorded before, "
                    f"and {self.calls_reused} model call(s); this command ran no step"]
        if self.how == "resumed":
            head = (f"this session resumed run {self.run_id} ({self.why}): {self.taken_back} lease(s) of the stopped "
                    f"session taken back, {self.reopened} task(s) reopened")
        else:
            head = f"this session {self.how} run {self.run_id}"
        steps = (f"steps: {self.reused} reused (recorded before this session), {self.redone} redone (begun before "
                 f"this session, never finished), {self.new} new, {self.carried} carried over from earlier runs (same inputs, "
                 f"code and policy); skipped: {self.denied} denied by the policy, "
                 f"{self.failed} failed without a result")
        calls = f"model calls: {self.calls_made} made in this session, {self.calls_reused} reused"
        out = [head, steps, calls]
        if self.upgrade:
            out.insert(1, f"{self.upgrade}; {self.set_aside} step result(s) of the old code set aside")
        if self.unfinished:
            out.append(f"{self.unfinished} task(s) not finished yet: run the same command (or `fleetledger resume`) "
                       "to continue")
        return out


def account_session(storage: Storage, view: RunView, start_seq: int | None) -> SessionAccount:
    """Counts what the session that began at ``start_seq`` did (read-only).

    Args:
        storage: The run's ledger.
        view: The run's view at the end of the session.
        start_seq: The session's ``run.started``/``run.resumed``/``run.joined`` record, or None
            when the session appended none.

    Returns:
        The account.

    Raises:
        LedgerError: the ledger cannot be read.
    """
    unfinished = sum(1 for t in view.tasks.values() if t.status not in ("finished", "superseded"))
    set_aside = sum(t.steps_done for t in view.tasks.values() if t.status == "superseded")
    if start_seq is None:
        return SessionAccount(run_id=view.run_id, how="none", reused=view.steps_done - set_aside,
                              calls_reused=int(view.model["calls"]), unfinished=unfinished)
    start = None
    done: dict[str, str] = {}  # step key -> task
    failed: dict[str, str] = {}  # step key -> task
    denied: set[tuple[str, str]] = set()
    taken_back = reopened = calls = carried = 0
    upgrade = ""
    for r in storage.read(view.run_id, after_seq=start_seq - 1):
        if start is None:
            start = r
            continue
        if r.kind == "step.done" and r.key and r.task:
            if r.key not in done:
                carried += reused_from(r.payload_json) is not None
            done[r.key] = r.task
        elif r.kind == "step.failed" and r.key and r.task:
            failed[r.key] = r.task
        elif r.kind == "policy.denied" and r.task and r.payload.get("step"):
            denied.add((r.task, str(r.payload["step"])))
        elif r.kind == "lease.expired" and r.payload.get("cause") == "coordinator restarted":
            taken_back += 1
        elif r.kind == "task.reopened":
            reopened += 1
        elif r.kind == "model.call":
            calls += 1
        elif r.kind == "decision" and "upgrade" in r.payload:
            upgrade = r.why
    if start is None or start.seq != start_seq or start.kind not in START_KINDS:
        raise ValueError(f"record {start_seq} of run {view.run_id} does not start a session")
    begun = {r.key for r in storage.task_records(view.run_id, sorted(set(done.values())), kind="step.intent")
             if r.seq < start_seq and r.key in done}
    done_names = {(task, key.split("/", 1)[-1].rsplit("@", 1)[0]) for key, task in done.items()}
    earlier_done = {r.key for r in storage.task_records(view.run_id, sorted(set(failed.values())), kind="step.done")
                    if r.seq < start_seq and r.key in failed}
    return SessionAccount(
        run_id=view.run_id, how=start.kind.removeprefix("run."), why=start.why, start_seq=start_seq,
        reused=view.steps_done - set_aside - len(done), redone=len(begun), new=len(done) - len(begun) - carried,
        carried=carried,
        denied=len(denied - done_names), failed=len(set(failed) - set(done) - earlier_done),
        taken_back=taken_back, reopened=reopened, calls_made=calls, calls_reused=int(view.model["calls"]) - calls,
        unfinished=unfinished, upgrade=upgrade, set_aside=set_aside if upgrade else 0)


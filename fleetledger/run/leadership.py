"""Leadership among the hosts of a run on a shared ledger: joining a live run, the leader
lease (taking, renewing, waiting for it), noticing the run ended on another host, and
leaving."""

from __future__ import annotations

import os
import socket
import time

from .. import errors
from ..leases import LEADER_TASK, expired, leader_action
from ..reader import load_view
from .options import EXIT_HALTED, EXIT_OK, SHARED_POLL_S, RunResult



class LeadershipMixin:
    """Leadership among the hosts of a run on a shared ledger (mixed into ``Coordinator``, whose state it uses)."""

    def _join(self, run_id: str) -> RunResult:
        """Joins a live run of a shared ledger as one more coordinator (another host).

        Raises:
            UsageError: the ledger is not shared, the run does not exist, or it is another job.
        """
        assert self.storage is not None
        if not self.shared:
            raise errors.UsageError(f"--join needs the ledger the run is in, shared between hosts: --ledger postgresql://... "
                                    f"(this ledger is {self.ledger_url})")
        view = load_view(self.storage, run_id)
        if view.state is None:
            raise errors.UsageError(f"no run {run_id} in {self.ledger_url}; `fleetledger status` on the run's first host shows its id")
        self.view = view
        resuming = view.state == "HALTED" and self.options.explicit_resume
        if view.state != "RUNNING" and not resuming:
            self._write_state(force=True)
            why = ("it finished; its outputs are in the workspace of the host that exported them" if view.state == "JACKED_OUT"
                   else f"it is HALTED ({view.halt and view.halt.get('reason')}); `fleetledger resume` on one of its "
                        "hosts continues it, then join again")
            return RunResult(run_id=run_id, state=view.state, exit_code=EXIT_OK if view.state == "JACKED_OUT" else EXIT_HALTED,
                             already_done=view.state == "JACKED_OUT", message=f"run {run_id} not joined: {why}")
        mine = {k: v for k, v in self.job.describe()["identity"].items() if k != "target"}
        theirs = {k: v for k, v in view.job.get("identity", {}).items() if k != "target"}
        if mine != theirs:
            raise errors.UsageError(f"run {run_id} is another job ({theirs}); this command would run {mine}: "
                                    "join with the same job and options as its first host")
        if self._check_code(view) is not None:
            raise errors.UsageError("--upgrade is for `fleetledger resume` on the run's own workspace, not for joining")
        self._open_broker()
        payload = {**self._session_payload(), "target": self.job.describe().get("target")}
        if resuming:
            self._begin_session(self.new_record("run.resumed", payload=payload, why=f"explicit resume of a HALTED run "
                                                f"({view.halt and view.halt.get('reason')}) on a host that joined it"))
        self._begin_session(self.new_record("run.joined", payload=payload,
                                            why=f"coordinator on {socket.gethostname()} joins with {self.options.workers} workers"))
        self._reconcile_state()
        self._adopt_orphans()
        return self._drive()

    def _leading(self) -> bool:
        """True when this coordinator plans, closes sprints, exports and finishes: always on
        a ledger of its own, on a shared one while it holds the run's leader lease."""
        if not self.shared:
            return True
        leader = self.view.leader
        return leader is not None and leader.session == self.session and not expired(leader, self.clock())

    def _lead(self) -> None:
        """Folds what the other coordinators appended, then claims, renews or ends the leader
        lease as ``leases.leader_action`` decides (the ledger's fence settles races)."""
        self.catch_up()
        now, ttl_ms = self.clock(), int(self.options.lease_ttl_s * 1000)
        leader = self.view.leader
        action = leader_action(leader, session=self.session, now_ms=now, ttl_ms=ttl_ms)
        if action == "claim":
            self.append([self.new_record(
                "task.assigned", task=LEADER_TASK, epoch=self.view.leader_epoch + 1,
                why=f"coordinator {self.session} on {socket.gethostname()} leads the run: plans, closes sprints, exports",
                payload={"worker": f"coordinator-{self.session}", "pid": os.getpid(), "host": socket.gethostname(),
                         "expires_ms": now + ttl_ms, "ttl_ms": ttl_ms, "session": self.session})])
        elif action == "renew":
            assert leader is not None
            self.append([self.new_record("lease.renewed", task=LEADER_TASK, epoch=leader.epoch,
                                         why="leader heartbeat", payload={"expires_ms": now + ttl_ms})])
        elif action == "expire":
            assert leader is not None
            self.append([self.new_record("lease.expired", task=LEADER_TASK, epoch=leader.epoch,
                                         why=f"leader {leader.worker} silent for {(now - leader.renewed_ms) / 1000:.1f} s",
                                         payload={"worker": leader.worker, "cause": "heartbeat timeout"})])

    def _wait_for_leader(self) -> None:
        """Waits a little for the leader's next move (this host's workers hold no lease then:
        the sprint is not planned yet, or all its tasks ended)."""
        time.sleep(SHARED_POLL_S)
        self._write_state()

    def _ended_elsewhere(self) -> RunResult | None:
        """Returns how this session ends when another coordinator finished or halted the run."""
        if self.view.state == "RUNNING":
            return None
        self._stop_pool()
        self._write_state(force=True)
        if self.view.state == "JACKED_OUT":
            done = self.storage.unique_record(self.view.run_id, "run.finished", self.view.run_id) if self.storage else None
            return RunResult(run_id=self.view.run_id, state="JACKED_OUT", exit_code=EXIT_OK,
                             message=f"run {self.view.run_id} finished on another host: {done.why if done else ''}; "
                                     f"outputs there: {', '.join((done.payload.get('outputs') or {}).values()) if done else '?'}")
        reason = self.view.halt.get("reason") if self.view.halt else "?"
        return RunResult(run_id=self.view.run_id, state="HALTED", exit_code=EXIT_HALTED,
                         message=f"run {self.view.run_id} HALTED on another host: {reason}")

    def _check_content(self) -> None:
        """Refuses to work on a run whose planned files differ from this host's checkout.

        Raises:
            UsageError: they differ (recorded as a ``decision`` first).
        """
        problems = self.job.join_problems(self.reader())
        if problems is None:
            return  # nothing planned to compare with yet
        if problems:
            message = (f"this host's checkout differs from the run's: {'; '.join(problems[:5])}"
                       f"{f' (and {len(problems) - 5} more)' if len(problems) > 5 else ''}; "
                       "check out the same content on every host, then join again")
            self._stop_pool()
            self.append([self.new_record("decision", why=f"refused to work on run {self.view.run_id}: {message}",
                                         payload={"problems": problems[:50]})])
            raise errors.UsageError(message)
        self._content_checked = True

    def _leave(self, reason: str) -> RunResult:
        """Leaves a shared run that goes on elsewhere: this host's leases are handed back
        (before its workers are stopped, which can take seconds, so others take them at once)."""
        records = [self.new_record("lease.released", task=lease.task, epoch=lease.epoch,
                                   why=f"coordinator {self.session} left the run ({reason}); {lease.worker} stopped",
                                   payload={"worker": lease.worker, "cause": "coordinator left"})
                   for lease in self.view.leases() + ([self.view.leader] if self.view.leader else [])
                   if lease.session == self.session]
        records.append(self.new_record("decision", why=f"coordinator {self.session} on {socket.gethostname()} left the run: {reason}"))
        self.append(records)
        self._stop_pool()
        self._write_state(force=True)
        return RunResult(run_id=self.view.run_id, state="RUNNING", exit_code=EXIT_HALTED,
                         message=f"left run {self.view.run_id} ({reason}); it goes on on its other hosts")



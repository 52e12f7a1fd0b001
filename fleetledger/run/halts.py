"""Halts: a signal or a halt request, the circuit breakers, a full disk or a failing ledger,
and recording ``run.halted`` with its reason and the policy in force."""

from __future__ import annotations

import os
import signal
from typing import Any

from .. import errors, fsutil
from ..effects import EffectDenied, EffectUncertain
from ..model_broker import budget_halt
from .host import HostContext
from .options import EXIT_HALTED, NO_SPACE, RunResult



class HaltsMixin:
    """Halts (mixed into ``Coordinator``, whose state it uses)."""

    def _on_signal(self, signum: int, frame: object) -> None:
        name = signal.Signals(signum).name
        request = self.workspace.root / "halt-request"
        reason = f"interrupted by {name}"
        try:
            with os.fdopen(os.open(request, os.O_RDONLY | fsutil.NOFOLLOW), "rb") as handle:
                text = handle.read(4096).decode("utf-8", "replace").strip()
            request.unlink()
            if text:
                reason = text
        except OSError:
            pass
        self._stop_reason = reason

    def _halting(self) -> bool:
        """True once a halt was asked for (a signal, an exhausted quota, a budget, a worker's full disk)."""
        return self._stop_reason is not None or self._model_halt is not None or self._disk_full is not None

    def _pending_halt(self) -> RunResult | None:
        """Halts when a halt was asked for, once no host-side model call is in flight (a call
        on the wire may finish, and its answer is recorded; no new one starts)."""
        if not self._halting():
            return None
        if self.broker is not None and self.broker.busy:
            self.broker.stop()
            return None
        if self._stop_reason is not None and not self._leading():
            return self._leave(self._stop_reason)
        if self._stop_reason is not None:
            return self._halt("interrupted", self._stop_reason)
        if self._disk_full is not None:  # on a shared ledger, only this host's disk: the run goes on elsewhere
            reason = f"{self._disk_full}; free some space, then `fleetledger resume`"
            return self._halt("disk", reason) if self._leading() else self._leave(reason)
        halt = self._model_halt
        assert halt is not None
        if halt.kind == "budget":  # the figures once the calls that were in flight are recorded too
            halt = budget_halt(self.policy, self.view.model) or halt
        return self._halt(halt.kind, halt.reason, extra=halt.extra)

    def _check_breakers(self) -> RunResult | None:
        """Halts a run that goes nowhere: the same error on many steps in a row, or no step
        completed for ``stall_after_s`` while work is leased out."""
        error, streak = self._failure_streak
        if streak >= self.options.breaker_failures:
            return self._halt("breaker", f"circuit breaker: {streak} steps failed in a row with the same error "
                              f"({error}); the last was {self._last_failed_step}; fix the cause, then `fleetledger resume`",
                              extra={"error": error, "step": self._last_failed_step})
        stalled_s = (self.clock() - self._progress_ms) / 1000
        if self.view.leases() and stalled_s > self.options.stall_after_s:
            return self._halt("stalled", f"no step completed for {stalled_s:.0f} s although workers hold leases "
                              f"({', '.join(sorted(l.task for l in self.view.leases()))}); heartbeats alone are not progress")
        return None

    def _halt(self, kind: str, reason: str, *, extra: dict[str, Any] | None = None) -> RunResult:
        # Recorded before the workers are stopped (which can take seconds when one is paused
        # or stuck): from here on the fence refuses what they send, and on a shared ledger the
        # leader lease does not lapse meanwhile.
        mine = [self.view.leader] if self.view.leader is not None and self.view.leader.session == self.session else []
        released = [self.new_record("lease.expired", task=lease.task, epoch=lease.epoch,
                                    why=f"run halting ({kind}); lease of {lease.worker} taken back",
                                    payload={"worker": lease.worker, "cause": "halt"})
                    for lease in self.view.leases() + mine]
        self.append(released + [self.new_record("run.halted", why=reason, payload={"kind": kind, **(extra or {})})])
        self._stop_pool()
        note = ""
        try:
            self.job.on_halt(HostContext(self))
        except (EffectUncertain, EffectDenied) as exc:
            self.append([self.new_record("decision", why=f"partial outputs not written: {exc}")])
        except OSError as exc:  # partial outputs on a full disk: the ledger already says HALTED
            if exc.errno not in NO_SPACE:
                raise
            note += f"; partial outputs not written ({exc})"
        try:
            self._write_state(force=True)
        except OSError as exc:  # the file is replaced atomically: it is left whole, as it was
            if exc.errno not in NO_SPACE:
                raise
            note += (f"; the run-state file or head could not be written ({exc}): the ledger says HALTED and wins at "
                     "the next start")
        return RunResult(run_id=self.view.run_id, state="HALTED", exit_code=EXIT_HALTED,
                         message=f"run {self.view.run_id} HALTED: {reason}{note}")

    def _halt_for_space(self, exc: OSError) -> RunResult:
        """Records HALTED after a workspace file could not be written for want of space.

        A run whose ledger already says HALTED (the append that stored ``run.halted`` then met the
        full disk) is not halted twice.

        Raises:
            OutOfSpaceError: the halt itself cannot be recorded (the ledger's disk is full too);
                the run stays RUNNING in the ledger and in the run-state file.
            OSError: the halt's append failed after its commit for another reason than space.
        """
        self._stop_pool()
        reason = f"the disk is full ({exc}); free some space, then `fleetledger resume`"
        if not self.view.run_id or self.view.state is None:
            raise errors.OutOfSpaceError(f"{reason}; nothing was started") from exc
        if self.view.state == "JACKED_OUT":  # run.finished is recorded: the file is rebuilt at the next start
            raise errors.OutOfSpaceError(f"run {self.view.run_id} finished, but {reason.split(';')[0]}: its run-state "
                                         "file was left as it was and is rebuilt from the ledger at the next start") from exc
        if self.view.state != "HALTED":
            try:
                return self._halt("disk", reason)
            except errors.LedgerError as again:
                raise errors.OutOfSpaceError(
                    f"{reason}; the ledger could not record HALTED either ({again}), so the run stays RUNNING and "
                    "`fleetledger recover` resumes it once there is space") from exc
            except OSError as again:  # raised after its commit: the view (``Coordinator.append``) says if it is stored
                if again.errno not in NO_SPACE or self.view.state != "HALTED":
                    raise
        # HALTED is recorded (by an append whose commit was durable, though it reported the full disk):
        # never a second run.halted; the run-state file is left whole, as it was, and rebuilt at the next start.
        halt = self.view.halt or {}
        return RunResult(run_id=self.view.run_id, state="HALTED", exit_code=EXIT_HALTED,
                         message=f"run {self.view.run_id} HALTED: {halt.get('reason') or reason}; the run-state file "
                                 f"could not be written ({exc})")

    def _halt_after_error(self, exc: errors.LedgerError) -> RunResult:
        """Records HALTED after the ledger failed for longer than the retry window (on a shared
        ledger, leaves the run instead: it goes on on the hosts that reach the ledger).

        Raises:
            LedgerError: the halt itself cannot be recorded (the ledger is still unwritable);
                the run stays RUNNING in the ledger, so `recover` resumes it once it is back. Or
                the failed append had stored ``run.finished``: the run is finished, not halted.
            OutOfSpaceError: as LedgerError, when the ledger's disk is full (exit 75), also when
                the run could not even be started.
        """
        self._stop_pool()
        if not self.view.run_id or self.view.state is None:
            if getattr(exc, "no_space", False):
                raise errors.OutOfSpaceError(f"{exc}; nothing was started: free some space and run the same "
                                             "command again") from exc
            raise exc
        if self.view.state == "JACKED_OUT":  # run.finished was stored although its append failed: never halted after it
            raise errors.LedgerError(f"run {self.view.run_id} finished, but the ledger failed after recording it "
                                     f"({exc}); its run-state file is rebuilt from the ledger at the next start") from exc
        try:
            if self.shared:  # the run goes on on the hosts that reach the ledger (or `recover` here)
                return self._leave(f"the ledger could not be reached for {self.ledger_retry_s:g} s: {exc}")
            return self._halt("ledger", f"the ledger could not be written for {self.ledger_retry_s:g} s: {exc}")
        except errors.LedgerError:
            error = errors.OutOfSpaceError if getattr(exc, "no_space", False) else errors.LedgerError
            raise error(
                f"{exc}; the run could not even be marked HALTED, so it stays RUNNING in the ledger and "
                "`fleetledger recover` resumes it once the ledger is writable again") from exc



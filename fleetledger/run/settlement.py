"""Model-call settlement: the host-side provider and its broker, handing a worker's model
request to the broker within the run's quota and budget, and recording each answer or
failure as the worker's ``model.call`` (or a halt for quota and budget)."""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

from .. import errors
from ..ledger import Appended, NewRecord
from ..model_broker import ModelBroker, Settled, Ticket, budget_halt, call_payload, halt_for, malformed_spend
from ..models import get_provider, parse_spec, request_from_json
from ..models.config import ModelConfig
from ..models.failures import Withheld
from ..pool import WorkerPool, WorkerProc



class SettlementMixin:
    """Model-call settlement (mixed into ``Coordinator``, whose state it uses)."""

    def _open_broker(self) -> None:
        """Makes the host-side provider and its broker when the job's model does not run in
        the workers (keys are read here, in the coordinator's process).

        Raises:
            UsageError: the provider is unknown, its key is not set, or the policy has a cost
                budget and the configuration no price for the model.
        """
        spec = parse_spec(getattr(self.job, "model", "offline"))
        if spec.runs_locally:
            return
        config = self.model_config or ModelConfig.for_workspace(
            self.workspace, [Path(p) for p in self.job.read_only_paths()])
        if self.policy.max_cost_usd is not None and str(spec) not in config.prices:
            raise errors.UsageError(f"the policy's max_cost_usd needs the price of {spec}: add "
                                    f"[prices.\"{spec}\"] to the model configuration ({config.source})")
        self.broker = ModelBroker(get_provider(str(spec), config), retry=config.retry, threads=self.options.workers)

    def _calls_left(self) -> int:
        assert self.model_quota is not None
        in_flight = sum(max(0, self._reserved[t] - self._calls_made.get(t, 0)) for t in self._reserved)
        return max(0, self.model_quota - int(self.view.model["calls"]) - in_flight)

    def _ask_model(self, worker: WorkerProc, message: dict[str, Any]) -> None:
        """Answers a worker's model request: the recorded answer when the step's call is in the
        ledger, a refusal while the run is halting (or a budget is reached), else a call queued
        for the broker (one per step key, however many workers wait for it)."""
        key, task, epoch = message["key"], message["task"], message["epoch"]
        if self.broker is None:
            self._reply(worker, {"op": "model.error", "key": key, "kind": "failed",
                                 "error": "this run's model runs in the workers; the coordinator makes no model calls"})
            return
        assert self.storage is not None
        recorded = self.storage.unique_record(self.view.run_id, "model.call", key)
        if recorded is not None and recorded.payload.get("answer"):
            self._reply(worker, {"op": "model.answer", "key": key, "answer": recorded.payload["answer"], "recorded": True})
            return
        if self._model_halt is None:
            self._model_halt = budget_halt(self.policy, self.view.model)
        if self._halting():
            self._reply(worker, {"op": "model.error", "key": key, "kind": "unavailable", "error": "the run is halting"})
            return
        waiting = self._waiting.setdefault(key, [])
        waiting.append((worker, task, epoch))
        if len(waiting) == 1:
            self._to_submit.append(Ticket(key=key, task=task, epoch=epoch, worker=worker.id,
                                          request=request_from_json(message["request"])))

    def _settle_calls(self, pool: WorkerPool) -> None:
        """Records the calls the broker settled, then answers the workers waiting for them
        (write-ahead: an answer reaches a worker only once it is in the ledger)."""
        assert self.broker is not None
        records: list[NewRecord] = []
        replies: list[tuple[str, dict[str, Any]]] = []
        for settled in self.broker.drain():
            record, reply = self._answered(settled) if settled.result is not None else self._failed(settled)
            records += [record] if record is not None else []
            replies.append((settled.ticket.key, reply))
        for outcome in self.append(records):
            if isinstance(outcome, Appended) and outcome.record.payload.get("answer") and outcome.record.task in self._reserved:
                self._calls_made[outcome.record.task] = self._calls_made.get(outcome.record.task, 0) + 1
        if records and self._model_halt is None:
            self._model_halt = budget_halt(self.policy, self.view.model)
        for key, reply in replies:
            for worker, task, epoch in self._waiting.pop(key, ()):
                if worker.task == (task, epoch):
                    pool.send(worker, reply)

    def _answered(self, settled: Settled) -> tuple[NewRecord, dict[str, Any]]:
        """The ``model.call`` of an answered call, under the step key and the epoch of the lease
        that holds the task now (by the coordinator when no waiting worker holds it: the
        answer is kept for whoever runs the step next), and the worker's reply."""
        assert self.broker is not None and settled.result is not None
        ticket, request = settled.ticket, settled.ticket.request
        lease = self.view.tasks[ticket.task].lease if ticket.task in self.view.tasks else None
        holder = next((w.id for w, _, epoch in self._waiting.get(ticket.key, ()) if lease and lease.epoch == epoch), None)
        record = self.new_record("model.call", key=ticket.key, task=ticket.task, epoch=lease.epoch if lease and holder else None,
                                 actor=holder or "coordinator", payload=call_payload(self.broker.spec, ticket, settled.result),
                                 why=f"{request.pass_name} {request.candidate.rule_id} at {request.candidate.path}:{request.candidate.line}")
        return record, {"op": "model.answer", "key": ticket.key, "answer": settled.result.answer.to_json()}

    def _failed(self, settled: Settled) -> tuple[NewRecord | None, dict[str, Any]]:
        """What a failed call means: a terminal error (an exhausted quota, a refusal) stops new
        calls and halts the run once the calls in flight are settled, and its worker hands the
        task back; any other error fails the step. Tokens billed for malformed answers are
        recorded (a ``model.call`` without an answer)."""
        assert self.broker is not None and settled.error is not None
        ticket, error = settled.ticket, settled.error
        halt = halt_for(error, spec=self.broker.spec, now_ms=self.clock())
        if halt is not None:
            self._model_halt = self._model_halt or halt
            self.broker.stop()
        unavailable = halt is not None or isinstance(error, Withheld)
        reply = {"op": "model.error", "key": ticket.key, "kind": "unavailable" if unavailable else "failed",
                 "error": str(error)[:500], "failure": type(error).__name__, "code": error.facts.get("code")}
        spent = malformed_spend(ticket, error)
        if spent is None:
            return None, reply
        return self.new_record("model.call", key=f"{ticket.key}#malformed-{secrets.token_hex(4)}", task=ticket.task,
                               why=f"spent on malformed answers: {error}"[:500], payload=spent), reply



"""The fold: RunView = fold(records), incremental or from a checkpoint, always the same."""

from __future__ import annotations

import pytest

from fleetledger.ledger import NewRecord, Storage
from fleetledger.reader import RunReader
from fleetledger.replay import RunView, fold

RUN = "scan-1"


def r(kind: str, **fields) -> NewRecord:
    return NewRecord(run_id=RUN, actor=fields.pop("actor", "coordinator"), kind=kind, **fields)


def _history(storage: Storage) -> None:
    storage.append([
        r("run.started", key=RUN, payload={"job": {"kind": "scan", "target": "/x", "argv": []}, "sprints": ["a", "b"]}),
        r("sprint.started", key="a"),
        r("task.planned", key="t1", task="t1", payload={"sprint": "a", "inputs": {"n": 1}}),
        r("task.planned", key="t2", task="t2", payload={"sprint": "a", "inputs": {"n": 2}}),
        r("task.assigned", task="t1", epoch=1, payload={"worker": "w1", "expires_ms": 5_000, "session": "s"}),
        r("task.assigned", task="t2", epoch=1, payload={"worker": "w2", "expires_ms": 5_000, "session": "s"}),
    ], now_ms=1_000)
    storage.append([
        r("step.intent", actor="w1", key="t1/x@1", task="t1", epoch=1, payload={"name": "x"}),
        r("step.done", actor="w1", key="t1/x@1", task="t1", epoch=1, payload={"name": "x", "input_hash": "1", "result": {"v": 1}}),
        r("model.call", actor="w1", key="t1/x@1", task="t1", epoch=1, payload={"input_tokens": 3, "output_tokens": 4, "cost_usd": 0.5}),
        r("lease.renewed", task="t1", epoch=1, payload={"expires_ms": 9_000}),
        r("task.finished", actor="w1", key="t1", task="t1", epoch=1),
        r("lease.expired", task="t2", epoch=1, why="no heartbeat"),
    ], now_ms=2_000)


def test_fold_rebuilds_tasks_leases_steps_and_progress(storage: Storage) -> None:
    _history(storage)
    view = fold(storage.read(RUN))
    assert view.state == "RUNNING" and view.job["kind"] == "scan"
    assert list(view.sprints) == ["a", "b"] and view.sprints["a"].status == "in_progress"
    assert view.tasks["t1"].status == "finished" and view.tasks["t1"].lease is None
    assert view.tasks["t2"].status == "pending" and view.tasks["t2"].attempts == 1 and view.tasks["t2"].epoch == 1
    assert view.sprint_progress("a") == (1, 2)
    assert (view.tasks["t1"].steps_done, view.tasks["t2"].steps_done, view.steps_done) == (1, 0, 1)
    assert RunReader(storage, view).step_results(["t1", "t2"]) == {
        "t1": {"t1/x@1": {"name": "x", "input_hash": "1", "result": {"v": 1}}}, "t2": {}}
    assert [t.inputs for t in RunReader(storage, view).planned(["t2", "t1"])] == [{"n": 2}, {"n": 1}]
    assert view.model["calls"] == 1 and view.model["input_tokens"] == 3 and view.model["cost_usd"] == 0.5
    assert view.current_sprint() == "a"
    assert view.last_activity_ms == 2_000 and view.started_ms == 1_000
    assert view.leases() == []


def test_lease_renewal_and_halt(storage: Storage) -> None:
    _history(storage)
    storage.append([r("task.assigned", task="t2", epoch=2, payload={"worker": "w3", "expires_ms": 7_000, "session": "s2"}),
                    r("lease.renewed", task="t2", epoch=2, payload={"expires_ms": 8_000}),
                    r("run.halted", why="model quota exhausted", payload={"kind": "quota"})], now_ms=3_000)
    view = fold(storage.read(RUN))
    (lease,) = view.leases()
    assert (lease.worker, lease.epoch, lease.expires_ms, lease.renewed_ms, lease.session) == ("w3", 2, 8_000, 3_000, "s2")
    assert view.state == "HALTED" and view.halt["reason"] == "model quota exhausted" and view.halt["kind"] == "quota"
    storage.append([r("run.resumed")], now_ms=4_000)
    assert fold(storage.read(RUN)).state == "RUNNING"


def test_incremental_fold_equals_batch_fold_and_checkpoint_round_trip(storage: Storage) -> None:
    _history(storage)
    records = list(storage.read(RUN))
    live = RunView(run_id=RUN)
    for rec in records:
        live.apply(rec)
    batch = fold(records)
    assert live.to_json() == batch.to_json()
    middle = fold(records[:5])
    resumed = fold(records[5:], base=RunView.from_json(middle.to_json()))
    assert resumed.to_json() == batch.to_json()


def test_fold_refuses_records_out_of_order(storage: Storage) -> None:
    _history(storage)
    records = list(storage.read(RUN))
    with pytest.raises(ValueError, match="in order"):
        fold([records[1], records[0]])

"""Case 01 C4's watchdog side and issue 6's breakers: a heartbeat alone is never progress."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleetledger import runstate

from e2e import records, run_synthetic

pytestmark = pytest.mark.slow


def test_the_same_error_on_many_steps_trips_the_circuit_breaker(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    done = run_synthetic(ws, "--tasks", "2", "--steps", "8", "--workers", "1", "--breaker", "5",
                         env={"FLEETLEDGER_FAULT": "synthetic.in_step:1:eio+"})
    assert done.returncode == 75, done.stdout + done.stderr
    state = runstate.read(ws / runstate.STATE_FILE)
    reason = state.data["halt"]["reason"]
    assert state.state == "HALTED" and "circuit breaker" in reason and "Input/output error" in reason
    assert "the last was s" in reason, "the reason names the step"
    history = records(ws)
    assert 5 <= sum(1 for r in history if r.kind == "step.failed") <= 8
    assert not any(r.kind == "task.assigned" and r.task == "t0001" for r in history), "no new work after it tripped"


def test_heartbeats_without_progress_halt_the_run_as_stalled(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    done = run_synthetic(ws, "--tasks", "1", "--steps", "1", "--workers", "1", "--work-us", "120000000",
                         "--lease-ttl", "1", "--heartbeat", "0.2", "--stall-after", "2")
    assert done.returncode == 75, done.stdout + done.stderr
    state = runstate.read(ws / runstate.STATE_FILE)
    assert state.state == "HALTED" and "no step completed" in state.data["halt"]["reason"]
    history = records(ws)
    assert sum(1 for r in history if r.kind == "lease.renewed") >= 3, "heartbeats kept coming"
    assert not any(r.kind == "lease.expired" and "no heartbeat" in r.why for r in history)

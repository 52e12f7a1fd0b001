"""Cases 01 and 02 (../shared/cases): crashes, leases and fencing with real processes."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleetledger import runstate
from fleetledger.coordinator import Coordinator, RunOptions
from fleetledger.jobs.synthetic import SyntheticJob, deliveries
from fleetledger.verify import verify_records
from fleetledger.workspace import Workspace

from e2e import count, kill_cli, real_repo, records, run_cli, start_cli, wait_for

pytestmark = pytest.mark.slow


def test_c1_resume_while_a_worker_is_alive_leaves_the_task_alone(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    proc = start_cli("scan", str(real_repo()), "--workers", "1", "--workspace", str(ws), "--no-progress",
                     env={"FLEETLEDGER_FAULT": "scan.investigate.after_step:1:stop"})
    try:
        wait_for(lambda: count(ws, "model.call") >= 1, what="a worker inside investigate", proc=proc)
        before = len(records(ws))
        for command in ("resume", "recover"):
            other = run_cli(command, "--workspace", str(ws), "--no-progress")
            assert other.returncode == 0 and "live" in other.stdout, other.stdout + other.stderr
        again = run_cli("scan", str(real_repo()), "--workspace", str(ws), "--no-progress")
        assert again.returncode == 3 and "in use" in again.stderr
        after = records(ws)
        assert len(after) == before, "nothing was appended by the other shells"
        held = [r for r in after if r.kind == "task.assigned" and r.task.startswith("investigate")]
        assert len(held) == 1, "one assignment record for the task in flight"
    finally:
        kill_cli(proc)


def test_c3_running_with_nobody_running_is_recovered_and_reassigned_once(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    proc = start_cli("scan", str(real_repo()), "--workers", "1", "--lease-ttl", "2", "--workspace", str(ws),
                     "--no-progress", env={"FLEETLEDGER_FAULT": "scan.investigate.after_step:2:stop"})
    wait_for(lambda: any(r.kind == "lease.expired" and "no heartbeat" in r.why for r in records(ws)),
             what="the stopped worker's lease to expire", proc=proc)
    kill_cli(proc)
    state = runstate.read(ws / runstate.STATE_FILE)
    assert state.state == "RUNNING", "the run looks RUNNING although nobody runs it"
    done = run_cli("recover", "--workspace", str(ws), "--no-progress", "--lease-ttl", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    history = records(ws)
    expired = next(r for r in history if r.kind == "lease.expired" and "no heartbeat" in r.why)
    resumed_at = next(r.seq for r in history if r.kind == "run.resumed")
    reassigned = [r for r in history if r.kind == "task.assigned" and r.task == expired.task and r.seq > expired.seq]
    assert len(reassigned) == 1 and reassigned[0].seq > resumed_at and reassigned[0].epoch == expired.epoch + 1
    finished = [r for r in history if r.kind == "task.finished" and r.task == expired.task]
    assert len(finished) == 1 and finished[0].epoch == expired.epoch + 1
    assert verify_records(history).ok


def _synthetic(tmp_path: Path, *, heartbeat_s: float, lease_ttl_s: float = 1.0,
               work_s: float = 2.5) -> tuple[Workspace, Path]:
    ws = Workspace.at(tmp_path / "ws")
    target = tmp_path / "tickets"
    job = SyntheticJob("l1", tasks=1, steps=1, work_us=int(work_s * 1_000_000), target=target)
    result = Coordinator(job, ws, RunOptions(workers=2, lease_ttl_s=lease_ttl_s, heartbeat_s=heartbeat_s)).run()
    assert result.exit_code == 0, result.message
    return ws, target


def test_l1_with_heartbeats_the_work_runs_once(tmp_path: Path) -> None:
    # The work outlasts the lease twice over; heartbeats every 0.2 s renew a 2 s lease, a margin
    # a loaded 2-core machine keeps (a 1 s lease was once lost to a stall there).
    ws, target = _synthetic(tmp_path, heartbeat_s=0.2, lease_ttl_s=2.0, work_s=4.0)
    history = records(ws.root)
    assert sum(1 for r in history if r.kind == "task.assigned") == 1
    assert sum(1 for r in history if r.kind == "step.intent") == 1
    assert any(r.kind == "lease.renewed" for r in history)
    assert deliveries(target) == {"publish:t0000": 1}


def test_l1_without_heartbeats_one_completion_and_one_effect(tmp_path: Path) -> None:
    ws, target = _synthetic(tmp_path, heartbeat_s=0)
    history = records(ws.root)
    epochs = [r.epoch for r in history if r.kind == "task.assigned"]
    assert len(epochs) >= 2, "the task was taken over after its lease expired"
    finished = [r for r in history if r.kind == "task.finished"]
    assert len(finished) == 1 and finished[0].epoch == epochs[-1], "only the current holder's completion is accepted"
    assert any(r.kind == "decision" and "fenced" in r.why for r in history), "the late worker was refused"
    assert [r.epoch for r in history if r.kind == "step.done"] == [epochs[-1]], "one result, from the current holder"
    assert deliveries(target) == {"publish:t0000": 1}, "the effect happened once"
    assert verify_records(history).ok

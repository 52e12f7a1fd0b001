"""Worker processes forked from the coordinator (``fleetledger.forked``) and the chaos harness's
fork server (``bench/forkserver.py``): the same results as exec'd processes, real SIGKILLs at
fault points re-armed in the child, and nothing forked unless asked for with ``--sandbox none``."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from fleetledger import faults
from fleetledger.forked import FORK_ENV, can_fork
from fleetledger.ledger import open_storage
from fleetledger.replay import fold

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from forkserver import TIMED_OUT, ForkServer  # noqa: E402


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLEETLEDGER_")}
    env.update({"FLEETLEDGER_SANDBOX": "none", "PYTHONPATH": str(ROOT)}, **extra)
    return env


def _job_args(tmp: Path, name: str) -> list[str]:
    return ["fleetledger.jobs.synthetic", str(tmp / name / "ws"), "--tasks", "4", "--steps", "5", "--workers", "2",
            "--target", str(tmp / name / "target"), "--lease-ttl", "5"]


def _records(ws: Path) -> list:  # type: ignore[type-arg]
    with open_storage(f"sqlite:///{ws / 'ledger.sqlite3'}") as store:
        return list(store.read())


def _results(records: list) -> dict[str, object]:  # type: ignore[type-arg]
    return {r.key: r.payload["result"] for r in records if r.kind == "step.done"}


def test_forked_workers_record_the_same_results_as_exec_ones_and_say_how_they_started(tmp_path: Path) -> None:
    for name, fork in (("exec", "0"), ("fork", "1")):
        done = subprocess.run([sys.executable, "-m", *_job_args(tmp_path, name)], env=_env(**{FORK_ENV: fork}),
                              cwd=str(ROOT), capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
    exec_records, fork_records = _records(tmp_path / "exec" / "ws"), _records(tmp_path / "fork" / "ws")
    assert _results(fork_records) == _results(exec_records) and len(_results(exec_records)) == 20
    assert fold(fork_records).state == fold(exec_records).state == "JACKED_OUT"
    started = {name: [r.payload.get("forked", False) for r in records if r.kind == "worker.started"]
               for name, records in (("exec", exec_records), ("fork", fork_records))}
    assert started == {"exec": [False, False], "fork": [True, True]}


def test_a_forked_worker_killed_at_a_fault_point_dies_by_sigkill_and_the_run_still_finishes(tmp_path: Path) -> None:
    """The fault is armed in the worker from the environment it was forked with (its parent,
    the coordinator, reaches no worker-side point): the kill is the child's own real SIGKILL."""
    once = tmp_path / "once"
    env = _env(**{FORK_ENV: "1", "FLEETLEDGER_FAULT": "synthetic.in_step:3:kill", "FLEETLEDGER_FAULT_ONCE": str(once)})
    done = subprocess.run([sys.executable, "-m", *_job_args(tmp_path, "kill")], env=env, cwd=str(ROOT),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert once.exists()  # the fault fired, in one process
    records = _records(tmp_path / "kill" / "ws")
    exits = [r for r in records if r.kind == "worker.exited"]
    assert any("SIGKILL" in r.why for r in exits), [r.why for r in exits]
    assert len(_results(records)) == 20 and fold(records).state == "JACKED_OUT"
    assert all(r.payload.get("forked") for r in records if r.kind == "worker.started")


def test_nothing_is_forked_unless_asked_for_unconfined_and_single_threaded(monkeypatch: pytest.MonkeyPatch) -> None:
    import fleetledger.forked as forked

    threads = [1]
    monkeypatch.setattr(forked.threading, "active_count", lambda: threads[0])
    monkeypatch.delenv(FORK_ENV, raising=False)
    assert not can_fork("none")
    monkeypatch.setenv(FORK_ENV, "1")
    assert can_fork("none") and not can_fork("bubblewrap") and not can_fork("gvisor")
    threads[0] = 2  # another thread may hold a lock the child would wait on forever
    assert not can_fork("none")


def test_rearm_reads_the_fault_variables_again(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("FLEETLEDGER_FAULT", "test.point:2:enospc")
    monkeypatch.setenv("FLEETLEDGER_FAULT_LOG", str(tmp_path / "log"))
    try:
        faults.rearm()
        faults.hit("test.point")
        with pytest.raises(OSError):
            faults.hit("test.point")
        assert (tmp_path / "log").read_text().count("test.point") == 2
    finally:
        monkeypatch.delenv("FLEETLEDGER_FAULT")
        monkeypatch.delenv("FLEETLEDGER_FAULT_LOG")
        faults.rearm()
    faults.hit("test.point")  # disarmed again: nothing happens


def test_the_fork_server_runs_a_killed_coordinator_and_its_recovery_as_separate_children(tmp_path: Path) -> None:
    server = ForkServer()
    try:
        once = tmp_path / "once"
        killed = server.run(_job_args(tmp_path, "s"), cwd=ROOT, stderr=tmp_path / "first.err", timeout_s=120,
                            env=_env(**{FORK_ENV: "1", "FLEETLEDGER_FAULT": "ledger.after_commit:5:kill",
                                        "FLEETLEDGER_FAULT_ONCE": str(once)}))
        assert killed == -signal.SIGKILL and once.exists()
        assert fold(_records(tmp_path / "s" / "ws")).state == "RUNNING"  # the crash left the run open
        recovered = server.run(_job_args(tmp_path, "s"), cwd=ROOT, stderr=tmp_path / "second.err", timeout_s=120,
                               env=_env(**{FORK_ENV: "1"}))
        assert recovered == 0, (tmp_path / "second.err").read_text()
        records = _records(tmp_path / "s" / "ws")
        assert fold(records).state == "JACKED_OUT" and len(_results(records)) == 20
        assert any(r.kind == "run.resumed" for r in records)
        assert server.run(["fleetledger.cli", "--no-such-option"], cwd=ROOT, stderr=tmp_path / "usage.err",
                          timeout_s=60, env=_env()) == 2  # a usage error's status, as from exec
        # A child that never ends (stopped at its first point) is killed at its timeout.
        stuck = _env(**{"FLEETLEDGER_FAULT": "coordinator.after_plan:1:stop"})
        assert server.run(_job_args(tmp_path, "stuck"), cwd=ROOT, stderr=None, timeout_s=2, env=stuck) == TIMED_OUT
    finally:
        server.close()

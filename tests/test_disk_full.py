"""A full disk halts the run cleanly (issue 14, item 4): at every write site (the ledger, the
run-state file, the head kept in the user's state folder, a real full tmpfs) the run ends
HALTED with exit 75, its run-state file agrees with the ledger (or is left whole, as it was),
and a resume once there is space finishes with the outputs of an uninterrupted run."""

from __future__ import annotations

import errno
import os
import subprocess
from pathlib import Path

import pytest

from fleetledger import runstate
from fleetledger.jobs.synthetic import deliveries, step_value
from fleetledger.replay import fold
from fleetledger.verify import verify_records

from e2e import records, run_synthetic, start_synthetic, wait_for

pytestmark = pytest.mark.slow

TASKS, STEPS = 3, 3
HALTED = 75


def _args(target: Path) -> tuple[str, ...]:
    return ("--tasks", str(TASKS), "--steps", str(STEPS), "--workers", "2", "--sandbox", "none",
            "--ledger-retry", "0.5", "--target", str(target))


def _expected() -> dict[str, str]:
    return {f"t{t:04d}/s{n}": step_value(f"t{t:04d}", n) for t in range(TASKS) for n in range(STEPS)}


def _steps(ws: Path) -> dict[str, str]:
    return {r.key.split("@")[0]: r.payload["result"]["value"] for r in records(ws) if r.kind == "step.done"}


def _state_agrees(ws: Path) -> str:
    """Checks that the run-state file is whole and agrees with the ledger; returns the ledger's state."""
    history = records(ws)
    view = fold(history)
    state = runstate.read(ws / runstate.STATE_FILE)
    assert state is not None and state.plan_id == view.run_id
    assert state.seq <= view.last_seq, "the state file is never ahead of the ledger"
    if state.seq == view.last_seq:
        assert state.state == view.state
    else:  # left as it was: a state the ledger went through, which the next start reconciles
        assert state.state == "RUNNING"
    return view.state


def _resume_finishes_like_an_uninterrupted_run(ws: Path, target: Path) -> None:
    done = run_synthetic(ws, *_args(target))
    assert done.returncode == 0, done.stdout + done.stderr
    assert _steps(ws) == _expected()
    assert deliveries(target) == {f"publish:t{t:04d}": 1 for t in range(TASKS)}
    assert verify_records(records(ws)).ok
    assert runstate.read(ws / runstate.STATE_FILE).state == "JACKED_OUT"


@pytest.mark.parametrize(("fault", "ledger_state"), [
    ("runstate.after_write:3:enospc", "HALTED"),
    ("runstate.after_fsync:2:enospc", "HALTED"),
    ("head.after_write:3:enospc", "HALTED"),
    ("ledger.before_commit:8:enospc+", "RUNNING"),  # the ledger's disk stays full: HALTED cannot be recorded
    # Every commit from the 3rd on is stored, then reports the full disk: halted once, never with a traceback.
    ("ledger.after_commit:3:enospc+", "HALTED"),
])
def test_enospc_at_each_write_site_halts_with_75_and_a_resume_finishes(tmp_path: Path, fault: str,
                                                                       ledger_state: str) -> None:
    ws, target = tmp_path / "ws", tmp_path / "tickets"
    full = run_synthetic(ws, *_args(target), env={"FLEETLEDGER_FAULT": fault})
    said = full.stdout + full.stderr
    assert full.returncode == HALTED, said
    assert "Traceback" not in said and "No space left on device" in said, said
    assert _state_agrees(ws) == ledger_state
    _resume_finishes_like_an_uninterrupted_run(ws, target)


def test_a_real_full_file_system_halts_the_run_and_it_finishes_once_space_is_freed(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mount, target = tmp_path / "small", tmp_path / "tickets"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(mount)], check=True)
    proc = None
    try:
        ws = mount / "ws"
        args = ("--tasks", "6", "--steps", "4", "--work-us", "100000", "--workers", "2", "--sandbox", "none",
                "--ledger-retry", "0.5", "--target", str(target))
        proc = start_synthetic(ws, *args)
        wait_for(lambda: sum(1 for r in records(ws) if r.kind == "step.done") >= 3, what="some steps done", proc=proc)
        filler = mount / "filler"
        try:
            with open(filler, "wb") as handle:  # take every free block
                while True:
                    handle.write(b"\xff" * 65536)
                    handle.flush()
        except OSError as exc:  # full now (or already: the run's WAL grows while the test reads it)
            assert exc.errno == errno.ENOSPC, exc
        _, err = proc.communicate(timeout=240)
        assert proc.returncode == HALTED, err
        assert "Traceback" not in err
        _state_agrees(ws)
        filler.unlink(missing_ok=True)
        done = run_synthetic(ws, *args)
        assert done.returncode == 0, done.stdout + done.stderr
        assert _steps(ws) == {f"t{t:04d}/s{n}": step_value(f"t{t:04d}", n) for t in range(6) for n in range(4)}
        assert deliveries(target) == {f"publish:t{t:04d}": 1 for t in range(6)}
        assert verify_records(records(ws)).ok
    finally:
        if proc is not None and proc.poll() is None:  # a failed check leaves no process behind
            proc.kill()
            proc.communicate()
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_full_disk_after_the_scan_exported_does_not_leave_partial_reports(tmp_path: Path) -> None:
    """Found by the chaos harness: the disk fills when the head is written after the export
    sprint. The run halts (75) and would write "partial" reports over the final ones; the
    resume finds the export recorded done and never writes them again, so a finished run kept
    reports saying it halted on a full disk. The final reports are kept, and equal those of an
    uninterrupted run."""
    import json
    import sys

    from e2e import REPO_ROOT, _env

    demo = REPO_ROOT / "fleetledger" / "demo_repo"
    log = tmp_path / "points.log"

    def scan(ws: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "fleetledger.cli", "scan", str(demo), "--workspace", str(ws),
                               "--workers", "2", "--no-progress", "--sandbox", "none"], env=_env(env),
                              capture_output=True, text=True, timeout=300, cwd=str(REPO_ROOT))

    def sarif(ws: Path) -> dict:
        data = json.loads((ws / "findings.sarif").read_text())
        for run in data["runs"]:
            run["properties"].pop("runId", None)
            for invocation in run.get("invocations", []):
                invocation.pop("startTimeUtc", None)
        return data

    reference = scan(tmp_path / "reference", {"FLEETLEDGER_FAULT_LOG": str(log)})
    assert reference.returncode == 0, reference.stderr
    points = [line.split()[1] for line in log.read_text().splitlines()]
    last_export = next(point for point in reversed(points) if point.startswith("export."))
    assert "head.after_write" in points[points.index(last_export):]
    ws = tmp_path / "ws"
    # The first head write after the export's last file, however many periodic writes (one a
    # second at most) a loaded machine made before it: counted from the reference run's writes,
    # the fault fired before the export when the two runs' timings differed.
    halted = scan(ws, {"FLEETLEDGER_FAULT": "head.after_write:1:enospc+", "FLEETLEDGER_FAULT_AFTER": last_export})
    assert halted.returncode == HALTED, halted.stdout + halted.stderr
    assert any(r.kind == "sprint.finished" and r.payload.get("sprint", r.key) == "export" for r in records(ws)), \
        "the disk filled after the export"
    resumed = scan(ws, {})
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert sarif(ws)["runs"][0]["properties"].get("haltReason") is None, "a finished run's reports say it halted"
    assert sarif(ws) == sarif(tmp_path / "reference")


def test_a_full_disk_reported_after_each_commit_never_halts_a_finished_run(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by the chaos harness (``synthetic:enospc:ledger.after_commit:25``, exit 75, then a
    resume that exited 0 with the run still RUNNING in its ledger): the disk filled just after
    the commit of ``run.finished``. The append raised although the record was stored, the view
    was not told, so the halt appended ``run.halted`` after ``run.finished``; the resume then
    found ``run.finished`` already there (a duplicate), said "finished" and left the ledger
    saying RUNNING. Each commit of a session that ends the run fails this way in turn (the
    SQLite method: operation N, then N+1, until the session completes); every one must leave a
    ledger that agrees with itself and a resume that finishes the run."""
    import shutil

    ws, target, states = tmp_path / "ws", tmp_path / "tickets", tmp_path / "state"
    saved = tmp_path / "saved"
    monkeypatch.setenv("XDG_STATE_HOME", str(states))  # the user's heads, put back with the workspace

    def restore() -> None:
        """Puts the workspace, the target and the user's heads back as the kill left them."""
        for path in (ws, target, states):
            shutil.rmtree(path, ignore_errors=True)
            if (saved / path.name).exists():
                shutil.copytree(saved / path.name, path)

    crash = run_synthetic(ws, *_args(target), env={"FLEETLEDGER_FAULT": "effect.after_intent:1:kill"})
    assert crash.returncode == -9, crash.stdout + crash.stderr  # killed in the publish sprint: no worker left
    for path in (ws, target, states):
        if path.exists():
            shutil.copytree(path, saved / path.name)
    log = tmp_path / "points.log"
    restore()
    probe = run_synthetic(ws, *_args(target), env={"FLEETLEDGER_FAULT_LOG": str(log)})
    assert probe.returncode == 0, probe.stdout + probe.stderr
    commits = sum(1 for line in log.read_text().splitlines() if line.endswith(" ledger.after_commit"))
    assert records(ws)[-1].kind == "run.finished", "the session's last commit stores run.finished"
    finished_then_full = 0
    for n in range(1, commits + 1):
        restore()
        full = run_synthetic(ws, *_args(target), env={"FLEETLEDGER_FAULT": f"ledger.after_commit:{n}:enospc"})
        said = full.stdout + full.stderr
        assert full.returncode == HALTED, f"commit {n}: {said}"
        assert "Traceback" not in said, said
        kinds = [r.kind for r in records(ws)]
        if "run.finished" in kinds:
            finished_then_full += 1
            assert kinds[-1] == "run.finished", f"commit {n}: {kinds[kinds.index('run.finished'):]} after run.finished"
        _state_agrees(ws)
        _resume_finishes_like_an_uninterrupted_run(ws, target)
        assert fold(records(ws)).state == "JACKED_OUT", f"commit {n}: the resume said finished, the ledger does not"
    assert finished_then_full == 1, "one of the commits was that of run.finished"


def test_a_disk_full_before_anything_is_recorded_exits_75_not_1(tmp_path: Path) -> None:
    """The ledger's disk full from the first commit (``run.started``) on: nothing can be
    recorded, not even a halt; that is still a full disk (exit 75, saying so), not a generic
    ledger error (exit 1), and the same command finishes once there is space."""
    ws, target = tmp_path / "ws", tmp_path / "tickets"
    full = run_synthetic(ws, *_args(target), env={"FLEETLEDGER_FAULT": "ledger.before_commit:1:enospc+"})
    said = full.stdout + full.stderr
    assert full.returncode == HALTED, said
    assert "Traceback" not in said and "nothing was started" in said, said
    assert records(ws) == []
    _resume_finishes_like_an_uninterrupted_run(ws, target)


def test_a_full_disk_in_a_workers_step_halts_the_run_and_gives_up_no_step(tmp_path: Path) -> None:
    """A worker's step meets a full disk, at every step from then on (``synthetic.in_step:2:enospc+``
    in each worker): before, each such step was recorded failed, given up at the second failure,
    and the run finished (exit 0) without those steps' results, which no resume brought back. A
    full disk is not the step's fault: the task is handed back, the run halts (75), and the
    resume once there is space does every step."""
    ws, target = tmp_path / "ws", tmp_path / "tickets"
    full = run_synthetic(ws, *_args(target), env={"FLEETLEDGER_FAULT": "synthetic.in_step:2:enospc+"})
    said = full.stdout + full.stderr
    assert full.returncode == HALTED, said
    assert "Traceback" not in said and "disk is full" in said, said
    history = records(ws)
    assert not [r for r in history if r.kind == "step.failed"], "a full disk fails no step"
    assert fold(history).halt["kind"] == "disk"
    assert _state_agrees(ws) == "HALTED"
    _resume_finishes_like_an_uninterrupted_run(ws, target)

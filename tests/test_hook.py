"""``fleetledger hook session-start``: what an agent session does after a start or a compaction
(cases C3 and C4, the session side), driven through the real CLI on real, really crashed runs."""

from __future__ import annotations

import json
import re
import shlex
import signal
from pathlib import Path

import psutil
import pytest

from fleetledger import runstate
from fleetledger.hook import session_start
from fleetledger.workspace import Workspace

from e2e import kill_cli, records, run_cli, start_cli, stopped_child, wait_for

pytestmark = pytest.mark.slow

VULNERABLE = "import subprocess\nfrom flask import request\n\n\ndef run_{n}():\n" \
             "    return subprocess.check_output('ls ' + request.args['d{n}'], shell=True)\n"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """Five vulnerable files in one folder: one detect task of five steps, several investigate steps."""
    root = tmp_path / "repo"
    (root / "app").mkdir(parents=True)
    for n in range(5):
        (root / "app" / f"m{n}.py").write_text(VULNERABLE.format(n=n))
    return root


def hook(ws: Path, *args: str) -> tuple[int, dict | None, str]:
    """Runs the hook; returns (exit code, parsed JSON output or None, stderr)."""
    done = run_cli("hook", "session-start", "--workspace", str(ws), *args)
    return done.returncode, json.loads(done.stdout) if done.stdout.strip() else None, done.stderr


def context(output: dict) -> str:
    """The additional context of a SessionStart hook answer (and checks the answer's shape)."""
    assert set(output) == {"hookSpecificOutput"}
    specific = output["hookSpecificOutput"]
    assert specific["hookEventName"] == "SessionStart"
    return specific["additionalContext"]


def command_in(text: str) -> list[str]:
    """The first command the context tells the agent to run (between backticks after 'run')."""
    match = re.search(r"run `([^`]+)`", text)
    assert match, f"no command to run in: {text}"
    return shlex.split(match.group(1))


def crash_paused(ws: Path, repo: Path, fault: str, once: Path, done: tuple[str, str, int]) -> None:
    """Starts a one-worker scan whose worker pauses at ``fault``, waits until the ledger holds
    ``done`` (kind, step-name prefix, count), then kills the coordinator and the paused worker."""
    proc = start_cli("scan", str(repo), "--workspace", str(ws), "--workers", "1", "--no-progress",
                     env={"FLEETLEDGER_FAULT": fault, "FLEETLEDGER_FAULT_ONCE": str(once)})
    wait_for(lambda: stopped_child(proc.pid) is not None, what="the worker to pause", proc=proc)
    kind, prefix, n = done
    wait_for(lambda: sum(1 for r in records(ws) if r.kind == kind and r.payload.get("name", "").startswith(prefix)) >= n,
             what=f"{n} {kind} {prefix} records", proc=proc)
    paused = stopped_child(proc.pid)
    kill_cli(proc)
    paused.send_signal(signal.SIGKILL)


def test_no_run_state_file_means_nothing_to_do(tmp_path: Path) -> None:
    code, output, _ = hook(tmp_path / "ws")
    assert code == 0
    assert "nothing to do" in context(output)


def test_compacted_after_step_3_continues_without_a_question_from_the_next_step(tmp_path: Path, repo: Path) -> None:
    ws = tmp_path / "ws"
    crash_paused(ws, repo, "scan.investigate.after_step:3:stop", tmp_path / "once", ("step.done", "investigate:", 3))
    before = records(ws)
    recorded = {r.key for r in before if r.kind == "step.done"}
    assert runstate.read(ws / "sprint-plan-state.json").state == "RUNNING"

    code, output, err = hook(ws)
    assert code == 0, err
    text = context(output)
    assert "is RUNNING" in text and "without asking" in text and "?" not in text
    assert "'investigate'" in text and "after its 3 recorded step(s)" in text
    assert f"record #{before[-1].seq}" in text, "where it stands is rebuilt from the whole ledger"
    argv = command_in(text)
    assert argv == ["fleetledger", "recover", "--workspace", str(ws.resolve())], "continues this run from anywhere"

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    resumed = run_cli(*argv[1:], cwd=elsewhere)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    after = records(ws)[len(before):]
    assert after[0].kind == "run.resumed"
    again = [r.key for r in after if r.kind == "step.intent" and r.key in recorded]
    assert again == [], "no recorded step runs again: the next intent is the first unrecorded step"
    assert [r.kind for r in after].count("run.finished") == 1
    code, output, _ = hook(ws)
    assert code == 0 and "JACKED_OUT" in context(output) and str(ws / "findings.sarif") in context(output)


def test_compacted_in_the_middle_of_step_4_reruns_that_step_via_recover(tmp_path: Path, repo: Path) -> None:
    ws = tmp_path / "ws"
    crash_paused(ws, repo, "scan.detect:app/m3.py:1:stop", tmp_path / "once", ("step.intent", "detect:app/m3.py", 1))
    assert not any(r.kind == "step.done" and r.payload["name"] == "detect:app/m3.py" for r in records(ws))

    code, output, err = hook(ws, "--stale-after", "0")
    assert code == 0, err
    text = context(output)
    assert "interrupted" in text and "without asking" in text
    assert "In flight when it stopped" in text and "detect:app/m3.py of detect-0001" in text
    assert "after its 3 recorded step(s)" in text
    argv = command_in(text)
    assert argv == ["fleetledger", "recover", "--workspace", str(ws.resolve())]

    recovered = run_cli(*argv[1:])
    assert recovered.returncode == 0, recovered.stdout + recovered.stderr
    history = records(ws)
    step4 = [r.kind for r in history if r.key and "detect:app/m3.py@" in r.key]
    assert step4.count("step.intent") == 2 and step4.count("step.done") == 1
    assert history[-1].kind == "run.finished"


def test_halted_says_wait_for_an_explicit_resume_and_why(tmp_path: Path, repo: Path) -> None:
    ws = tmp_path / "ws"
    halted = run_cli("scan", str(repo), "--workspace", str(ws), "--model-quota", "2", "--no-progress")
    assert halted.returncode == 75, halted.stdout + halted.stderr
    reason = runstate.read(ws / "sprint-plan-state.json").data["halt"]["reason"]
    before = len(records(ws))

    code, output, err = hook(ws)
    assert code == 0, err
    text = context(output)
    assert "is HALTED" in text and reason in text
    assert "Do not resume it" in text and "wait until the user explicitly resumes it" in text
    assert f"fleetledger resume --workspace {ws.resolve()}" in text
    assert len(records(ws)) == before, "the hook wrote nothing"


def test_a_live_run_is_left_to_its_coordinator(tmp_path: Path, repo: Path) -> None:
    ws = tmp_path / "ws"
    proc = start_cli("scan", str(repo), "--workspace", str(ws), "--workers", "1", "--no-progress",
                     env={"FLEETLEDGER_FAULT": "ledger.after_commit:6:stop"})
    wait_for(lambda: proc.poll() is None and _stopped(proc.pid), what="the coordinator to pause", proc=proc)
    try:
        code, output, err = hook(ws)
        assert code == 0, err
        text = context(output)
        assert f"live in fleetledger pid {proc.pid}" in text and "Do not start it again" in text
    finally:
        kill_cli(proc)


def test_a_corrupt_state_file_exits_non_zero_and_is_left_untouched(tmp_path: Path, repo: Path) -> None:
    ws = tmp_path / "ws"
    assert run_cli("scan", str(repo), "--workspace", str(ws), "--no-progress").returncode == 0
    state = ws / "sprint-plan-state.json"
    torn = state.read_bytes()[:40]
    state.write_bytes(torn)

    code, output, err = hook(ws)
    assert code != 0 and output is None
    assert str(state) in err and "not valid JSON" in err and "fleetledger recover" in err
    assert state.read_bytes() == torn
    assert sorted(p.name for p in ws.iterdir() if p.name.startswith("sprint-plan-state")) == ["sprint-plan-state.json"]


def test_stale_limit_decides_between_continue_and_recover_and_both_continue_this_run(tmp_path: Path,
                                                                                     repo: Path) -> None:
    """Both advices are the same command, ``recover`` with the absolute workspace (item 6 of
    issue 14: the recorded job command, relative, was a usage error or another run from
    another folder); the stale limit only decides how the advice is worded."""
    ws = tmp_path / "ws"
    crashed = run_cli("scan", str(repo), "--workspace", str(ws), "--no-progress",
                      env={"FLEETLEDGER_FAULT": "ledger.after_commit:8:kill"})
    assert crashed.returncode == -signal.SIGKILL
    last = records(ws)[-1].ts_ms
    workspace = Workspace.at(ws)
    fresh = session_start(workspace, now_ms=last + 599_000, stale_after_s=600)
    stale = session_start(workspace, now_ms=last + 601_000, stale_after_s=600)
    assert (fresh.state, fresh.action) == ("RUNNING", "continue")
    assert (stale.state, stale.action) == ("RUNNING", "recover")
    assert stale.command == fresh.command == f"fleetledger recover --workspace {ws.resolve()}"
    assert "601 s old (limit 600 s)" in stale.context


def _stopped(pid: int) -> bool:
    return psutil.Process(pid).status() == psutil.STATUS_STOPPED

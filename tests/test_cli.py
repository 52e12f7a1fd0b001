"""The commands, as a user runs them: status, audit, log, halt, verify, hostile repositories,
and a worker process that dies in the middle of its task."""

from __future__ import annotations

import json
import re
import signal
import socket
from pathlib import Path

import pytest

from fleetledger import runstate
from fleetledger.verify import verify_records

from e2e import (BOOTS_A_VM, count, kill_cli, normalized_sarif, real_repo, records, run_cli, start_cli, stopped_child,
                 wait_for)
from sarif_schema import validate

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository with the files of cases 04 (R1-R3) next to ordinary vulnerable code."""
    root = tmp_path_factory.mktemp("hostile") / "repo"
    (root / "app").mkdir(parents=True)
    (root / "app" / "views.py").write_text(
        "import subprocess\nfrom flask import request\n\n\ndef run():\n"
        "    return subprocess.check_output('ls ' + request.args['d'], shell=True)\n")
    (root / "logo.py").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)))
    (root / "legacy.py").write_bytes(b"x = 1\ns = '\xff'\n")
    (root / "utf16.py").write_bytes("x = 1\n".encode("utf-16"))
    (root / "nul.py").write_bytes(b"import os\nos.system(input())\x00\n")
    (root / "script.py").write_text("#!/bin/sh\necho $HOME | rm -rf /\n")
    (root / "py2.py").write_text("print 'hello'\nexec 'x = 1'\n")
    (root / "page.py").write_text("{% for x in items %}{{ x }}{% endfor %}\n")
    big = "import os\nos.system(input())\n" + "# filler line to make the file large\n" * 32_000
    (root / "big.py").write_text(big)
    (root / "bundle.py").write_bytes(b"x=1;" * (5 * 1024 * 1024))
    return root


@pytest.fixture(scope="module")
def hostile_scan(hostile: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    ws = tmp_path_factory.mktemp("hostile-ws") / "ws"
    done = run_cli("scan", str(hostile), "--workspace", str(ws), "--no-progress")
    assert done.returncode == 0, done.stdout + done.stderr
    return ws


def test_hostile_files_are_skipped_with_reasons_and_the_run_completes(hostile_scan: Path) -> None:
    sarif = json.loads((hostile_scan / "findings.sarif").read_text())
    validate(sarif)
    notes = " ".join(n["message"]["text"] for n in sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"])
    for name in ("logo.py", "utf16.py", "nul.py", "script.py", "py2.py", "page.py", "bundle.py"):
        assert name in notes, f"{name} is named in a SARIF notification"
    report = json.loads((hostile_scan / "findings.json").read_text())
    by_path = {f["path"]: f for f in report["files"]}
    assert by_path["nul.py"]["reason"] == "NUL byte at line 2"
    assert "size" in by_path["bundle.py"]["reason"]
    assert all(by_path[p]["status"] == "skipped" and by_path[p]["reason"] for p in
               ("logo.py", "utf16.py", "nul.py", "script.py", "py2.py", "page.py", "bundle.py"))
    assert by_path["legacy.py"]["status"] == "scanned"
    located = {(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]) for r in sarif["runs"][0]["results"]}
    assert "app/views.py" in located and "big.py" in located
    assert not located & {"script.py", "py2.py", "page.py"}, "no findings from files that are not Python"


@BOOTS_A_VM
def test_hostile_files_scanned_in_microvms_with_egress_allowed_give_what_bubblewrap_gives(
        hostile: Path, hostile_scan: Path, tmp_path: Path) -> None:
    """Case 04 in the microVM sandbox (emulated here: 2 workers, one VM each), under a policy
    allowing one destination: the findings and the files' outcomes equal a bubblewrap run's,
    the ledger records the microVM and its egress, and the channel's socket and the forwarders
    are gone when the run ends."""
    with socket.create_server(("127.0.0.1", 0)) as listening:
        policy = tmp_path / "policy.toml"
        policy.write_text(f'[policy]\negress = ["127.0.0.1:{listening.getsockname()[1]}"]\n', encoding="utf-8")
        ws = tmp_path / "ws"
        done = run_cli("scan", str(hostile), "--workspace", str(ws), "--no-progress", "--workers", "2",
                       "--sandbox", "microvm", "--policy", str(policy), timeout_s=600)
    assert done.returncode == 0, done.stdout + done.stderr
    started = next(r for r in records(ws) if r.kind == "run.started")
    assert started.payload["sandbox"]["name"] == "microvm"
    assert "egress only through host forwarders" in started.payload["sandbox"]["network"]
    assert list((ws / "egress").iterdir()) == [], "a forwarder or the channel outlived the run"
    assert normalized_sarif(ws / "findings.sarif") == normalized_sarif(hostile_scan / "findings.sarif")
    assert "B602" in json.dumps(normalized_sarif(ws / "findings.sarif"))
    files = json.loads((ws / "findings.json").read_text())["files"]
    assert files == json.loads((hostile_scan / "findings.json").read_text())["files"]


def test_status_json_and_text(hostile_scan: Path) -> None:
    result = run_cli("status", "--workspace", str(hostile_scan), "--json")
    data = json.loads(result.stdout)
    assert data["state"] == "JACKED_OUT" and data["live_pid"] is None
    assert [s["status"] for s in data["sprints"]] == ["completed"] * 5
    assert data["leases"] == []
    text = run_cli("status", "--workspace", str(hostile_scan)).stdout
    assert "JACKED_OUT" in text and "detect" in text


def test_audit_says_who_touched_a_file_when_and_why(hostile_scan: Path) -> None:
    rows = [json.loads(line) for line in run_cli("audit", "app/views.py", "--workspace", str(hostile_scan), "--json").stdout.splitlines()]
    kinds = {r["kind"] for r in rows}
    assert {"task.assigned", "step.intent", "step.done", "model.call", "task.finished"} <= kinds
    detect = next(r for r in rows if r["kind"] == "step.done" and r["step"] == "detect:app/views.py")
    assert detect["worker"].startswith("w") and detect["pid"] and detect["policy_hash"]
    assert detect["why"].startswith("scanned:")
    judged = [r for r in rows if r["kind"] == "step.done" and r["step"].startswith("investigate:")]
    assert judged and "vulnerable" in judged[0]["why"]
    skipped = [json.loads(line) for line in run_cli("audit", "nul.py", "--workspace", str(hostile_scan), "--json").stdout.splitlines()]
    assert any(r["why"] == "skipped: NUL byte at line 2" for r in skipped)
    only = run_cli("audit", "app", "--workspace", str(hostile_scan), "--worker", detect["worker"], "--json").stdout.splitlines()
    assert only and all(json.loads(line)["worker"] == detect["worker"] for line in only)
    bad = run_cli("audit", "app", "--workspace", str(hostile_scan), "--since", "yesterday")
    assert bad.returncode == 2 and "ISO-8601" in bad.stderr


def test_log_prints_every_record_as_json(hostile_scan: Path) -> None:
    lines = run_cli("log", "--workspace", str(hostile_scan)).stdout.splitlines()
    assert len(lines) == len(records(hostile_scan))
    first = json.loads(lines[0])
    assert first["kind"] == "run.started" and first["seq"] == 1 and first["ts"].endswith("Z")
    halts = run_cli("log", "--workspace", str(hostile_scan), "--kind", "run.finished").stdout.splitlines()
    assert len(halts) == 1


def test_verify_ok_and_no_run_errors(hostile_scan: Path, tmp_path: Path) -> None:
    ok = run_cli("verify", "--workspace", str(hostile_scan))
    assert ok.returncode == 0 and "OK" in ok.stdout
    empty = run_cli("status", "--workspace", str(tmp_path / "nothing"))
    assert empty.returncode == 1 and "fleetledger scan PATH" in empty.stderr


def test_halt_a_live_run_then_resume_it(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    proc = start_cli("scan", str(real_repo()), "--workers", "2", "--workspace", str(ws), "--no-progress",
                     env={"FLEETLEDGER_FAULT": "scan.investigate.after_step:2:stop"})
    try:
        wait_for(lambda: count(ws, "model.call") >= 2, what="investigation under way", proc=proc)
        halted = run_cli("halt", "--workspace", str(ws), "--reason", "maintenance window")
        assert halted.returncode == 0, halted.stderr
        assert "HALTED" in halted.stdout and "maintenance window" in halted.stdout
        proc.communicate(timeout=60)
        assert proc.returncode == 75
    finally:
        if proc.poll() is None:
            kill_cli(proc)
    state = runstate.read(ws / runstate.STATE_FILE)
    assert state.state == "HALTED" and state.data["halt"]["reason"] == "maintenance window"
    waits = run_cli("recover", "--workspace", str(ws), "--no-progress")
    assert waits.returncode == 75 and "maintenance window" in waits.stdout
    resumed = run_cli("resume", "--workspace", str(ws), "--no-progress")
    assert resumed.returncode == 0, resumed.stderr
    assert runstate.read(ws / runstate.STATE_FILE).state == "JACKED_OUT"
    assert verify_records(records(ws)).ok


def test_a_worker_killed_mid_task_is_noticed_and_its_task_reassigned(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    proc = start_cli("scan", str(real_repo()), "--workers", "2", "--workspace", str(ws), "--no-progress",
                     env={"FLEETLEDGER_FAULT": "scan.investigate.after_step:1:stop",
                          "FLEETLEDGER_FAULT_ONCE": str(tmp_path / "once")})
    wait_for(lambda: stopped_child(proc.pid) is not None, what="one worker to stop inside its task", proc=proc)
    victim = stopped_child(proc.pid)
    victim.send_signal(signal.SIGKILL)
    _, err = proc.communicate(timeout=240)
    assert proc.returncode == 0, err
    history = records(ws)
    exited = next(r for r in history if r.kind == "worker.exited")
    assert exited.payload["pid"] == victim.pid and "SIGKILL" in exited.why
    expired = next(r for r in history if r.kind == "lease.expired" and "SIGKILL" in r.why)
    again = [r for r in history if r.kind == "task.assigned" and r.task == expired.task and r.seq > expired.seq]
    assert len(again) == 1 and any(r.kind == "task.finished" and r.task == expired.task for r in history)
    assert sum(1 for r in history if r.kind == "worker.started") == 3, "the dead worker was replaced"
    assert verify_records(history).ok


def test_a_file_that_kills_every_worker_is_given_up_and_the_scan_completes(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "poison.py").write_text("x = 1\n")
    (repo / "views.py").write_text("import os\nfrom flask import request\n\n\ndef f():\n    os.system(request.args['c'])\n")
    ws = tmp_path / "ws"
    done = run_cli("scan", str(repo), "--workspace", str(ws), "--workers", "2", "--no-progress",
                   env={"FLEETLEDGER_FAULT": "scan.detect:poison.py:1:kill"})
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((ws / "findings.json").read_text())
    by_path = {f["path"]: f for f in report["files"]}
    assert by_path["poison.py"]["status"] == "skipped"
    assert "killed by SIGKILL during this step" in by_path["poison.py"]["reason"]
    assert by_path["views.py"]["status"] == "scanned" and report["findings"]
    sarif = json.loads((ws / "findings.sarif").read_text())
    validate(sarif)
    notes = [n["message"]["text"] for n in sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"]]
    assert any("poison.py" in n for n in notes)
    history = records(ws)
    assert sum(1 for r in history if r.kind == "step.failed" and "poison.py" in r.key) == 2
    assert verify_records(history).ok


RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff"
                         "\ud800-\udfff]")
"""What no terminal output or report for a person may hold raw (issue 13 item 8): control
characters but newline and tab, C1, bidi and zero-width characters, lone surrogates."""
HOSTILE_NAME = "x\x1b]0;pwned\x07\x1b[2J\x9b\u202etxt.py"
SHOWN_NAME = "x\\x1b]0;pwned\\x07\\x1b[2J\\x9b\\u202etxt.py"


def test_text_from_the_repository_cannot_drive_the_terminal(tmp_path: Path) -> None:
    """Issue 13 item 8: a file name and a snippet with escape sequences (OSC, CSI, a C1 CSI, a
    right-to-left override) and a rules file with such a key reach the Markdown report, every
    command's terminal output and the HTML report as visible escapes, never raw; the finding is
    still named, and the JSON outputs keep the exact text."""
    repo = tmp_path / "repo"
    (repo / "app").mkdir(parents=True)
    (repo / "app" / HOSTILE_NAME).write_text(
        "import subprocess\nfrom flask import request\n\n\ndef run():\n    return subprocess.check_output("
        "'ls ' + request.args['d'] + '\x1b[2J\x1b]0;ALL CLEAR\x07\x9b\u202e', shell=True)\n", encoding="utf-8")
    (repo / ".fleetledger.toml").write_text('[rules]\n"\\u001b[2J\\u009b" = 1\n', encoding="utf-8")
    ws = tmp_path / "ws"
    done = run_cli("scan", str(repo), "--workspace", str(ws), "--workers", "1", "--no-progress")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "warning: repository rule \\x1b[2J\\x9b refused" in done.stderr
    markdown = (ws / "findings.md").read_text(encoding="utf-8")
    assert SHOWN_NAME.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]") + ":6:" in markdown
    assert "'\\x1b[2J\\x1b]0;ALL CLEAR\\x07\\x9b\\u202e'" in markdown, "the snippet, escaped"
    outputs = {"scan": done.stdout + done.stderr, "findings.md": markdown}
    path = f"app/{HOSTILE_NAME}"
    for args in (["status"], ["audit", path], ["audit", "app/nothing\x1b[2J"], ["verify"],
                 ["status", "--watch", "--until-stopped"], ["report", "--html"]):
        shown = run_cli(*args, "--workspace", str(ws), env={"COLUMNS": "300"})
        assert shown.returncode == 0, shown.stdout + shown.stderr
        outputs[" ".join(args)] = shown.stdout + shown.stderr
    outputs["report.html"] = (ws / "report.html").read_text(encoding="utf-8")
    for name, text in outputs.items():
        assert not RAW_CONTROL.search(text), f"{name} holds a raw control character: {text!r}"
    assert SHOWN_NAME in outputs["audit " + path] and SHOWN_NAME in outputs["report.html"]
    assert "nothing\\x1b[2J" in outputs["audit app/nothing\x1b[2J"]
    for args in (["status", "--json"], ["audit", path, "--json"], ["log"]):
        shown = run_cli(*args, "--workspace", str(ws))
        assert shown.returncode == 0 and not RAW_CONTROL.search(shown.stdout), args
        parsed = [json.loads(line) for line in shown.stdout.splitlines()] if args[0] != "status" else [json.loads(shown.stdout)]
        assert parsed
    exact = json.dumps(path, ensure_ascii=False)
    assert any(exact in json.dumps(r, ensure_ascii=False) for r in parsed), "the JSON keeps the exact name"
    report = json.loads((ws / "findings.json").read_text(encoding="utf-8"))
    # The command injection, and bandit's Trojan Source check (B613) on the right-to-left override.
    assert sorted((f["candidate"]["rule_id"], f["candidate"]["path"]) for f in report["findings"]) == [
        ("B613", path), ("FLT-command", path)]
    for name in ("findings.json", "findings.sarif"):
        assert not RAW_CONTROL.search((ws / name).read_text(encoding="utf-8")), name

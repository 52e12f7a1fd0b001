"""Issue 14, items 5 and 6 (../shared/cases/11-versions-and-ci.md V1, V3): one run, one version
of the code; commands and advice that continue the same run from any folder."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fleetledger.verify import verify_records

from e2e import REPO_ROOT, _env, cli_from, count, injection_repo, installed_copy, kill_cli, records, run_cli, wait_for

pytestmark = pytest.mark.slow


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    return injection_repo(tmp_path, 4)


def test_a_resume_under_changed_code_stops_and_names_both_identities(tmp_path: Path, repo: Path) -> None:
    """V1: killed in the middle of investigation, then a triage rule changes in place: the same
    command does not continue (its report would mix verdicts of both versions); it exits 2
    naming what changed and the choices, appends nothing, and ``--new`` runs under the new code
    with reports naming only it."""
    install, ws = installed_copy(tmp_path), tmp_path / "ws"
    scan = ["scan", str(repo), "--workspace", str(ws), "--workers", "1", "--no-progress"]
    env = _env({"FLEETLEDGER_FAULT": "scan.investigate.after_step:2:stop"})
    proc = subprocess.Popen(cli_from(install, *scan), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    wait_for(lambda: count(ws, "step.done", "investigate") >= 2, what="investigation under way", proc=proc)
    kill_cli(proc)
    triage = install / "fleetledger" / "jobs" / "scan" / "triage.py"
    triage.write_text(triage.read_text() + "\n# a rule changed between the crash and the resume\n")
    before = len(records(ws))

    again = subprocess.run(cli_from(install, *scan), env=_env({}), capture_output=True, text=True, timeout=240)
    assert again.returncode == 2, again.stdout + again.stderr
    assert "was recorded under other code" in again.stderr and "triage: " in again.stderr and "--new" in again.stderr
    assert "resume --workspace" in again.stderr and "--upgrade" in again.stderr
    assert "analyst" not in again.stderr.split("(", 1)[1].split(")", 1)[0], "only what changed is named"
    assert len(records(ws)) == before, "nothing was appended"
    for command in (["resume"], ["recover"]):
        refused = subprocess.run(cli_from(install, *command, "--workspace", str(ws)), env=_env({}),
                                 capture_output=True, text=True, timeout=240)
        assert refused.returncode == 2 and "recorded under other code" in refused.stderr, refused.stderr

    fresh = subprocess.run(cli_from(install, *scan, "--new"), env=_env({}), capture_output=True, text=True, timeout=240)
    assert fresh.returncode == 0, fresh.stdout + fresh.stderr
    report = json.loads((ws / "findings.json").read_text())
    assert len(report["run"]["code"]) == 1
    sarif = json.loads((ws / "findings.sarif").read_text())
    assert sarif["runs"][0]["properties"]["code"] == report["run"]["code"]
    assert f"triage {report['run']['code'][0]['triage']}" in (ws / "findings.md").read_text()
    assert verify_records(records(ws)).ok


def interrupted_in_investigation(install: Path, repo: Path, ws: Path) -> list[str]:
    """Starts a scan with the package at ``install``, kills it once two investigate steps are
    recorded, and returns the scan's arguments."""
    scan = ["scan", str(repo), "--workspace", str(ws), "--workers", "1", "--no-progress"]
    proc = subprocess.Popen(cli_from(install, *scan), env=_env({"FLEETLEDGER_FAULT": "scan.investigate.after_step:2:stop"}),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wait_for(lambda: count(ws, "step.done", "investigate") >= 2, what="investigation under way", proc=proc)
    kill_cli(proc)
    return scan


def verdicts(ws: Path) -> list[tuple[str, int, str, str, str]]:
    """What the run concluded per finding: path, line, rule, verdict and the analyst's rationale."""
    findings = json.loads((ws / "findings.json").read_text())["findings"]
    return sorted((f["candidate"]["path"], f["candidate"]["line"], f["candidate"]["rule_id"], f["verdict"],
                   f["investigation"]["rationale"] + " / " + f["revalidation"]["rationale"]) for f in findings)


def test_resume_upgrade_keeps_what_unchanged_code_decided_and_redoes_the_rest(tmp_path: Path, repo: Path) -> None:
    """V1, the explicit choice: killed in the middle of investigation, then the analyst changes
    (its verdicts' wording). ``resume --upgrade`` keeps the detect results (their code did not
    change), plans investigation again under the new analyst and every later sprint after it,
    and records the decision with the session's first record: killed right after it, a plain
    resume finishes the upgraded run. The findings then equal those of a fresh run under the new
    code: no verdict of the old analyst is left, and no detect step ran again."""
    install, ws = installed_copy(tmp_path), tmp_path / "ws"
    interrupted_in_investigation(install, repo, ws)
    offline = install / "fleetledger" / "models" / "offline.py"
    text = offline.read_text()
    assert 'rationale=" ".join([*judgement.facts, conclusion])' in text
    offline.write_text(text.replace('rationale=" ".join([*judgement.facts, conclusion])',
                                    'rationale=" ".join([*judgement.facts, conclusion, "(analyst v2)"])'))

    refused = subprocess.run(cli_from(install, "resume", "--workspace", str(ws), "--no-progress"), env=_env({}),
                             capture_output=True, text=True, timeout=240)
    assert refused.returncode == 2 and "--upgrade" in refused.stderr, refused.stderr
    before = records(ws)
    killed = subprocess.run(cli_from(install, "resume", "--workspace", str(ws), "--no-progress", "--upgrade"),
                            env=_env({"FLEETLEDGER_FAULT": "recovery.after_resume_record:1:kill"}),
                            capture_output=True, text=True, timeout=240)
    assert killed.returncode == -9, killed.stdout + killed.stderr
    decision = next(r for r in records(ws) if r.kind == "decision" and "upgrade" in r.payload)
    assert decision.payload["upgrade"]["kept"] == ["detect"] and decision.payload["upgrade"]["redone"] == ["investigate"]
    assert "analyst" in decision.payload["upgrade"]["changed"] and "detect" not in decision.payload["upgrade"]["changed"]
    assert decision.seq == len(before) + 2, "the decision rides with the session's first record"

    done = subprocess.run(cli_from(install, "resume", "--workspace", str(ws), "--no-progress"), env=_env({}),
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stdout + done.stderr
    after = [r for r in records(ws) if r.seq > decision.seq]
    assert not [r for r in after if r.kind == "step.done" and (r.key or "").startswith(("detect", "brief"))]
    candidates = next(r for r in before if r.kind == "task.planned" and r.key.startswith("investigate")).payload
    assert len([r for r in after if r.kind == "step.done" and (r.key or "").startswith("investigate")]) == \
        len(candidates["inputs"]["items"]), "every candidate investigated again, by the new analyst"

    fresh = tmp_path / "fresh"
    assert subprocess.run(cli_from(install, "scan", str(repo), "--workspace", str(fresh), "--workers", "1",
                                   "--no-progress"), env=_env({}), capture_output=True, timeout=240).returncode == 0
    assert verdicts(ws) == verdicts(fresh)
    assert all("(analyst v2)" in v[4] for v in verdicts(ws)) and len(verdicts(ws)) == 4
    report = json.loads((ws / "findings.json").read_text())
    assert len(report["run"]["code"]) == 2, "both versions contributed: detect under the old, the rest under the new"
    assert verify_records(records(ws)).ok


def test_an_upgrade_after_a_change_of_the_detector_redoes_every_begun_sprint(tmp_path: Path, repo: Path) -> None:
    """The taint engine's code decides detect, so an upgrade after it changed keeps nothing: the
    whole run is planned again, and ``resume`` says so with counts."""
    install, ws = installed_copy(tmp_path), tmp_path / "ws"
    interrupted_in_investigation(install, repo, ws)
    engine = install / "fleetledger" / "analysis" / "engine.py"
    engine.write_text(engine.read_text() + "\n# the engine changed\n")
    done = subprocess.run(cli_from(install, "resume", "--workspace", str(ws), "--no-progress", "--upgrade"),
                          env=_env({}), capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "planned again under this code: detect, investigate" in done.stdout, done.stdout
    assert "results kept: nothing" in done.stdout and "step result(s) of the old code set aside" in done.stdout
    decision = next(r for r in records(ws) if r.kind == "decision" and "upgrade" in r.payload)
    assert "detect" in decision.payload["upgrade"]["changed"] and "analyst" not in decision.payload["upgrade"]["changed"]
    assert len([r for r in records(ws) if r.seq > decision.seq and r.kind == "step.done"
                and (r.key or "").startswith("detect")]) == 4
    assert len(verdicts(ws)) == 4 and verify_records(records(ws)).ok


def test_a_workspace_with_an_unfinished_run_refuses_another_target(tmp_path: Path, repo: Path) -> None:
    """Item 6: ``scan`` of another tree in a workspace whose run is unfinished would replace
    that run's reports; it is refused unless ``--new``. A finished run asked for again after
    another target's run says its reports were replaced."""
    other = tmp_path / "other"
    shutil.copytree(repo, other)
    ws = tmp_path / "ws"
    proc = subprocess.Popen(cli_from(REPO_ROOT, "scan", str(repo), "--workspace", str(ws), "--workers", "1",
                                     "--no-progress"),
                            env=_env({"FLEETLEDGER_FAULT": "scan.investigate.after_step:1:stop"}),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wait_for(lambda: count(ws, "step.done", "investigate") >= 1, what="investigation under way", proc=proc)
    kill_cli(proc)
    refused = run_cli("scan", str(other), "--workspace", str(ws), "--no-progress")
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "holds the unfinished run" in refused.stderr and "--new" in refused.stderr
    assert run_cli("resume", "--workspace", str(ws), "--no-progress").returncode == 0
    assert run_cli("scan", str(other), "--workspace", str(ws), "--no-progress").returncode == 0
    first = run_cli("scan", str(repo), "--workspace", str(ws), "--no-progress")
    assert first.returncode == 0 and "already finished" in first.stdout
    assert f"are those of the later run" in first.stdout and str(other) in first.stdout, first.stdout


def test_the_recorded_command_uses_absolute_paths(tmp_path: Path, repo: Path) -> None:
    """Item 6: the command recorded for the run (ledger, run-state file) names the target and
    the workspace absolutely, so it means the same job from any folder."""
    done = run_cli("scan", "repo", "--workspace", "ws", "--no-progress", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    started = next(r for r in records(tmp_path / "ws") if r.kind == "run.started")
    expected = ["fleetledger", "scan", str(repo.resolve()), "--workspace", str((tmp_path / "ws").resolve())]
    assert started.payload["job"]["argv"] == expected
    state = json.loads((tmp_path / "ws" / "sprint-plan-state.json").read_text())
    assert state["job"]["argv"] == expected

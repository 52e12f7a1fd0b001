"""The fix sprint end to end (issue 18): real CLI processes, real workers, real SIGKILLs at
named fault points; the patches exported, applied with approval, and accounted for."""

from __future__ import annotations

import json
import signal
import textwrap
from collections import Counter
from pathlib import Path

import pytest

from fleetledger.verify import verify_records

from e2e import count, kill_cli, records, run_cli, start_cli, wait_for
from sarif_schema import validate

pytestmark = pytest.mark.slow

VIEWS = '''\
import sqlite3
import subprocess
import yaml
from flask import Flask, request

app = Flask(__name__)


@app.route("/load")
def load():
    return repr(yaml.load(request.data))


@app.route("/ping")
def ping():
    host = request.args["host"]
    subprocess.run("ping -c 1 " + host, shell=True)
    return "ok"


@app.route("/user")
def user():
    db = sqlite3.connect("app.db")
    rows = db.execute("SELECT * FROM users WHERE name = '" + request.args["name"] + "'")
    return repr(rows.fetchall())
'''

ACCOUNT = '''\
import hashlib


def digest(password):
    return hashlib.md5(password.encode()).hexdigest()
'''


def app_repo(root: Path) -> Path:
    root.mkdir()
    (root / "views.py").write_text(VIEWS)
    (root / "account.py").write_text(ACCOUNT)
    return root


def scan_args(repo: Path, ws: Path) -> tuple[str, ...]:
    return ("scan", str(repo), "--workspace", str(ws), "--workers", "2", "--fix", "--no-progress")


def steps(ws: Path, kind: str, prefix: str) -> Counter[str]:
    return Counter(r.payload["name"] for r in records(ws)
                   if r.kind == kind and r.payload.get("name", "").startswith(prefix))


def findings(ws: Path) -> list[dict]:
    return json.loads((ws / "findings.json").read_text())["findings"]


@pytest.fixture(scope="module")
def fixed_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A finished scan with --fix of a small app: (repository, workspace)."""
    base = tmp_path_factory.mktemp("fixrun")
    repo, ws = app_repo(base / "repo"), base / "ws"
    done = run_cli(*scan_args(repo, ws))
    assert done.returncode == 0, done.stderr
    return repo, ws


def test_fix_sprint_proposes_validates_and_exports(fixed_run: tuple[Path, Path]) -> None:
    repo, ws = fixed_run
    shown = findings(ws)
    by_rule = {f["candidate"]["rule_id"]: f for f in shown}
    assert {"FLT-deserialization", "FLT-command", "FLT-sql", "FLC-weak-hash"} <= set(by_rule)
    for rule in ("FLT-deserialization", "FLT-command", "FLT-sql", "FLC-weak-hash"):
        fix = by_rule[rule]["fix"]
        assert fix["validation"]["ok"], (rule, fix)
        assert fix["worker"].startswith("w") and fix["proposal"]["author"].startswith("rule:")
        patch = ws / "patches" / f"{by_rule[rule]['candidate']['id']}.diff"
        assert patch.read_text() == fix["proposal"]["diff"]
    # only validated patches are exported
    exported = {p.stem for p in (ws / "patches").iterdir()}
    assert exported == {f["candidate"]["id"] for f in shown if (f.get("fix") or {}).get("validation", {}) and f["fix"]["validation"]["ok"]}
    log = json.loads((ws / "findings.sarif").read_text())
    validate(log)
    with_fixes = [r for r in log["runs"][0]["results"] if r.get("fixes")]
    assert len(with_fixes) >= 4
    sql = next(r for r in with_fixes if r["ruleId"] == "FLT-sql")
    (change,) = sql["fixes"][0]["artifactChanges"]
    assert change["artifactLocation"]["uri"] == "views.py"
    assert "?" in change["replacements"][0]["insertedContent"]["text"]
    md = (ws / "findings.md").read_text()
    assert md.count("**Proposed fix**") == len(shown)
    assert f"fleetledger patch apply {by_rule['FLT-sql']['candidate']['id']}" in md
    # every finding proposed once and each proposal with a diff validated once; the repository untouched
    assert max(steps(ws, "step.done", "fix:").values()) == 1 and len(steps(ws, "step.done", "fix:")) == len(shown)
    assert max(steps(ws, "step.done", "fix-check:").values()) == 1
    assert (repo / "views.py").read_text() == VIEWS and (repo / "account.py").read_text() == ACCOUNT
    assert verify_records(records(ws)).ok


def test_a_worker_killed_between_proposal_and_validation_loses_and_repeats_neither(
        fixed_run: tuple[Path, Path], tmp_path: Path) -> None:
    _, reference = fixed_run
    repo, ws = app_repo(tmp_path / "repo"), tmp_path / "ws"
    # The first worker to reach its 2nd proposal's validation is SIGKILLed there: that proposal
    # is recorded, its validation not begun.
    done = run_cli(*scan_args(repo, ws), env={"FLEETLEDGER_FAULT": "scan.fix.before_check:2:kill",
                                              "FLEETLEDGER_FAULT_ONCE": str(tmp_path / "fired")})
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "fired").exists(), "the fault fired"
    shown = findings(ws)
    proposed, checked = steps(ws, "step.done", "fix:"), steps(ws, "step.done", "fix-check:")
    assert len(proposed) == len(shown) and max(proposed.values()) == 1, "no proposal lost or made twice"
    assert max(steps(ws, "step.intent", "fix:").values()) == 1, "no proposal begun twice"
    with_diff = sum(1 for f in shown if f["fix"]["proposal"]["diff"])
    assert len(checked) == with_diff and max(checked.values()) == 1, "no validation lost or done twice"
    assert sorted(p.name for p in (ws / "patches").iterdir()) == sorted(p.name for p in (reference / "patches").iterdir())
    assert verify_records(records(ws)).ok


def test_coordinator_killed_after_a_proposal_resumes_with_the_same_command(tmp_path: Path) -> None:
    repo, ws = app_repo(tmp_path / "repo"), tmp_path / "ws"
    args = scan_args(repo, ws)
    # The worker stops itself before its first validation; the coordinator is killed then.
    proc = start_cli(*args, env={"FLEETLEDGER_FAULT": "scan.fix.before_check:1:stop"})
    wait_for(lambda: sum(steps(ws, "step.done", "fix:").values()) >= 1 if (ws / "ledger.sqlite3").exists() else False,
             what="a recorded proposal", proc=proc)
    kill_cli(proc)
    assert proc.returncode == -signal.SIGKILL
    assert not steps(ws, "step.done", "fix-check:"), "the kill came between proposal and validation"
    rerun = run_cli(*args)
    assert rerun.returncode == 0, rerun.stderr
    assert max(steps(ws, "step.intent", "fix:").values()) == 1
    assert max(steps(ws, "step.done", "fix-check:").values()) == 1
    assert all(f["fix"]["validation"]["ok"] for f in findings(ws) if f["fix"]["proposal"]["diff"])


def _policy(tmp_path: Path) -> Path:
    path = tmp_path / "policy.toml"
    path.write_text('[policy]\nwrite = ["$WORKSPACE/**", "$TARGET/**"]\n')
    return path


def _sql_finding(ws: Path) -> dict:
    return next(f for f in findings(ws) if f["candidate"]["rule_id"] == "FLT-sql")


def test_patch_apply_needs_the_policy_and_an_approval_and_applying_twice_changes_nothing(tmp_path: Path) -> None:
    repo, ws = app_repo(tmp_path / "repo"), tmp_path / "ws"
    assert run_cli(*scan_args(repo, ws)).returncode == 0
    finding = _sql_finding(ws)
    fid = finding["candidate"]["id"]
    denied = run_cli("patch", "apply", fid, "--workspace", str(ws))
    assert denied.returncode == 75 and "write" in denied.stderr
    policy = _policy(tmp_path)
    unapproved = run_cli("patch", "apply", fid, "--workspace", str(ws), "--policy", str(policy))
    assert unapproved.returncode == 75 and f"approve --effect patch-apply:{fid}" in unapproved.stderr
    assert (repo / "views.py").read_text() == VIEWS
    assert count(ws, "policy.denied", f"patch-apply:{fid}") == 2
    approved = run_cli("approve", "--workspace", str(ws), "--effect", f"patch-apply:{fid}", "--reason", "read the diff")
    assert approved.returncode == 0, approved.stderr
    first = run_cli("patch", "apply", fid, "--workspace", str(ws), "--policy", str(policy))
    assert first.returncode == 0, first.stderr
    patched = (repo / "views.py").read_text()
    assert "WHERE name = ?\", (request.args[\"name\"],))" in patched
    second = run_cli("patch", "apply", fid, "--workspace", str(ws), "--policy", str(policy))
    assert second.returncode == 0 and "nothing changed" in second.stdout
    assert (repo / "views.py").read_text() == patched
    assert count(ws, "effect.done", f"patch-apply:{fid}") == 1
    # another patch of the same file was made against the file before this one: refused, nothing written
    other = next(f for f in findings(ws) if f["candidate"]["rule_id"] == "FLT-deserialization")["candidate"]["id"]
    run_cli("approve", "--workspace", str(ws), "--effect", "patch-apply", "--reason", "all of them")
    stale = run_cli("patch", "apply", other, "--workspace", str(ws), "--policy", str(policy))
    assert stale.returncode == 75 and "changed since the scan" in stale.stderr
    assert (repo / "views.py").read_text() == patched and count(ws, "effect.intent", f"patch-apply:{other}") == 0
    # the account: who wrote the patch on that file, from which finding, why, checked how, approved by whom
    audit = run_cli("audit", "views.py", "--workspace", str(ws))
    assert audit.returncode == 0, audit.stderr
    block = audit.stdout.split(f"patch for finding {fid} ")[1].split("\n\n")[0]
    assert f"written by: worker {finding['fix']['worker']}, rule:sql-parameters" in block
    assert "why it looks like that: the SQL text was built from outside data" in block
    assert "trace: sink: the SQL execute() runs" in block
    assert "validation: passed: all checks passed" in block
    assert ": read the diff" in block and "applied: applied at" in block
    # the HTML report gives the same account
    assert run_cli("report", "--html", "--workspace", str(ws)).returncode == 0
    page = (ws / "report.html").read_text()
    section = page.split('<section id="patches">')[1].split("</section>")[0]
    row = next(r for r in section.split("<tr>") if fid in r)
    assert "rule:sql-parameters" in row and finding["fix"]["worker"] in row and "read the diff" in row
    assert "passed: all checks passed" in row and "<td>applied</td></tr>" in row


@pytest.mark.parametrize("point", ["effect.after_intent", "effect.before_done"])
def test_a_kill_between_approval_and_apply_resumes_without_losing_or_repeating_it(tmp_path: Path, point: str) -> None:
    repo, ws = app_repo(tmp_path / "repo"), tmp_path / "ws"
    assert run_cli(*scan_args(repo, ws)).returncode == 0
    fid = _sql_finding(ws)["candidate"]["id"]
    policy = _policy(tmp_path)
    assert run_cli("approve", "--workspace", str(ws), "--effect", f"patch-apply:{fid}", "--reason", "ok").returncode == 0
    killed = run_cli("patch", "apply", fid, "--workspace", str(ws), "--policy", str(policy),
                     env={"FLEETLEDGER_FAULT": f"{point}:1:kill"})
    assert killed.returncode == -signal.SIGKILL
    assert count(ws, "effect.intent", f"patch-apply:{fid}") == 1 and count(ws, "effect.done", f"patch-apply:{fid}") == 0
    written = (repo / "views.py").read_text() != VIEWS
    assert written == (point == "effect.before_done")
    again = run_cli("patch", "apply", fid, "--workspace", str(ws), "--policy", str(policy))
    assert again.returncode == 0, again.stderr
    text = (repo / "views.py").read_text()
    assert text.count("WHERE name = ?") == 1 and "+ request.args" not in text.split("def user")[1]
    assert count(ws, "effect.intent", f"patch-apply:{fid}") == 1, "the intent is not recorded twice"
    done = [r for r in records(ws) if r.kind == "effect.done" and r.key == f"patch-apply:{fid}"]
    assert len(done) == 1 and done[0].payload["changed"] is (point == "effect.after_intent")
    assert verify_records(records(ws)).ok


def test_the_users_policy_may_ask_for_the_fix_sprint_and_a_repository_may_not(tmp_path: Path) -> None:
    from fleetledger.policy import Policy

    assert Policy().body() == {k: v for k, v in Policy(fix=False).body().items()} and "fix" not in Policy().body()
    assert Policy(fix=True).hash != Policy().hash
    repo, ws = app_repo(tmp_path / "repo"), tmp_path / "ws"
    (repo / ".fleetledger.toml").write_text("[rules]\nfix = true\n")
    assert not Policy().narrowed_by(repo / ".fleetledger.toml").fix
    plain = run_cli("scan", str(repo), "--workspace", str(tmp_path / "plain"), "--workers", "1", "--no-progress")
    assert plain.returncode == 0, plain.stderr
    assert not (tmp_path / "plain" / "patches").exists(), "the repository's rules cannot turn the fix sprint on"
    policy = tmp_path / "policy.toml"
    policy.write_text("[policy]\nfix = true\n")
    done = run_cli("scan", str(repo), "--workspace", str(ws), "--workers", "1", "--no-progress", "--policy", str(policy))
    assert done.returncode == 0, done.stderr
    started = next(r for r in records(ws) if r.kind == "run.started")
    assert "fix" in started.payload["sprints"] and "--fix" in started.payload["job"]["argv"]
    assert any((ws / "patches").iterdir())


def test_the_repositorys_tests_run_on_the_patched_copy_when_the_policy_lists_pytest(tmp_path: Path) -> None:
    repo, ws = app_repo(tmp_path / "repo"), tmp_path / "ws"
    (repo / "tests").mkdir()
    # the digest's length is part of what the repository's tests promise: the sha256 patch breaks it
    (repo / "tests" / "test_account.py").write_text(
        "import sys, pathlib\nsys.path.insert(0, str(pathlib.Path(__file__).parent.parent))\n"
        "from account import digest\n\n\ndef test_digest_is_32_hex_digits():\n    assert len(digest('pw')) == 32\n")
    policy = tmp_path / "policy.toml"
    policy.write_text('[policy]\ntools = ["bandit", "analyst", "brief", "pytest"]\n')
    done = run_cli(*scan_args(repo, ws), "--policy", str(policy))
    assert done.returncode == 0, done.stderr
    shown = {f["candidate"]["rule_id"]: f for f in findings(ws)}
    hashed = shown["FLC-weak-hash"]["fix"]["validation"]
    assert not hashed["ok"] and hashed["tests"].startswith("failed: pytest exit 1 with the patch, 0 without"), hashed
    assert "the repository's tests failed" in hashed["reason"]
    assert not (ws / "patches" / f"{shown['FLC-weak-hash']['candidate']['id']}.diff").exists()
    sql = shown["FLT-sql"]["fix"]["validation"]
    assert sql["ok"] and sql["tests"].startswith("passed"), sql
    assert (repo / "account.py").read_text() == ACCOUNT, "the tests ran on a copy"
    # without pytest in the policy's tools they are not run, and the record says why
    plain = tmp_path / "plain"
    assert run_cli(*scan_args(repo, plain)).returncode == 0
    assert all("the policy's tools do not include" in f["fix"]["validation"]["tests"]
               for f in findings(plain) if f["fix"]["proposal"]["diff"])

"""Attacks on the fix sprint (issue 18): a hostile repository, a hostile model's patch, a careless
user. Each test is a regression test of a defect found and fixed."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from e2e import count, run_cli
from test_models import keys, serve  # noqa: F401 - the fake model endpoints and their keys

VIEWS = '''\
import yaml
from flask import Flask, request

app = Flask(__name__)


@app.route("/conf")
def conf():
    return repr(yaml.load(request.data))
'''


def _scan_package(tmp_path: Path) -> tuple[Path, Path, str]:
    """A scan with --fix of ``repo/pkg/views.py``: (repository, workspace, the finding's id)."""
    repo, ws = tmp_path / "repo", tmp_path / "ws"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "views.py").write_text(VIEWS)
    done = run_cli("scan", str(repo), "--workspace", str(ws), "--workers", "1", "--fix", "--no-progress")
    assert done.returncode == 0, done.stderr
    shown = json.loads((ws / "findings.json").read_text())["findings"]
    fid = next(f["candidate"]["id"] for f in shown if (f.get("fix") or {}).get("validation", {}).get("ok"))
    return repo, ws, fid


def test_patch_apply_refuses_a_file_reached_through_a_folder_replaced_by_a_link(tmp_path: Path) -> None:
    repo, ws, fid = _scan_package(tmp_path)
    policy = tmp_path / "policy.toml"
    policy.write_text('[policy]\nwrite = ["$WORKSPACE/**", "$TARGET/**"]\n')
    assert run_cli("approve", "--workspace", str(ws), "--effect", f"patch-apply:{fid}", "--reason", "ok").returncode == 0
    # since the scan, the package folder became a link to a folder outside the repository
    outside = tmp_path / "outside"
    (repo / "pkg").rename(outside)
    (repo / "pkg").symlink_to(outside, target_is_directory=True)
    refused = run_cli("patch", "apply", fid, "--workspace", str(ws), "--policy", str(policy))
    assert refused.returncode == 75 and "link" in refused.stderr, refused.stderr
    assert (outside / "views.py").read_text() == VIEWS, "nothing is written outside the repository"
    assert count(ws, "effect.intent", f"patch-apply:{fid}") == 0


def _model_scan(serve, tmp_path: Path, diff: str, rationale: str = "json is plain data") -> list[dict]:
    """A scan with --fix and a paid model whose every fix answer is ``diff``: the findings."""
    from test_fix_models import VIEWS as PICKLED, is_fix, patch_answer
    from test_models import MODELS, model_config, success, verdict

    from fleetledger.coordinator import Coordinator, RunOptions
    from fleetledger.jobs.scan.job import ScanJob
    from fleetledger.policy import Policy
    from fleetledger.workspace import Workspace

    api = serve("openai", lambda asked: patch_answer("openai", {"diff": diff, "rationale": rationale})
                if is_fix(asked) else success("openai", verdict(cwe=502)))
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "views.py").write_text(PICKLED)
    spec = f"openai:{MODELS['openai']}"
    job = ScanJob(repo, workspace=tmp_path / "ws", argv=["fleetledger", "scan", str(repo), "--model", spec, "--fix"],
                  model=spec, fix=True)
    result = Coordinator(job, Workspace.at(tmp_path / "ws"), RunOptions(workers=1, sandbox="bubblewrap"),
                         policy=Policy(models=("offline", "openai")), model_config=model_config(api)).run()
    assert result.exit_code == 0, result.message
    shown = json.loads((tmp_path / "ws" / "findings.json").read_text())["findings"]
    return [f for f in shown if f["fix"]["proposal"]["author"].startswith("model:")
            and f["candidate"]["rule_id"] == "FLT-deserialization"]


def test_a_models_patch_naming_another_file_is_not_exported(serve, tmp_path: Path) -> None:
    from test_fix_models import DIFF

    # the hunks fit views.py, the headers name a file outside the repository: `git apply` or
    # `patch -p1` of the exported diff would write there, not where the patch was validated
    hostile = DIFF.replace("a/views.py", "a/../../home/user/.bashrc").replace("b/views.py", "b/../../home/user/.bashrc")
    (pickled,) = _model_scan(serve, tmp_path, hostile)
    check = pickled["fix"]["validation"]
    assert not check["ok"] and "names another file" in check["reason"], check
    assert not (tmp_path / "ws" / "patches" / f"{pickled['candidate']['id']}.diff").exists()


def test_a_models_patch_is_exported_as_the_change_it_makes_to_the_findings_file(serve, tmp_path: Path) -> None:
    from test_fix_models import DIFF

    # a sloppy but applicable diff (no headers, hunk counts wrong, a trailing note) is recorded,
    # validated and exported in the form `unified_diff` writes: headers naming views.py only
    body = DIFF.split("\n", 2)[2].replace("@@ -1,4 +1,4 @@", "@@ -1,9 +1,9 @@") + "some trailing note\n"
    (pickled,) = _model_scan(serve, tmp_path, body)
    assert pickled["fix"]["validation"]["ok"], pickled["fix"]
    exported = (tmp_path / "ws" / "patches" / f"{pickled['candidate']['id']}.diff").read_text()
    assert exported == DIFF


def test_the_repositorys_tests_never_run_unconfined(tmp_path: Path) -> None:
    repo, ws, marker = tmp_path / "repo", tmp_path / "ws", tmp_path / "ran-on-the-host"
    (repo / "tests").mkdir(parents=True)
    (repo / "views.py").write_text(VIEWS)
    # a hostile conftest.py: under --sandbox none it would run on the host, the user's files in reach
    (repo / "tests" / "conftest.py").write_text(f"open({str(marker)!r}, 'w').write('pwned')\n")
    (repo / "tests" / "test_views.py").write_text("def test_nothing():\n    pass\n")
    policy = tmp_path / "policy.toml"
    policy.write_text('[policy]\ntools = ["bandit", "analyst", "brief", "pytest"]\n')
    done = run_cli("scan", str(repo), "--workspace", str(ws), "--workers", "1", "--fix", "--no-progress",
                   "--sandbox", "none", "--policy", str(policy))
    assert done.returncode == 0, done.stderr
    assert not marker.exists(), "the repository's code ran outside a sandbox"
    checks = [f["fix"]["validation"] for f in json.loads((ws / "findings.json").read_text())["findings"]
              if f["fix"]["proposal"]["diff"]]
    assert checks and all(c["tests"].startswith("not run: the workers run without a sandbox") for c in checks), checks


EVAL_VIEW = '''\
from flask import Flask, request

app = Flask(__name__)


@app.route("/x")
def x():
    return eval(request.args["d"])
'''


@pytest.mark.parametrize("disguise", [
    '    return getattr(__builtins__, "ev" + "al")(request.args["d"])',
    '    return __builtins__.__dict__["eval"](request.args["d"])',
    '    import functools\n    return functools.partial(eval)(request.args["d"])',
    '    return list(map(eval, [request.args["d"]]))[0]',
])
def test_a_patch_that_hides_the_sink_from_the_re_scan_is_not_validated(tmp_path: Path, disguise: str) -> None:
    from fleetledger.jobs.scan.detect import detect_file
    from fleetledger.jobs.scan.fixes import Proposal, validate
    from fleetledger.jobs.scan.fixes.text import unified_diff

    (tmp_path / "views.py").write_text(EVAL_VIEW)
    (finding,) = [c for c in detect_file(tmp_path, "views.py").candidates if c.rule_id == "FLT-code"]
    after = EVAL_VIEW.replace('    return eval(request.args["d"])', disguise)
    proposal = Proposal(finding=finding.id, path="views.py", base_sha256=hashlib.sha256(EVAL_VIEW.encode()).hexdigest(),
                        author="model:openai:x", rationale="eval is gone", diff=unified_diff("views.py", EVAL_VIEW, after))
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    check = validate(proposal, finding, EVAL_VIEW.encode(), scratch=scratch)
    assert not check.ok and "a re-scan cannot follow" in check.reason, check
    # a real fix of the same finding still passes
    safe = EVAL_VIEW.replace("from flask", "import ast\nfrom flask").replace("return eval(", "return ast.literal_eval(")
    fixed = validate(Proposal(**{**proposal.__dict__, "diff": unified_diff("views.py", EVAL_VIEW, safe)}), finding,
                     EVAL_VIEW.encode(), scratch=tmp_path / "scratch2")
    assert fixed.ok, fixed


def test_escape_sequences_in_a_models_rationale_reach_no_report_or_terminal(serve, tmp_path: Path) -> None:
    from test_fix_models import DIFF

    hostile = "fine\x1b]0;owned\x07\x1b[2J\u202e evil"
    (pickled,) = _model_scan(serve, tmp_path, DIFF, rationale=hostile)
    assert pickled["fix"]["validation"]["ok"]
    ws = tmp_path / "ws"
    assert "\x1b" not in (ws / "findings.md").read_text() and "\u202e" not in (ws / "findings.md").read_text()
    audit = run_cli("audit", "views.py", "--workspace", str(ws))
    assert audit.returncode == 0 and "fine" in audit.stdout, audit.stderr
    assert "\x1b" not in audit.stdout and "\u202e" not in audit.stdout
    assert run_cli("report", "--html", "--workspace", str(ws)).returncode == 0
    assert "\x1b" not in (ws / "report.html").read_text()


def test_patch_apply_refuses_a_patch_whose_records_were_edited(tmp_path: Path) -> None:
    import sqlite3

    from fleetledger.jobs.scan.fixes import Proposal
    from fleetledger.jobs.scan.fixes.validate import patched_bytes

    repo, ws, fid = _scan_package(tmp_path)
    policy = tmp_path / "policy.toml"
    policy.write_text('[policy]\nwrite = ["$WORKSPACE/**", "$TARGET/**"]\n')
    # someone who can write the ledger file edits the recorded patch and its validated hash (no re-chaining)
    db = sqlite3.connect(ws / "ledger.sqlite3")
    db.execute("DROP TRIGGER records_no_update")
    done = {json.loads(p)["name"]: (seq, json.loads(p)) for seq, p in
            db.execute("SELECT seq, payload FROM records WHERE kind = 'step.done'") if "name" in json.loads(p)}
    seq, proposal = done[f"fix:{fid}"]
    proposal["result"]["diff"] = proposal["result"]["diff"].replace(
        "safe_load(request.data))", "safe_load(request.data)) or __import__('os').system('id')")
    forged = patched_bytes(Proposal.from_json(proposal["result"]), VIEWS.encode())
    db.execute("UPDATE records SET payload = ? WHERE seq = ?", (json.dumps(proposal), seq))
    seq, check = done[f"fix-check:{fid}"]
    check["result"]["patched_sha256"] = hashlib.sha256(forged).hexdigest()
    db.execute("UPDATE records SET payload = ? WHERE seq = ?", (json.dumps(check), seq))
    db.commit()
    db.close()
    run_cli("approve", "--workspace", str(ws), "--effect", f"patch-apply:{fid}", "--reason", "ok")
    refused = run_cli("patch", "apply", fid, "--workspace", str(ws), "--policy", str(policy))
    assert refused.returncode != 0 and "edited" in refused.stderr, (refused.returncode, refused.stderr)
    assert (repo / "pkg" / "views.py").read_text() == VIEWS
    assert count(ws, "effect.intent", f"patch-apply:{fid}") == 0


@pytest.mark.parametrize("odd", ["x = 1 \x0c\n", "# a\u2028b\n", "S = 'a\x85b'\n", "\x0c\n"])
def test_a_line_break_python_does_not_count_does_not_move_the_patch(tmp_path: Path, odd: str) -> None:
    """``str.splitlines`` breaks at form feeds, ``\\x85``, ``\\u2028``; the parser does not."""
    from fleetledger.jobs.scan.detect import detect_file
    from fleetledger.jobs.scan.fixes import propose, validate
    from fleetledger.jobs.scan.fixes.validate import patched_bytes

    text = VIEWS.replace("app = Flask", odd + "app = Flask")
    (tmp_path / "views.py").write_text(text)
    (finding,) = [c for c in detect_file(tmp_path, "views.py").candidates if c.rule_id == "FLT-deserialization"]
    proposal = propose(finding, text.encode())
    assert proposal.diff is not None, proposal.rationale
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    assert validate(proposal, finding, text.encode(), scratch=scratch).ok
    assert patched_bytes(proposal, text.encode()).decode() == text.replace("yaml.load(", "yaml.safe_load(")


def test_validation_writes_nothing_outside_its_scratch_folder(tmp_path: Path) -> None:
    from fleetledger.jobs.scan.detect import detect_file
    from fleetledger.jobs.scan.fixes import propose, validate

    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "views.py").write_text(VIEWS)
    (finding,) = [c for c in detect_file(tmp_path / "repo", "views.py").candidates if c.rule_id == "FLT-deserialization"]
    proposal = propose(finding, VIEWS.encode())
    scratch = tmp_path / "work" / "scratch"
    scratch.mkdir(parents=True)
    check = validate(proposal, finding, VIEWS.encode(), scratch=scratch, context={"../../escaped.py": b"x = 1\n"})
    assert not (tmp_path / "work" / "escaped.py").exists() and not (tmp_path / "escaped.py").exists()
    assert not check.ok and "not a path inside" in check.reason


PROBE = '''\
import atexit, os, sys


def _probe():
    parent, seen = os.getppid(), []
    for fd in os.listdir(f"/proc/{parent}/fd"):
        try:
            open(f"/proc/{parent}/fd/{fd}", "w").close()
            seen.append(f"wrote-to-worker-fd-{fd}")
        except OSError:
            pass
    seen.append("stdin=" + os.readlink("/proc/self/fd/0"))
    sys.stdout.write(" ".join(seen) + "\\n")
    sys.stdout.flush()


atexit.register(_probe)
'''


def test_the_repositorys_tests_cannot_reach_the_workers_pipes(tmp_path: Path) -> None:
    """The suite runs as the worker's user; through the worker's stdin or ``/proc/PPID/fd`` it
    could read its commands or write records in its name (a forged passing validation)."""
    repo, ws = tmp_path / "repo", tmp_path / "ws"
    (repo / "tests").mkdir(parents=True)
    (repo / "views.py").write_text(VIEWS)
    (repo / "tests" / "conftest.py").write_text(PROBE)
    (repo / "tests" / "test_views.py").write_text("def test_nothing():\n    pass\n")
    policy = tmp_path / "policy.toml"
    policy.write_text('[policy]\ntools = ["bandit", "analyst", "brief", "pytest"]\n')
    done = run_cli("scan", str(repo), "--workspace", str(ws), "--workers", "1", "--fix", "--no-progress",
                   "--policy", str(policy))
    assert done.returncode == 0, done.stderr
    (check,) = [f["fix"]["validation"] for f in json.loads((ws / "findings.json").read_text())["findings"]
                if f["fix"]["proposal"]["diff"]]
    assert check["tests"].startswith("passed") and "stdin=/dev/null" in check["tests"], check
    assert "wrote-to-worker-fd" not in check["tests"], check


def test_a_finding_id_from_a_taken_over_worker_names_no_file_outside_the_workspace() -> None:
    from types import SimpleNamespace

    from fleetledger.jobs.scan.fix_export import patch_files

    fix = {"proposal": {"diff": "--- a/x.py\n+++ b/x.py\n"}, "validation": {"ok": True}}
    found = [SimpleNamespace(candidate=SimpleNamespace(id=i), validated_fix=fix)
             for i in ("0123456789abcdef", "../../../../home/user/.bashrc", "/etc/cron.d/x")]
    assert list(patch_files(found)) == ["patches/0123456789abcdef.diff"]


def test_a_patch_that_moves_the_sink_into_another_module_of_the_repository_is_not_validated(tmp_path: Path) -> None:
    from fleetledger.jobs.scan.detect import detect_file
    from fleetledger.jobs.scan.fix_steps import _local
    from fleetledger.jobs.scan.fixes import Proposal, validate
    from fleetledger.jobs.scan.fixes.text import unified_diff

    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "views.py").write_text(VIEWS)
    (repo / "util.py").write_text("import yaml\n\n\ndef parse(data):\n    return yaml.load(data)\n")
    (repo / "html").mkdir()  # templates: no package, does not shadow the standard html module
    (finding,) = [c for c in detect_file(repo, "views.py").candidates if c.rule_id == "FLT-deserialization"]
    after = VIEWS.replace("import yaml\n", "import yaml\nfrom util import parse\n").replace("yaml.load(", "parse(")
    proposal = Proposal(finding=finding.id, path="views.py", base_sha256=hashlib.sha256(VIEWS.encode()).hexdigest(),
                        author="model:openai:x", rationale="moved", diff=unified_diff("views.py", VIEWS, after))
    (tmp_path / "s").mkdir()
    check = validate(proposal, finding, VIEWS.encode(), scratch=tmp_path / "s", local=lambda m: _local(repo, m))
    assert not check.ok and "imports the repository's own util" in check.reason, check
    assert not _local(repo, "html") and not _local(repo, "json") and _local(repo, "util.x")


@pytest.mark.parametrize("path", ["../outside.py", "/etc/x.py", ".git/hooks/pre-commit", "a/../../b.py"])
def test_patch_apply_refuses_a_recorded_path_outside_what_the_scan_reads(tmp_path: Path, path: str) -> None:
    """A finding's path comes from a worker's record (a worker may be taken over)."""
    from fleetledger.jobs.scan.fixes import Proposal
    from fleetledger.jobs.scan.patch_apply import FileChangedSinceScan, _check_file

    proposal = Proposal(finding="0123456789abcdef", path=path, base_sha256="0" * 64, author="rule", rationale="r",
                        diff="")
    with pytest.raises(FileChangedSinceScan, match="nothing written"):
        _check_file(tmp_path / path, proposal, {"patched_sha256": "1" * 64}, tmp_path)


def test_patch_apply_refuses_a_file_in_a_folder_the_scan_never_reads(tmp_path: Path) -> None:
    from fleetledger.jobs.scan.fixes import Proposal
    from fleetledger.jobs.scan.patch_apply import FileChangedSinceScan, _check_file

    hook = tmp_path / ".git" / "hooks" / "pre-commit"
    hook.parent.mkdir(parents=True)
    hook.write_bytes(b"#!/bin/sh\n")
    proposal = Proposal(finding="0123456789abcdef", path=".git/hooks/pre-commit", author="rule", rationale="r",
                        base_sha256=hashlib.sha256(b"#!/bin/sh\n").hexdigest(), diff="")
    with pytest.raises(FileChangedSinceScan, match="never reads"):
        _check_file(hook, proposal, {"patched_sha256": "1" * 64}, tmp_path)


def test_the_header_check_accepts_a_file_name_with_a_tab_and_a_timestamped_header() -> None:
    from fleetledger.jobs.scan.fixes.text import other_files, unified_diff

    assert other_files(unified_diff("odd\tname.py", "x = 1\n", "x = 2\n"), "odd\tname.py") == []
    assert other_files("--- a/v.py\t2026-01-01 00:00\n+++ b/v.py\t2026-01-01\n@@ -1 +1 @@\n-x\n+y\n", "v.py") == []
    assert other_files("--- a/v.py\n+++ b/setup.py\n@@ -1 +1 @@\n-x\n+y\n", "v.py") == ["setup.py"]


def test_a_file_with_lone_carriage_returns_gets_no_patch_and_says_why(tmp_path: Path) -> None:
    from fleetledger.jobs.scan.detect import detect_file
    from fleetledger.jobs.scan.fixes import propose

    data = VIEWS.replace("\n", "\r").encode()
    (tmp_path / "views.py").write_bytes(data)
    (finding,) = [c for c in detect_file(tmp_path, "views.py").candidates if c.rule_id == "FLT-deserialization"]
    proposal = propose(finding, data)
    assert proposal.diff is None and "lone carriage return" in proposal.rationale

"""Issue 13 item 7: a repository cannot opt itself out of its own scan.

A repository's ``.fleetledger.toml`` ``exclude`` hides none of the files the scan analyses
unless the user's policy sets ``repository_may_exclude``; either way every output (the
terminal summary, findings.md, findings.json, SARIF) says what the rule did: the rule, how many
files, which."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from e2e import records, run_cli
from sarif_schema import validate

pytestmark = pytest.mark.slow

VULNERABLE = ("import subprocess\nfrom flask import request\n\n\ndef run():\n"
              "    return subprocess.check_output('ls ' + request.args['d'], shell=True)\n")


def _repo(tmp_path: Path, rule: str) -> Path:
    repo = tmp_path / "repo"
    (repo / "app").mkdir(parents=True)
    (repo / "app" / "views.py").write_text(VULNERABLE, encoding="utf-8")
    (repo / "app" / "util.py").write_text("def add(a, b):\n    return a + b\n", encoding="utf-8")
    (repo / "lib").mkdir()
    (repo / "lib" / "helpers.py").write_text("X = 1\n", encoding="utf-8")
    (repo / "README.md").write_text("# app\n", encoding="utf-8")
    (repo / ".fleetledger.toml").write_text(f"[rules]\nexclude = {rule}\n", encoding="utf-8")
    return repo


def _scan(tmp_path: Path, repo: Path, *policy: str, allow_empty: bool = False) -> tuple[Path, str]:
    ws = tmp_path / "ws"
    args = ["scan", str(repo), "--workspace", str(ws), "--workers", "1", "--no-progress"]
    if allow_empty:  # every file excluded: nothing was scanned, which fails unless accepted
        args.append("--allow-empty")
    if policy:
        path = tmp_path / "policy.toml"
        path.write_text("[policy]\n" + "".join(policy), encoding="utf-8")
        args += ["--policy", str(path)]
    done = run_cli(*args)
    assert done.returncode == 0, done.stdout + done.stderr
    return ws, done.stdout + done.stderr


def _outputs(ws: Path) -> tuple[str, dict, dict]:
    sarif = json.loads((ws / "findings.sarif").read_text(encoding="utf-8"))
    validate(sarif)
    return (ws / "findings.md").read_text(encoding="utf-8"), json.loads((ws / "findings.json").read_text()), sarif


@pytest.mark.parametrize("rule, hidden", [('["**"]', ["app/util.py", "app/views.py", "lib/helpers.py"]),
                                          ('["app/*.py"]', ["app/util.py", "app/views.py"])])
def test_by_default_the_repository_cannot_hide_its_code_and_every_output_says_so(tmp_path: Path, rule: str,
                                                                                hidden: list[str]) -> None:
    pattern = json.loads(rule)[0]
    ws, terminal = _scan(tmp_path, _repo(tmp_path, rule))
    markdown, report, sarif = _outputs(ws)
    # The planted vulnerability is found: the files were scanned.
    assert [f["candidate"]["path"] for f in report["findings"]] == ["app/views.py"]
    assert all(f["status"] == "scanned" for f in report["files"])
    # findings.json: the rule, refused, with every path it would have hidden.
    assert report["exclusions"] == [{"origin": "repository", "rule": f"repository rule exclude {pattern!r}",
                                     "applied": False, "count": len(hidden), "paths": hidden}]
    assert report["summary"]["repository_exclusion_refused"] == len(hidden)
    assert report["summary"]["excluded_by_repository"] == 0
    # findings.md: a section that names the rule, the count and the paths.
    section = markdown.split("## Exclusions", 1)[1].split("\n## ", 1)[0]
    assert "refused" in section and f"{len(hidden)} file(s)" in section
    assert all(p in section for p in hidden)
    assert pattern.replace("*", "\\*") in section
    # SARIF: a notification and the run's properties.
    run = sarif["runs"][0]
    notes = [n for n in run["invocations"][0]["toolExecutionNotifications"]
             if n["descriptor"]["id"] == "FL0008"]
    assert len(notes) == 1 and "refused" in notes[0]["message"]["text"] and "app/views.py" in notes[0]["message"]["text"]
    assert run["properties"]["exclusions"][0]["count"] == len(hidden)
    # The terminal: a warning when the run starts and the summary at its end.
    assert "warning: repository rule exclude" in terminal and "repository_may_exclude = false" in terminal
    summary = next(line for line in terminal.splitlines() if line.startswith("run "))
    assert f"the repository's own rule exclude {pattern!r} would hide {len(hidden)} file(s)" in summary
    assert "app/views.py" in summary
    denied = [r for r in records(ws) if r.kind == "policy.denied" and "exclude" in r.why]
    assert denied, "the refusal is in the ledger"


@pytest.mark.parametrize("rule, hidden", [('["**"]', ["app/util.py", "app/views.py", "lib/helpers.py"]),
                                          ('["app/*.py"]', ["app/util.py", "app/views.py"])])
def test_when_the_policy_allows_it_the_excluded_files_are_listed_in_every_output(tmp_path: Path, rule: str,
                                                                                hidden: list[str]) -> None:
    pattern = json.loads(rule)[0]
    ws, terminal = _scan(tmp_path, _repo(tmp_path, rule), "repository_may_exclude = true\n",
                         allow_empty=len(hidden) == 3)
    markdown, report, sarif = _outputs(ws)
    assert report["findings"] == [], "the excluded file was not scanned"
    assert report["exclusions"] == [{"origin": "repository", "rule": f"repository rule exclude {pattern!r}",
                                     "applied": True, "count": len(hidden), "paths": hidden}]
    assert report["summary"]["excluded_by_repository"] == len(hidden)
    section = markdown.split("## Exclusions", 1)[1].split("\n## ", 1)[0]
    assert f"{len(hidden)} file(s) left out" in section and all(p in section for p in hidden)
    assert pattern.replace("*", "\\*") in section
    run = sarif["runs"][0]
    notes = [n for n in run["invocations"][0]["toolExecutionNotifications"] if n["descriptor"]["id"] == "FL0009"]
    assert len(notes) == 1 and all(p in notes[0]["message"]["text"] for p in hidden)
    assert run["properties"]["exclusions"][0]["applied"] is True
    summary = next(line for line in terminal.splitlines() if line.startswith("run "))
    assert f"{len(hidden)} file(s) left out of the scan by the repository's own rule exclude {pattern!r}" in summary
    assert all(p in summary for p in hidden)
    assert "warning: repository rule exclude" not in terminal, "nothing was refused"


def test_files_the_users_policy_leaves_out_are_counted_as_the_policys(tmp_path: Path) -> None:
    repo = _repo(tmp_path, "[]")
    ws, terminal = _scan(tmp_path, repo, 'read = ["$TARGET", "$TARGET/app/**"]\n')
    _, report, _ = _outputs(ws)
    assert report["exclusions"] == [{"origin": "policy", "rule": "policy.read", "applied": True, "count": 1,
                                     "paths": ["lib/helpers.py"]}]
    assert report["summary"]["excluded_by_policy"] == 1
    assert "left out of the scan by the user's policy (policy.read): lib/helpers.py" in terminal

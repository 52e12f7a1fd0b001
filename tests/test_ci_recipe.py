"""docs/ci.md's recipe, run for real (issue 16 item 5): the plain-shell commands on the embedded
demo repository as a main-branch job, then as pull requests; the SARIF they produce is checked
against the SARIF 2.1.0 schema and GitHub's published rules; the GitHub Actions workflow must run
the same commands, with the same category as its upload."""

from __future__ import annotations

import gzip
import json
import os
import re
import shlex
import shutil
from pathlib import Path
from urllib.parse import unquote

import pytest
import yaml

from e2e import REPO_ROOT, run_cli
from sarif_schema import validate

pytestmark = pytest.mark.slow

DOC = REPO_ROOT / "docs" / "ci.md"
DEMO = REPO_ROOT / "fleetledger" / "demo_repo"
NEW_FILE = '''"""Report export."""

import os

from flask import request

from .app import app


@app.route("/export")
def export():
    os.system("tar czf /tmp/out.tgz " + request.args["folder"])
    return "ok"
'''


def fenced(section: str, language: str) -> list[str]:
    """The code blocks of ``language`` under the ``## section`` heading of docs/ci.md."""
    text = DOC.read_text(encoding="utf-8")
    body = text.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(rf"```{language}\n(.*?)```", body, flags=re.S)


def shell_scans() -> tuple[list[str], list[str]]:
    """The recipe's two ``fleetledger scan`` command lines (main branch, pull request), split."""
    lines = [line.strip() for line in fenced("Plain shell CI", "sh")[0].splitlines()]
    main, pull = [shlex.split(line) for line in lines if line.startswith("fleetledger scan")]
    return main, pull


def expand(argv: list[str], env: dict[str, str]) -> list[str]:
    return [re.sub(r"\$(\w+)", lambda m: env[m.group(1)], arg) for arg in argv[1:]]  # drop "fleetledger"


def github_rules(log: dict, repo: Path, category: str) -> None:
    """GitHub code scanning's published rules for an uploaded SARIF file (docs.github.com,
    "SARIF support for code scanning"; limits: "SARIF results exceed limit")."""
    assert len(gzip.compress(json.dumps(log).encode())) <= 10_000_000
    assert len(log["runs"]) <= 20
    for run in log["runs"]:
        assert run["automationDetails"]["id"] == category and category.endswith("/")
        assert run["originalUriBaseIds"]["SRCROOT"]["uri"] == repo.as_uri() + "/"
        assert len(run["results"]) <= 25_000 and len(run["tool"]["driver"]["rules"]) <= 25_000
        assert all(len(rule.get("properties", {}).get("tags", [])) <= 20 for rule in run["tool"]["driver"]["rules"])
        for result in run["results"]:
            assert len(result["locations"]) + len(result.get("relatedLocations", [])) <= 1_000
            assert sum(len(t["locations"]) for f in result.get("codeFlows", []) for t in f["threadFlows"]) <= 10_000
            assert {"primaryLocationLineHash", "fleetledgerFingerprint/v1"} <= set(result["partialFingerprints"])
            assert re.fullmatch(r"[0-9a-f]{16}:[1-9][0-9]*", result["partialFingerprints"]["primaryLocationLineHash"])
            location = result["locations"][0]["physicalLocation"]["artifactLocation"]
            assert location["uriBaseId"] == "SRCROOT" and (repo / unquote(location["uri"])).is_file()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """The demo shop as a repository's root (``.git`` with a ``HEAD``, as ``git init`` leaves it)."""
    root = tmp_path / "repo"
    shutil.copytree(DEMO, root)
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return root


def test_the_shell_recipe_on_main_then_on_pull_requests(repo: Path, tmp_path: Path) -> None:
    main, pull = shell_scans()
    category = main[main.index("--category") + 1]
    env = {"WS": str(tmp_path / "cache" / "ws"), "BASE": str(tmp_path / "cache" / "main.sarif")}
    (tmp_path / "cache").mkdir()

    done = run_cli(*expand(main, env), cwd=repo)
    assert done.returncode == 0, done.stderr
    log = json.loads((Path(env["WS"]) / "findings.sarif").read_text())
    validate(log)
    github_rules(log, repo, category)
    shutil.copy(Path(env["WS"]) / "findings.sarif", env["BASE"])  # the recipe's cp
    before = {r["partialFingerprints"]["fleetledgerFingerprint/v1"] for r in log["runs"][0]["results"]}

    # A pull request that only moves code: nothing new, exit 0, the same fingerprints.
    app = repo / "shop" / "app.py"
    app.write_text(app.read_text().replace('"""HTTP handlers of the demo shop."""\n',
                                           '"""HTTP handlers of the demo shop.\n\nNow documented.\n"""\n\n# moved\n'))
    done = run_cli(*expand(pull, env), cwd=repo)
    assert done.returncode == 0, done.stderr
    log = json.loads((Path(env["WS"]) / "findings.sarif").read_text())
    validate(log)
    github_rules(log, repo, category)
    assert {r["baselineState"] for r in log["runs"][0]["results"]} == {"unchanged"}
    assert {r["partialFingerprints"]["fleetledgerFingerprint/v1"] for r in log["runs"][0]["results"]} == before

    # A pull request that adds a vulnerable file: exit 5, its findings alone are new.
    (repo / "shop" / "export.py").write_text(NEW_FILE)
    done = run_cli(*expand(pull, env), cwd=repo)
    assert done.returncode == 5, (done.stdout, done.stderr)
    assert "new against the baseline" in done.stderr
    log = json.loads((Path(env["WS"]) / "findings.sarif").read_text())
    validate(log)
    github_rules(log, repo, category)
    states = {(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], r["baselineState"])
              for r in log["runs"][0]["results"]}
    assert {uri for uri, state in states if state == "new"} == {"shop/export.py"}
    assert "absent" not in {state for _, state in states}  # --no-absent-results: safe to upload


def test_the_github_workflow_runs_the_recipe_and_uploads_under_its_category() -> None:
    [workflow] = fenced("GitHub Actions", "yaml")
    steps = yaml.safe_load(workflow)["jobs"]["scan"]["steps"]
    scans = [shlex.split(step["run"]) for step in steps if "fleetledger scan" in step.get("run", "")]
    main, pull = shell_scans()
    # The same options as the shell recipe (the workspace and baseline paths differ).
    def options(argv: list[str]) -> list[str]:
        return [arg for i, arg in enumerate(argv) if not (i and argv[i - 1] in ("--workspace", "--baseline"))]
    assert [options(argv) for argv in scans] == [options(main), options(pull)]
    [upload] = [step for step in steps if step.get("uses", "").startswith("github/codeql-action/upload-sarif@")]
    assert {argv[argv.index("--category") + 1] for argv in scans} == {upload["with"]["category"]}
    assert upload["with"]["sarif_file"] == f"{scans[0][scans[0].index('--workspace') + 1]}/findings.sarif"
    assert "!cancelled()" in upload["if"]  # uploaded even when the gate fails (exit 5)


def test_a_subfolder_scan_reports_root_relative_uris_under_its_own_category(repo: Path, tmp_path: Path) -> None:
    done = run_cli("scan", "shop", "--workspace", str(tmp_path / "ws"), "--no-progress", cwd=repo)
    assert done.returncode == 0, done.stderr
    log = json.loads((tmp_path / "ws" / "findings.sarif").read_text())
    validate(log)
    github_rules(log, repo, "fleetledger/shop/")
    assert all(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].startswith("shop/")
               for r in log["runs"][0]["results"])
    body = json.loads((tmp_path / "ws" / "findings.json").read_text())
    assert body["run"]["repository_root"] == str(repo) and body["run"]["scanned_folder"] == "shop"


@pytest.mark.parametrize("args, says", [
    (["--baseline", "{notsarif}"], "not JSON"),
    (["--only-new"], "give --baseline"),
    (["--no-absent-results"], "give --baseline"),
    (["--baseline", "{ws}/findings.sarif"], "copy it out first"),
    (["--category", "two words"], "--category"),
    (["--repo-root", "{elsewhere}"], "not inside"),
])
def test_careless_options_are_usage_errors_before_any_work(repo: Path, tmp_path: Path, args: list[str],
                                                           says: str) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "findings.sarif").write_text('{"version": "2.1.0", "runs": []}')
    (tmp_path / "notsarif.txt").write_text("this is a README, not SARIF\n")
    (tmp_path / "elsewhere").mkdir()
    paths = {"notsarif": str(tmp_path / "notsarif.txt"), "ws": str(tmp_path / "ws"), "elsewhere": str(tmp_path / "elsewhere")}
    done = run_cli("scan", ".", "--workspace", str(tmp_path / "ws"), "--no-progress",
                   *(arg.format(**paths) for arg in args), cwd=repo)
    assert done.returncode == 2 and says in done.stderr, (done.returncode, done.stderr)
    assert not (tmp_path / "ws" / "ledger.sqlite3").exists()


def test_the_recipe_commands_exist_in_the_cli() -> None:
    from click.testing import CliRunner

    from fleetledger.cli import main as cli

    text = CliRunner().invoke(cli, ["scan", "--help"]).output
    main, pull = shell_scans()
    for flag in {arg for arg in main + pull if arg.startswith("--")}:
        assert flag in text, flag
    assert os.path.exists(DOC)


def test_a_baseline_that_is_neither_a_file_nor_a_ref_is_a_usage_error(repo: Path, tmp_path: Path) -> None:
    for ref in ("mian.sarif", "--upload-pack=touch /tmp/pwned"):
        done = run_cli("scan", ".", "--workspace", str(tmp_path / "ws"), "--no-progress", f"--baseline={ref}", cwd=repo)
        assert done.returncode == 2 and "no such file, and no commit of that name" in done.stderr, done.stderr
    assert not (tmp_path / "ws" / "ledger.sqlite3").exists()


def test_a_git_ref_baseline_is_scanned_once_and_runs_nothing_of_the_repository(repo: Path, tmp_path: Path) -> None:
    """``--baseline REF``: the ref's tree is written out by git plumbing and scanned in its own
    workspace; a hostile ``.git/config`` (an fsmonitor, hooks, a pager, a tar filter) runs
    nothing; the next run reuses the baseline."""
    git = shutil.which("git")
    if git is None:
        pytest.fail("git is needed for --baseline REF")
    shutil.rmtree(repo / ".git")
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    run = lambda *args: __import__("subprocess").run([git, "-C", str(repo), *args], env=env, check=True,  # noqa: E731
                                                     capture_output=True)
    run("init", "-q", "-b", "main")
    run("add", "-A")
    run("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "base")
    pwned = tmp_path / "pwned"
    (repo / ".git" / "hooks" / "post-checkout").write_text(f"#!/bin/sh\ntouch {pwned}-hook\n")
    (repo / ".git" / "hooks" / "post-checkout").chmod(0o755)
    with open(repo / ".git" / "config", "a") as config:
        config.write(f"[core]\n\tfsmonitor = touch {pwned}-fsmonitor\n\tpager = touch {pwned}-pager\n"
                     f"[tar \"tar\"]\n\tcommand = touch {pwned}-tar\n[filter \"x\"]\n\tsmudge = touch {pwned}-smudge\n")
    (repo / ".gitattributes").write_text("* filter=x\n")
    (repo / "shop" / "export.py").write_text(NEW_FILE)  # the change under review, not committed
    ws = tmp_path / "ws"
    done = run_cli("scan", ".", "--workspace", str(ws), "--no-progress", "--baseline", "main", "--only-new",
                   "--no-absent-results", cwd=repo)
    assert done.returncode == 5, (done.stdout, done.stderr)
    assert "baseline: wrote" in done.stdout and "new against the baseline" in done.stderr
    log = json.loads((ws / "findings.sarif").read_text())
    validate(log)
    assert {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in log["runs"][0]["results"]
            if r["baselineState"] == "new"} == {"shop/export.py"}
    assert not list(tmp_path.glob("pwned*"))
    again = run_cli("scan", ".", "--workspace", str(ws), "--no-progress", "--new", "--baseline", "main", "--only-new",
                    cwd=repo)
    assert again.returncode == 5 and "was scanned before" in again.stdout, (again.stdout, again.stderr)

"""The export's code-scanning options (issue 16 items 2 and 4): repository-root URIs, category,
``--honour-nosec``, the baseline comparison and GitHub's ingestion limits.

Every SARIF log here is checked against the official schema (``run_of``)."""

from __future__ import annotations

import base64
import dataclasses
import json
import os
import re
from pathlib import Path

import pytest

from fleetledger.errors import UsageError
from fleetledger.jobs.scan import baseline, export, limits, sarif
from fleetledger.jobs.scan.codescanning import json_bytes
from fleetledger.jobs.scan.export_options import ExportOptions, find_repository_root, resolve_repo_root
from fleetledger.jobs.scan.shapes import ScanReport

from test_export import candidate, finding, report, run_of

REPO = "/srv/repo"


def with_options(scan: ScanReport, **options: object) -> ScanReport:
    return dataclasses.replace(scan, export=ExportOptions(**options))


def shop_report(**options: object) -> ScanReport:
    findings = [finding(candidate("admin.py", 3)), finding(candidate("sub dir/é.py", 7, rule_id="B307", cwe=95), "low")]
    return with_options(report(findings, target=f"{REPO}/shop"), repo_root=REPO, **options)


def uris(log: dict) -> list[str]:
    found: list[str] = []
    stack: list[object] = [log]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if item.get("uriBaseId") == "SRCROOT":
                found.append(item["uri"])
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


# Repository root and category.

def test_a_subfolder_scan_gives_root_relative_uris_and_says_the_root() -> None:
    scan = shop_report()
    run = run_of(sarif.to_sarif(scan))
    assert run["originalUriBaseIds"]["SRCROOT"]["uri"] == "file:///srv/repo/"
    assert sorted(set(uris({"runs": [run]}))) == ["shop/admin.py", "shop/sub%20dir/%C3%A9.py"]
    body = export.to_json(scan)
    assert body["run"]["repository_root"] == REPO and body["run"]["scanned_folder"] == "shop"
    assert {f["candidate"]["path"] for f in body["findings"]} == {"admin.py", "sub dir/é.py"}  # target-relative
    assert "Repository root: /srv/repo" in export.to_markdown(scan)


def test_categories_of_two_folders_of_one_repository_never_collide() -> None:
    root = run_of(sarif.to_sarif(with_options(report([finding(candidate())], target=REPO), repo_root=REPO)))
    shop = run_of(sarif.to_sarif(shop_report()))
    assert root["automationDetails"] == {"id": "fleetledger/"}
    assert shop["automationDetails"] == {"id": "fleetledger/shop/"}
    given = run_of(sarif.to_sarif(shop_report(category="python-shop")))
    assert given["automationDetails"] == {"id": "python-shop/"}  # GitHub's category/ form


@pytest.mark.parametrize("bad", ["", "/", "a b", "x\ny", "tab\there"])
def test_a_bad_category_is_a_usage_error(bad: str) -> None:
    with pytest.raises(UsageError, match="--category"):
        ExportOptions(category=bad)


def test_the_repository_root_is_found_by_lstat_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GIT_CEILING_DIRECTORIES", raising=False)
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (repo / "shop" / "deep").mkdir(parents=True)
    assert find_repository_root(repo / "shop" / "deep") == repo
    worktree = tmp_path / "wt"
    (worktree / "pkg").mkdir(parents=True)
    (worktree / ".git").write_text("gitdir: /elsewhere\n")  # a linked worktree or submodule
    assert find_repository_root(worktree / "pkg") == worktree
    # A ".git" folder without HEAD is not a repository (git skips it too); a ".git" symbolic
    # link is not followed; a ceiling stops the walk.
    fake = repo / "shop" / "fake"
    (fake / ".git").mkdir(parents=True)
    assert find_repository_root(fake) == repo
    linked = repo / "shop" / "linked"
    linked.mkdir()
    (linked / ".git").symlink_to(worktree / ".git")
    assert find_repository_root(linked) == repo
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(repo))
    assert find_repository_root(repo / "shop") is None


def test_repo_root_must_hold_the_target(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with pytest.raises(UsageError, match="not inside"):
        resolve_repo_root(tmp_path / "a", str(tmp_path / "b"))
    assert resolve_repo_root(tmp_path / "a", str(tmp_path)) == str(tmp_path)
    with pytest.raises(UsageError, match="not inside the repository root"):
        ExportOptions(repo_root="/srv/other").prefix("/srv/repo/shop")


# Suppression comments.

def suppressed_report(honour: bool) -> ScanReport:
    quiet = dataclasses.replace(candidate("a.py", 3), suppression={"kind": "nosec", "rules": ["B602"],
                                                                   "comment": "# nosec B602", "line": 3})
    other_rule = dataclasses.replace(candidate("a.py", 9, rule_id="B307", cwe=95),
                                     suppression={"kind": "nosec", "rules": ["B602"], "comment": "# nosec B602", "line": 9})
    loud = candidate("a.py", 20)
    return with_options(report([finding(quiet), finding(other_rule), finding(loud)]), honour_nosec=honour)


def test_nosec_is_shown_but_not_honoured_by_default() -> None:
    scan = suppressed_report(False)
    run = run_of(sarif.to_sarif(scan))
    assert not any("suppressions" in r for r in run["results"])
    assert sum("sourceSuppression" in r["properties"] for r in run["results"]) == 2
    assert {f["status"] for f in export.to_json(scan)["findings"]} == {"open"}


def test_honour_nosec_gives_in_source_suppressions_for_the_named_rules_only(tmp_path: Path) -> None:
    scan = suppressed_report(True)
    run = run_of(sarif.to_sarif(scan))
    by_line = {r["locations"][0]["physicalLocation"]["region"]["startLine"]: r for r in run["results"]}
    [suppression] = by_line[3]["suppressions"]
    assert suppression["kind"] == "inSource" and "# nosec B602" in suppression["justification"]
    assert "suppressions" not in by_line[9] and "suppressions" not in by_line[20]
    export.write_outputs(scan, tmp_path)
    body = json.loads((tmp_path / "findings.json").read_text())
    assert [f["status"] for f in body["findings"] if f["candidate"]["line"] == 3] == ["suppressed"]
    assert body["summary"]["suppressed"] == 1
    md = (tmp_path / "findings.md").read_text()
    assert "Suppressed in source (honoured # nosec / # noqa comments): 1" in md and "| suppressed |" in md


# Baseline (pull-request mode).

def test_baseline_states_follow_the_stable_fingerprints(tmp_path: Path) -> None:
    kept = candidate("a.py", 3, snippet="subprocess.Popen(cmd, shell=True)")
    changed = candidate("a.py", 9, rule_id="B307", cwe=95, snippet="eval(expression)")
    fixed = candidate("b.py", 4)
    old = report([finding(kept), finding(changed), finding(fixed)])
    (tmp_path / "base.sarif").write_bytes(json_bytes(sarif.to_sarif(old)))
    moved = dataclasses.replace(kept, line=30, end_line=30, id="moved")  # same code, 27 lines further down
    added = candidate("c.py", 5)
    new = with_options(report([finding(moved), finding(changed, "critical"), finding(added)]),
                       baseline=str(tmp_path / "base.sarif"))
    run = run_of(sarif.to_sarif(new))
    states = {(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], r["ruleId"]): r["baselineState"]
              for r in run["results"]}
    assert states == {("a.py", "B602"): "unchanged", ("a.py", "B307"): "updated", ("c.py", "B602"): "new",
                      ("b.py", "B602"): "absent"}
    assert run["properties"]["baseline"] == {"path": str(tmp_path / "base.sarif"), "new": 1, "unchanged": 1,
                                             "updated": 1, "absent": 1}
    [gone] = [r for r in run["results"] if r["baselineState"] == "absent"]
    assert "ruleIndex" not in gone  # it indexed the baseline's rules
    upload = run_of(sarif.to_sarif(with_options(new, baseline=str(tmp_path / "base.sarif"), absent_results=False)))
    assert "absent" not in {r["baselineState"] for r in upload["results"]}


def test_a_baseline_of_earlier_exports_matches_by_candidate_id(tmp_path: Path) -> None:
    c = candidate("a.py", 3)
    legacy = sarif.to_sarif(report([finding(c)]))
    for result in legacy["runs"][0]["results"]:
        result["partialFingerprints"] = {"candidateId/v1": c.id}
    (tmp_path / "old.sarif").write_text(json.dumps(legacy))
    run = run_of(sarif.to_sarif(with_options(report([finding(c)]), baseline=str(tmp_path / "old.sarif"))))
    assert [r["baselineState"] for r in run["results"]] == ["unchanged"]


@pytest.mark.parametrize("content, says", [
    (b"", "not JSON"),
    (b"\x1f\x8b\x08\x00", "not JSON"),
    (b'{"version": "2.0.0", "runs": []}', "not a SARIF 2.1.0 log"),
    (b'{"findings": []}', "not a SARIF 2.1.0 log"),
    (b'{"version": "2.1.0", "runs": [{"results": [1, 2]}]}', "not a list of result objects"),
    (b"[" * 100_000, "not JSON"),
])
def test_a_baseline_that_is_not_sarif_is_a_usage_error_saying_what_to_give(tmp_path: Path, content: bytes,
                                                                           says: str) -> None:
    (tmp_path / "b.sarif").write_bytes(content)
    with pytest.raises(UsageError, match=says) as raised:
        baseline.load(tmp_path / "b.sarif")
    assert raised.value.exit_code == 2 and "findings.sarif of an earlier fleetledger scan" in str(raised.value)


# GitHub's ingestion limits.

def flowing(n: int, line: int, severity: str) -> object:
    hop = {"path": "a.py", "line": line, "col": 1, "what": f"value {n} " + os.urandom(40).hex()}
    trace = {"traces": [{"source": hop, "steps": [hop] * 30, "sink": {**hop, "role": "argument 1"}}]}
    c = dataclasses.replace(candidate("a.py", line, rule_id=f"B{600 + n % 5}"), trace=trace,
                            snippet=os.urandom(300).hex())
    return finding(c, severity)


def test_an_oversized_log_loses_details_then_the_least_severe_results_and_says_so() -> None:
    scan = report([flowing(n, n + 1, ("critical", "high", "medium", "low")[n % 4]) for n in range(400)])
    full = sarif.to_sarif(scan)
    size = limits.gzip_size(json_bytes(full))
    small = limits.Limits(max_gzip_bytes=size // 4)
    log = sarif.to_sarif(scan)
    run = log["runs"][0]
    said = limits.fit(log, json_bytes, small)
    assert limits.gzip_size(json_bytes(log)) <= small.max_gzip_bytes
    assert any("code flows, related locations and snippets" in s for s in said)
    kept = {r["properties"]["candidateId"] for r in run["results"]}
    dropped = [r for r in full["runs"][0]["results"] if r["properties"]["candidateId"] not in kept]
    if dropped:  # the least severe went first
        worst_dropped = min(limits._SEVERITY_RANK[r["properties"]["severity"]] for r in dropped)
        assert all(limits._SEVERITY_RANK[r["properties"]["severity"]] <= worst_dropped for r in run["results"])
    stripped = [r for r in run["results"] if r["properties"].get("trimmedForUpload")]
    assert stripped and all("codeFlows" not in r for r in stripped)
    assert min(limits._SEVERITY_RANK[r["properties"]["severity"]] for r in stripped) >= \
        max(limits._SEVERITY_RANK[r["properties"]["severity"]] for r in run["results"] if r not in stripped)


def test_the_export_checks_the_limits_and_notifies(monkeypatch: pytest.MonkeyPatch) -> None:
    scan = report([flowing(n, n + 1, "low" if n % 2 else "high") for n in range(60)])
    size = limits.gzip_size(json_bytes(sarif.to_sarif(scan)))
    monkeypatch.setattr(limits, "GITHUB", limits.Limits(max_gzip_bytes=size // 3, max_results=50,
                                                        max_thread_flow_locations=20))
    run = run_of(sarif.to_sarif(scan))
    assert len(run["results"]) <= 50
    [note] = [n for n in run["invocations"][0]["toolExecutionNotifications"] if n["descriptor"]["id"] == "FL0012"]
    assert "result(s) left out" in note["message"]["text"] and "code flows of" in note["message"]["text"]
    assert run["properties"]["trimmed"]
    assert "findings.md and findings.json list everything" in note["message"]["text"]


def test_locations_and_tags_are_capped_per_result_and_rule() -> None:
    log = {"runs": [{"tool": {"driver": {"rules": [{"id": "R", "properties": {"tags": [str(n) for n in range(30)]}}]}},
                     "results": [{"level": "error", "locations": [{}] * 5, "relatedLocations": [{}] * 2000}]}]}
    said = limits.fit(log, json_bytes)
    run = log["runs"][0]
    assert len(run["results"][0]["relatedLocations"]) == 995
    assert len(run["tool"]["driver"]["rules"][0]["properties"]["tags"]) == 20
    assert len(said) == 2


def test_a_log_within_the_limits_is_unchanged() -> None:
    log = sarif.to_sarif(report([finding(candidate())]))
    before = json.dumps(log, sort_keys=True)
    assert limits.fit(log, json_bytes) == [] and json.dumps(log, sort_keys=True) == before


# The job: options recorded in its description (not its identity), restored from the ledger.

def test_export_options_are_described_not_identity_and_survive_a_rebuild(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from fleetledger.jobs.registry import job_from_view, scan_job
    from fleetledger.workspace import Workspace

    (tmp_path / "repo" / "shop").mkdir(parents=True)
    ws = Workspace.at(tmp_path / "ws")
    plain = scan_job(tmp_path / "repo" / "shop", ws)
    options = ExportOptions(repo_root=str(tmp_path / "repo"), category="ci/", honour_nosec=True,
                            baseline=str(tmp_path / "main.sarif"), absent_results=False, only_new=True)
    job = scan_job(tmp_path / "repo" / "shop", ws, export=options)
    assert job.describe()["identity"] == plain.describe()["identity"]  # the same run
    assert "export" not in plain.describe()["options"]  # defaults leave the description as it was
    assert job.describe()["options"]["export"] == options.to_json()
    argv = job.describe()["argv"]
    assert argv[argv.index("--category") + 1] == "ci/" and "--only-new" in argv and "--no-absent-results" in argv
    rebuilt = job_from_view(SimpleNamespace(job=job.describe(), run_id="scan-1"), ws)
    assert rebuilt.export == options


def test_the_job_warns_when_the_sarif_was_trimmed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from fleetledger.jobs.scan.job import ScanJob

    scan = report([flowing(n, n + 1, "low") for n in range(30)])
    monkeypatch.setattr(limits, "GITHUB", limits.Limits(max_results=10))
    job = ScanJob(tmp_path, workspace=tmp_path / "ws", argv=[])
    warnings, new = job._code_scanning_notes(scan)
    assert new is None and len(warnings) == 1 and "20 result(s) left out" in warnings[0]


def test_a_log_over_the_real_10_mb_limit_is_trimmed_under_it() -> None:
    """GitHub's real limit, on a synthetic log shaped like the issue's report (27 MB, about 12 MB
    gzip-compressed): random snippets and trace texts that do not compress away."""
    def result(n: int) -> dict:
        hop = {"location": {"physicalLocation": {"artifactLocation": {"uri": f"m{n % 50}.py", "uriBaseId": "SRCROOT"},
                                                 "region": {"startLine": n + 1}},
                            "message": {"text": base64.b64encode(os.urandom(24)).decode()}}}
        return {"ruleId": "B602", "level": "error" if n % 2 else "note",
                "message": {"text": "Subprocess call with shell=True."},
                "locations": [{"physicalLocation": {"artifactLocation": {"uri": f"m{n % 50}.py", "uriBaseId": "SRCROOT"},
                                                    "region": {"startLine": n + 1, "snippet": {"text": base64.b64encode(os.urandom(1600)).decode()}}}}],
                "codeFlows": [{"threadFlows": [{"locations": [hop] * 1 + [dict(hop) for _ in range(7)]}]}],
                "properties": {"severity": "high" if n % 2 else "low"}}
    log = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "t", "rules": []}}, "results": [result(n) for n in range(7000)]}]}
    said = limits.fit(log, json_bytes)
    assert re.search(r"the file was 1[0-9],[0-9,]+ bytes gzip-compressed, over GitHub's 10,000,000", said[-1])
    assert limits.gzip_size(json_bytes(log)) <= limits.GITHUB.max_gzip_bytes
    assert len(log["runs"][0]["results"]) == 7000  # details went, every result stayed
    stripped = [r for r in log["runs"][0]["results"] if "trimmedForUpload" in r["properties"]]
    assert stripped and {r["properties"]["severity"] for r in stripped} == {"low"}

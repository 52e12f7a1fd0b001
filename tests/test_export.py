"""Export step: SARIF 2.1.0, Markdown and JSON (cases 07 F1 and 10 D1-D4, D6).

Every SARIF log built here is checked against the official schema (``tests/sarif_schema.py``;
run ``.ci/fetch-sarif-schema`` first).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import random
import re
from urllib.parse import unquote, urljoin, urlsplit
from urllib.request import url2pathname

import pytest
from markdown_it import MarkdownIt

from fleetledger import faults
from fleetledger.jobs.scan import export, sarif
from fleetledger.jobs.scan.shapes import (
    SEVERITIES,
    Candidate,
    FileReport,
    Finding,
    ModelAnswer,
    ScanReport,
    candidate_id,
)
from sarif_schema import validate

TARGET = "/srv/repo"
STARTED = "2026-11-29T11:45:00Z"


def candidate(path: str = "app/run.py", line: int = 3, col: int = 0, *, rule_id: str = "B602",
              detector: str = "bandit", cwe: int | None = 78, end_line: int | None = None,
              snippet: str = "subprocess.Popen(cmd, shell=True)") -> Candidate:
    return Candidate(
        id=candidate_id(path, line, col, rule_id), path=path, line=line, col=col,
        end_line=line if end_line is None else end_line, rule_id=rule_id,
        rule_name=f"{rule_id.lower()}_rule", detector=detector, cwe=cwe, detector_severity="HIGH",
        detector_confidence="HIGH", message=f"{rule_id} flagged this call.", snippet=snippet,
    )


def finding(c: Candidate, severity: str = "high", *, rationale: str = "User input reaches a shell.") -> Finding:
    return Finding(
        candidate=c, severity=severity, severity_reason="reachable from a request",
        investigation=ModelAnswer(verdict="vulnerable", confidence=8, cwe=None, rationale=rationale),
        revalidation=ModelAnswer(verdict="vulnerable", confidence=7, cwe=None, rationale=f"Confirmed. {rationale}"),
    )


def scanned(path: str, *candidates: Candidate) -> FileReport:
    return FileReport(path=path, sha256="0" * 64, size_bytes=100, status="scanned", candidates=candidates)


def report(findings: list[Finding] | tuple[Finding, ...] = (), files: tuple[FileReport, ...] | None = None,
           **kwargs: object) -> ScanReport:
    if files is None:
        by_path: dict[str, list[Candidate]] = {}
        for f in findings:
            by_path.setdefault(f.candidate.path, []).append(f.candidate)
        files = tuple(scanned(path, *cands) for path, cands in sorted(by_path.items()))
    values = {"run_id": "scan-3f2a9c", "target": TARGET, "complete": True, "started_utc": STARTED} | kwargs
    return ScanReport(findings=tuple(findings), files=files, **values)


def run_of(log: dict) -> dict:
    validate(log)
    assert len(log["runs"]) == 1
    return log["runs"][0]


def notes(run: dict) -> list[dict]:
    return run["invocations"][0]["toolExecutionNotifications"]


def regions(run: dict) -> list[dict]:
    return [loc["physicalLocation"]["region"] for r in run["results"]
            for loc in r["locations"] + r.get("relatedLocations", [])]


# Case 07 F1: empty and partial runs.

HALTED = dict(complete=False, halt_reason="quota exhausted for model gpt-x; resets 2026-11-29T13:00:00Z")


@pytest.mark.parametrize("make, successful", [
    (lambda: report(files=()), True),
    (lambda: report(files=(scanned("app/a.py"), scanned("app/b.py"))), True),
    (lambda: report([finding(candidate())], **HALTED), False),
    (lambda: report(files=(scanned("app/a.py"),), **HALTED), False),
], ids=["zero-files", "zero-findings", "halted-partial", "halted-nothing"])
def test_empty_and_partial_runs_are_valid(make, successful):
    r = make()
    run = run_of(sarif.to_sarif(r))
    assert "results" in run and len(run["results"]) == len(r.findings)
    assert run["invocations"][0]["executionSuccessful"] is successful
    halted = [n for n in notes(run) if n["descriptor"]["id"] == "FL0001"]
    assert [n["message"]["text"] for n in halted] == ([] if successful else
        [f"The run did not complete ({HALTED['halt_reason']}); results are partial."])
    assert run["properties"]["complete"] is successful


# Case 10 D1: many results; many workers.

@pytest.fixture(scope="module")
def big_report() -> ScanReport:
    rng = random.Random(7)
    findings = [finding(candidate(f"pkg/mod{i // 100:03}.py", i % 100 + 1, rule_id=f"B{600 + i % 7}"),
                        rng.choice(SEVERITIES)) for i in range(30_000)]
    rng.shuffle(findings)
    return report(findings)


def test_30000_results_keep_the_25000_most_severe_in_order(big_report):
    run = run_of(sarif.to_sarif(big_report))
    results = run["results"]
    assert len(results) == sarif.MAX_RESULTS == 25_000
    keys = [(SEVERITIES.index(r["properties"]["severity"]), r["locations"][0]["physicalLocation"]["artifactLocation"]
             ["uri"], r["locations"][0]["physicalLocation"]["region"]["startLine"], r["ruleId"]) for r in results]
    assert keys == sorted(keys)
    worst_dropped = sorted(big_report.findings, key=sarif.order_key)[25_000].severity
    assert keys[-1][0] <= SEVERITIES.index(worst_dropped)
    assert run["properties"].items() >= {"resultsTotal": 30_000, "resultsKept": 25_000, "resultsTruncated": True}.items()
    [cut] = [n for n in notes(run) if n["descriptor"]["id"] == "FL0002"]
    assert cut["message"]["text"].startswith("5000 of 30000 results are left out")
    assert len({r["ruleId"] for r in results}) == len(run["tool"]["driver"]["rules"]) == 7


def test_markdown_and_json_keep_all_30000(big_report):
    doc = export.to_json(big_report)
    assert len(doc["findings"]) == doc["summary"]["findings"] == 30_000
    md = export.to_markdown(big_report)
    assert len(re.findall(r"^\| \d+ \| ", md, flags=re.M)) == 30_000
    assert "| 30000 | " in md


def test_64_files_from_8_workers_make_one_run_whatever_the_delivery_order():
    findings = [finding(candidate(f"src/file{n:02}.py", 10 + n % 5)) for n in range(64)]
    by_worker = [findings[w::8] for w in range(8)]  # worker w handled files w, w+8, ...
    delivered = [f for batch in reversed(by_worker) for f in batch]
    rng = random.Random(3)
    shuffled = rng.sample(findings, len(findings))
    logs = [sarif.to_sarif(report(order)) for order in (findings, delivered, shuffled)]
    run = run_of(logs[0])
    assert len(run["results"]) == 64
    assert logs[0] == logs[1] == logs[2]


# Case 10 D2: duplicate rules; two detectors on one call.

def test_rules_unique_rule_index_right_and_one_call_merged():
    same_rule_two_files = [finding(candidate("a/one.py", 4)), finding(candidate("b/two.py", 9))]
    call = 'eval(request.args["q"])'
    bandit = finding(candidate("web/view.py", 12, 4, rule_id="B307", cwe=95, snippet=call), "high")
    ours = finding(candidate("web/view.py", 12, 4, rule_id="FL-EVAL", detector="fleetledger", cwe=95, snippet=call),
                   "critical")
    other_cwe = finding(candidate("web/view.py", 12, 4, rule_id="B102", cwe=78, snippet=call), "medium")
    run = run_of(sarif.to_sarif(report([ours, *same_rule_two_files, other_cwe, bandit])))
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == sorted({r["id"] for r in rules}) == ["B102", "B307", "B602", "FL-EVAL"]
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
    assert len(run["results"]) == 4  # merged call, other-CWE finding at the same call, two B602
    [merged] = [r for r in run["results"] if "mergedFrom" in r["properties"]]
    assert merged["ruleId"] == "FL-EVAL" and merged["level"] == "error"  # the critical one is primary
    assert [m["ruleId"] for m in merged["properties"]["mergedFrom"]] == ["FL-EVAL", "B307"]
    assert "Also reported as B307 (bandit)." in merged["message"]["text"]
    assert len(merged["locations"]) == 1 and "relatedLocations" not in merged
    assert merged["properties"]["candidateId"] == ours.candidate.id  # the primary's fingerprints
    assert set(merged["partialFingerprints"]) == {"primaryLocationLineHash", "fleetledgerFingerprint/v1"}
    assert rules[merged["ruleIndex"]]["properties"]["tags"] == ["security", "external/cwe/cwe-95"]
    assert merged["properties"]["cwe"] == "CWE-95"


def test_without_a_cwe_only_the_same_rule_merges():
    findings = [finding(candidate("a.py", 2, 0, rule_id=rule, cwe=None)) for rule in ("X1", "X2", "X1")]
    run = run_of(sarif.to_sarif(report(findings)))
    assert [r["ruleId"] for r in run["results"]] == ["X1", "X2"]
    assert [rule["properties"]["tags"] for rule in run["tool"]["driver"]["rules"]] == [["security"], ["security"]]
    assert run["results"][0]["properties"]["cwe"] is None


# Case 10 D3: awkward file names.

AWKWARD = ["my dir/a b.py", "a:b.py", "x#y%z.py", "ünï.py"]


def test_awkward_names_become_relative_percent_encoded_uris():
    findings = [finding(candidate(p, 1, snippet="eval(input())", rule_id="B307")) for p in AWKWARD]
    run = run_of(sarif.to_sarif(report(findings, target="/srv/my repo")))
    base = run["originalUriBaseIds"]["SRCROOT"]["uri"]
    assert base == "file:///srv/my%20repo/"
    uris = {}
    for result in run["results"]:
        location = result["locations"][0]["physicalLocation"]["artifactLocation"]
        uri = location["uri"]
        assert location["uriBaseId"] == "SRCROOT"
        assert uri and not uri.startswith("/") and urlsplit(uri).scheme == "" and "\\" not in uri
        assert urlsplit(uri).path == uri  # no query, no fragment
        uris[unquote(uri)] = uri
        assert url2pathname(urlsplit(urljoin(base, uri)).path) == f"/srv/my repo/{unquote(uri)}"
    assert sorted(uris) == sorted(AWKWARD)
    assert uris["a:b.py"] == "a%3Ab.py" and uris["x#y%z.py"] == "x%23y%25z.py"
    assert uris["my dir/a b.py"] == "my%20dir/a%20b.py" and uris["ünï.py"] == "%C3%BCn%C3%AF.py"


def test_a_name_that_is_not_utf8_keeps_its_bytes(tmp_path):
    name = b"caf\xe9.py".decode("utf-8", "surrogateescape")
    # shapes.candidate_id cannot hash such a name yet (strict UTF-8): give the id by hand.
    r = report([finding(dataclasses.replace(candidate("cafe.py", 2), path=name))])
    run = run_of(sarif.to_sarif(r))
    uri = run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "caf%E9.py" and unquote(uri, errors="surrogateescape") == name
    export.write_outputs(r, tmp_path)
    assert json.loads((tmp_path / "findings.json").read_bytes())["findings"][0]["candidate"]["path"] == name


@pytest.mark.parametrize("path", ["", "/etc/passwd", "../up.py", "a//b.py", "./a.py", "dir/"])
def test_paths_that_are_not_relative_are_refused(path):
    with pytest.raises(ValueError, match="not a normalised path"):
        sarif.artifact_uri(path)


# Case 10 D4: columns, lines, file-level problems.

def test_columns_are_one_based_characters():
    source = 'x = "ééé"; eval(y)'
    col = source.index("eval")
    assert (col, len(source[:col].encode())) == (11, 14)  # characters, not col_offset's bytes
    findings = [finding(candidate("a.py", 1, 0)), finding(candidate("b.py", 1, col, rule_id="B307", snippet=source))]
    run = run_of(sarif.to_sarif(report(findings)))
    by_uri = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]: r for r in run["results"]}
    assert by_uri["a.py"]["locations"][0]["physicalLocation"]["region"]["startColumn"] == 1
    assert by_uri["b.py"]["locations"][0]["physicalLocation"]["region"]["startColumn"] == 12
    assert run["columnKind"] == "unicodeCodePoints"


def test_every_line_and_column_is_at_least_one_and_file_problems_are_notifications():
    files = (
        FileReport(path="bin/logo.py", sha256="1" * 64, size_bytes=9, status="skipped", reason="NUL byte at line 2"),
        FileReport(path="big.min.py", sha256="2" * 64, size_bytes=20_971_520, status="skipped",
                   reason="exceeds size limit (20971520 bytes > 1048576)"),
        FileReport(path="legacy.py", sha256="3" * 64, size_bytes=80, status="scanned",
                   warnings=("line 2 is not valid UTF-8",), internal_errors=("check B608 raised KeyError",)),
        scanned("ok.py"),
    )
    odd = candidate("ok.py", 5, 0, end_line=2)  # an end before the start is clamped, never emitted
    run = run_of(sarif.to_sarif(report([finding(odd), finding(candidate("ok.py", 1, 7))], files=files)))
    for region in regions(run):
        assert region["startLine"] >= 1 and region["startColumn"] >= 1 and region["endLine"] >= region["startLine"]
    assert len(run["results"]) == 2
    assert run["invocations"][0]["executionSuccessful"] is True
    got = [(n["descriptor"]["id"], n["level"], n["locations"][0]["physicalLocation"]["artifactLocation"]["uri"])
           for n in notes(run)]
    assert got == [("FL0003", "warning", "big.min.py"), ("FL0003", "warning", "bin/logo.py"),
                   ("FL0004", "warning", "legacy.py"), ("FL0005", "error", "legacy.py")]
    assert notes(run)[1]["message"]["text"] == "Skipped bin/logo.py: NUL byte at line 2"
    assert run["properties"]["filesSkipped"] == 2


# Case 10 D6: location cap, atomic write, aborted run.

def test_more_than_10_locations_spill_into_related_locations():
    findings = [finding(candidate("lib/x.py", 7, 2, rule_id=f"R{n:02}", cwe=89, end_line=7 + n)) for n in range(12)]
    [result] = run_of(sarif.to_sarif(report(findings)))["results"]
    assert len(result["locations"]) == sarif.MAX_LOCATIONS == 10
    assert [loc["physicalLocation"]["region"]["endLine"] for loc in result["relatedLocations"]] == [17, 18]
    assert len(result["properties"]["mergedFrom"]) == 12


def test_an_aborted_run_still_exports_valid_sarif(tmp_path):
    reason = "aborted by the user (SIGTERM) during investigate"
    r = report(files=(scanned("app/a.py"),), complete=False, halt_reason=reason)
    export.write_outputs(r, tmp_path)
    run = run_of(json.loads((tmp_path / "findings.sarif").read_bytes()))
    assert run["results"] == [] and run["invocations"][0]["executionSuccessful"] is False
    assert any(reason in n["message"]["text"] and n["level"] == "error" for n in notes(run))
    md = (tmp_path / "findings.md").read_text(encoding="utf-8")
    assert f"> **Incomplete run.** The run stopped before every step finished: {reason}." in md


def test_a_failed_write_leaves_the_previous_file_whole(tmp_path):
    old = report([finding(candidate())])
    export.write_outputs(old, tmp_path)
    before = (tmp_path / "findings.sarif").read_bytes()
    faults.arm("export.findings.sarif.after_write:1:eio")
    try:
        with pytest.raises(OSError):
            export.write_outputs(report(complete=False, halt_reason="disk trouble"), tmp_path)
    finally:
        faults.arm(None)
    assert (tmp_path / "findings.sarif").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(export.OUTPUT_NAMES)  # no temp file left
    validate(json.loads(before))


# Determinism, Markdown and JSON.

def test_same_report_same_bytes(tmp_path):
    findings = [finding(candidate(f"m{n}.py", n + 1), SEVERITIES[n % 5]) for n in range(20)]
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    digests = export.write_outputs(report(findings), a)
    assert export.write_outputs(report(list(reversed(findings))), b) == digests
    for name in export.OUTPUT_NAMES:
        data = (a / name).read_bytes()
        assert data == (b / name).read_bytes() and data.endswith(b"\n")
        assert hashlib.sha256(data).hexdigest() == digests[name]
    run_of(json.loads((a / "findings.sarif").read_bytes()))


def test_markdown_cells_cannot_break_the_table():
    rationale = "First | line\nsecond <script>alert(1)</script> `x` [a](http://e.vil) *b*"
    nasty = finding(candidate("we|ird\nname.py", 2), rationale=rationale)
    md = export.to_markdown(report([nasty], complete=False, halt_reason="x | <b>y</b>"))
    parser = MarkdownIt("commonmark").enable("table")
    tokens = parser.parse(md)
    rows: list[list[str]] = []
    for token, following in zip(tokens, tokens[1:]):
        if token.type == "tr_open":
            rows.append([])
        elif token.type in ("th_open", "td_open"):
            rows[-1].append(following.content)
    assert [len(row) for row in rows if row[0] in ("#", "1")] == [8, 8]
    html = parser.render(md)
    assert "<td>we|ird<br>name.py:2:1</td>" in html
    # The row shows the finding's own rationale: the first pass's, which the revalidation quotes.
    assert "<td>First | line second &lt;script&gt;alert(1)&lt;/script&gt; `x` [a](http://e.vil) *b*</td>" in html
    assert "<script>" not in html and "<a href" not in html and "<em>" not in html and "<b>" not in html


def test_markdown_summary_and_skipped_files():
    files = (FileReport(path="logo.py", sha256="1" * 64, size_bytes=9, status="skipped", reason="NUL byte at line 2"),
             scanned("app/run.py"))
    md = export.to_markdown(report([finding(candidate(), "high"), finding(candidate(line=9), "low")], files=files,
                                   dismissed=3))
    assert "| high | 1 |" in md and "| low | 1 |" in md and "| **total** | **2** |" in md
    assert "## Skipped files" in md and "| logo.py | NUL byte at line 2 |" in md
    assert "candidates dismissed as false positives: 3." in md and "Incomplete run" not in md
    assert md.index("### 1. high") < md.index("### 2. low")


def test_json_is_versioned_and_complete():
    files = (FileReport(path="logo.py", sha256="1" * 64, size_bytes=9, status="skipped", reason="NUL byte at line 2"),
             scanned("app/run.py"))
    f = finding(candidate())
    doc = export.to_json(report([f], files=files, **HALTED))
    assert doc["schema"] == 1
    assert doc["run"]["complete"] is False and doc["run"]["halt_reason"] == HALTED["halt_reason"]
    assert Finding.from_json(doc["findings"][0]) == f and doc["findings"][0]["cwe"] == 78
    assert [(x["path"], x["status"], x["reason"]) for x in doc["files"]] == [
        ("app/run.py", "scanned", None), ("logo.py", "skipped", "NUL byte at line 2")]
    assert doc["summary"]["files_skipped"] == 1


# The schema check itself.

def _first_location(log: dict) -> dict:
    return log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]


@pytest.mark.parametrize("spoil, where", [
    (lambda log: _first_location(log)["region"].update(startColumn=0), "region.startColumn"),
    (lambda log: _first_location(log)["artifactLocation"].update(uri="my dir/a.py"), "artifactLocation.uri"),
    (lambda log: _first_location(log)["artifactLocation"].update(uri="x%zz.py"), "artifactLocation.uri"),
    (lambda log: log["runs"][0]["invocations"][0].update(startTimeUtc="yesterday"), "startTimeUtc"),
    (lambda log: log["runs"][0]["results"][0].update(level="high"), "results[0].level"),
])
def test_the_schema_check_catches_bad_logs(spoil, where):
    log = sarif.to_sarif(report([finding(candidate())]))
    spoil(log)
    with pytest.raises(AssertionError, match=re.escape(where)):
        validate(log)


def test_a_missing_schema_fails_with_the_fix(monkeypatch, tmp_path):
    monkeypatch.setenv("FLEETLEDGER_SARIF_SCHEMA", str(tmp_path / "absent.json"))
    with pytest.raises(pytest.fail.Exception, match=r"run `bash \.ci/fetch-sarif-schema`"):
        validate({})


def test_a_taint_finding_carries_its_trace_as_a_code_flow_and_in_the_markdown() -> None:
    hop = {"path": "app/views.py", "line": 7, "col": 4, "what": "assigned to host"}
    trace = {"source": {"channel": "http", "what": "args of the Flask request", "path": "app/views.py", "line": 7, "col": 11},
             "steps": [hop],
             "sink": {"path": "app/run.py", "line": 3, "col": 0, "end_line": 3, "end_col": 20, "scope": "run",
                      "what": "the shell command os.system() runs", "role": "argument 1", "model": "os.toml",
                      "api": "os.system"},
             "sanitisers": []}
    c = dataclasses.replace(candidate(rule_id="FLT-command", detector="fleetledger-taint"),
                            trace={"traces": [trace], "also": []})
    scan = report([finding(c, "critical")], files=(
        scanned("app/run.py", c), FileReport(path="app/views.py", sha256="0" * 64, size_bytes=10, status="scanned",
                                             parser="tree-sitter", detectors_not_run=("bandit: cannot parse",),
                                             not_analysed=("app/views.py: f() not analysed to the end",))))
    run = run_of(sarif.to_sarif(scan))
    [result] = run["results"]
    [flow] = result["codeFlows"]
    hops = flow["threadFlows"][0]["locations"]
    assert [h["location"]["message"]["text"] for h in hops] == [
        "source: args of the Flask request", "assigned to host", "sink: the shell command os.system() runs (argument 1)"]
    assert [h["location"]["physicalLocation"]["region"]["startLine"] for h in hops] == [7, 7, 3]
    texts = [n["message"]["text"] for n in notes(run)]
    assert "app/views.py: bandit: cannot parse" in texts and "app/views.py: app/views.py: f() not analysed to the end" in texts
    markdown = export.to_markdown(scan)
    assert "1. source: args of the Flask request (app/views.py:7)" in markdown
    assert "3. sink: the shell command os.system() runs, argument 1 (app/run.py:3)" in markdown
    assert "analysed in part only" in markdown


def test_exclusions_are_grouped_by_rule_capped_in_text_and_complete_in_json() -> None:
    """Issue 13 item 7: what each exclusion rule did is in every export; the text names at most
    ``MAX_LISTED_PATHS`` paths and always the count, findings.json every path."""
    from fleetledger.jobs.scan.exclusions import MAX_LISTED_PATHS, exclusions

    def skipped(path: str, rule: str) -> FileReport:
        return FileReport(path=path, sha256="0" * 64, size_bytes=1, status="skipped", reason=f"denied by policy: {rule}")

    files = ([skipped(f"gen/m{n:02d}.py", "repository rule exclude 'gen/**'") for n in range(15)]
             + [scanned("app/views.py"), scanned("app/util.py"), scanned("lib/x.py"),
                skipped("other/y.py", "no policy.read pattern matches '/srv/repo/other/y.py'")])
    found = exclusions(files, {"exclude": ["gen/**", "app/*.py"]})
    assert [(e.origin, e.rule, e.applied, len(e.paths)) for e in found] == [
        ("repository", "repository rule exclude 'app/*.py'", False, 2),
        ("repository", "repository rule exclude 'gen/**'", True, 15),
        ("policy", "policy.read", True, 1)]
    text = found[1].describe()
    assert "15 file(s) left out" in text and "gen/m09.py" in text and "gen/m10.py" not in text
    assert text.endswith(f"and {15 - MAX_LISTED_PATHS} more")
    scan = report(files=tuple(files), exclusions=found)
    data = export.to_json(scan)
    assert data["exclusions"][1]["count"] == 15 and len(data["exclusions"][1]["paths"]) == 15
    assert (data["summary"]["excluded_by_repository"], data["summary"]["repository_exclusion_refused"],
            data["summary"]["excluded_by_policy"]) == (15, 2, 1)
    run = run_of(sarif.to_sarif(scan))
    ids = [n["descriptor"]["id"] for n in notes(run)]
    assert ids[:3] == ["FL0008", "FL0009", "FL0010"]
    assert len(notes(run)[1]["locations"]) == MAX_LISTED_PATHS
    assert [e["count"] for e in run["properties"]["exclusions"]] == [2, 15, 1]
    markdown = export.to_markdown(scan)
    section = markdown.split("## Exclusions", 1)[1].split("\n## ", 1)[0]
    assert "**Repository rule refused**" in section and "**Excluded by the repository's rules**" in section
    assert "and 5 more" in section and "Excluded by the policy" in section

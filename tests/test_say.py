"""Say what happened (issue 14, item 8 and part of 7): every run command ends with what it
resumed, reused, redid and skipped, counted from the ledger; the four output formats agree on
each finding; a scan with nothing to scan says so; ``halt`` of a crashed run records the
policy in force; the brief names only the files it read."""

from __future__ import annotations

import json
import re
import signal
from html.parser import HTMLParser
from pathlib import Path

import pytest

from fleetledger.jobs.scan import export, markdown, sarif
from fleetledger.jobs.scan.brief import derive_brief
from fleetledger.jobs.scan.shapes import Candidate, Finding, ModelAnswer, ScanReport
from fleetledger.ledger import Record
from fleetledger.policy import Policy
from fleetledger.replay import RunView
from fleetledger.report_html import fold_with_timeline, render

from e2e import kill_cli, records, run_cli, start_cli, stopped_child, wait_for

DEMO = Path(__file__).resolve().parent.parent / "fleetledger" / "demo_repo"
STEPS_LINE = re.compile(r"^steps: (\d+) reused \(.*?\), (\d+) redone \(.*?\), (\d+) new; "
                        r"skipped: (\d+) denied by the policy, (\d+) failed without a result", re.MULTILINE)


# -- the four formats agree ----------------------------------------------------------------


def _finding(line: int, rationale: str) -> Finding:
    candidate = Candidate(id=f"c{line}", path="app/views.py", line=line, col=4, end_line=line,
                          rule_id="B602", rule_name="subprocess_popen_with_shell_equals_true", detector="bandit",
                          cwe=78, detector_severity="HIGH", detector_confidence="HIGH", message="shell=True",
                          snippet="subprocess.run(cmd, shell=True)", scope="run")
    opening = "Revalidation of the first pass's vulnerable (8/10): the facts were re-derived and re-checked at length, " \
              "so that this sentence alone is longer than the table's rationale column."
    return Finding(candidate=candidate, severity="high", severity_reason="fed by a request",
                   investigation=ModelAnswer(verdict="vulnerable", confidence=8, cwe=88, rationale=rationale),
                   revalidation=ModelAnswer(verdict="uncertain", confidence=6, cwe=77, rationale=f"{opening} {rationale}"))


class _Rows(HTMLParser):
    """The cells of the HTML report's findings table, as text (``<b>`` text kept apart)."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self.bold: list[str] = []
        self._in, self._cell, self._b = False, None, False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self._in = "findings" in (dict(attrs).get("class") or "")
        elif self._in and tag == "tr":
            self.rows.append([])
        elif self._in and tag == "td":
            self._cell = ""
        elif self._in and tag == "b":
            self._b = True

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self._cell is not None:
            self.rows[-1].append(self._cell)
            self._cell = None
        elif tag == "b":
            self._b = False
        elif tag == "table":
            self._in = False

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell += data
        if self._b and self._in:
            self.bold.append(data)


def test_cwe_severity_and_verdict_are_the_same_in_all_four_formats() -> None:
    f = _finding(12, "Source: args of the request (line 10) -> sink: subprocess.run() (line 12).")
    report = ScanReport(run_id="scan-1", target="/src", findings=(f,), files=(), complete=True, halt_reason=None,
                        dismissed=0, tool_version="0", started_utc="2026-01-01T00:00:00Z", exclusions=())
    expected = ("high", "CWE-77", "uncertain")

    as_json = export.to_json(report)["findings"][0]
    assert (as_json["severity"], f"CWE-{as_json['cwe']}", as_json["verdict"]) == expected

    result = sarif.to_sarif(report)["runs"][0]["results"][0]
    props = result["properties"]
    assert (props["severity"], props["cwe"], props["verdict"]) == expected

    row = next(line for line in markdown.to_markdown(report).splitlines() if line.startswith("| 1 |"))
    cells = [c.strip() for c in re.split(r"(?<!\\)\|", row)[1:-1]]
    header = next(line for line in markdown.to_markdown(report).splitlines() if line.startswith("| # |"))
    names = [c.strip() for c in header.split("|")[1:-1]]
    md = dict(zip(names, cells))
    assert (md["Severity"], md["CWE"], md["Verdict"]) == expected

    view, timeline = fold_with_timeline([], "scan-1")
    parser = _Rows()
    parser.feed(render(view, timeline, report, generated_ms=0))
    (cells,) = [row for row in parser.rows if row]
    assert (cells[0].strip(), cells[1].strip(), parser.bold[0]) == expected


def test_markdown_rationale_is_each_findings_own() -> None:
    findings = tuple(_finding(n, f"Source: parameter 'cmd' of run_{n}() (line {n}) -> sink: subprocess.run() (line {n}).")
                     for n in (3, 7, 11))
    report = ScanReport(run_id="scan-1", target="/src", findings=findings, files=(), complete=True, halt_reason=None,
                        dismissed=0, tool_version="0", started_utc="2026-01-01T00:00:00Z", exclusions=())
    rows = [line for line in markdown.to_markdown(report).splitlines() if re.match(r"\| \d+ \|", line)]
    rationales = [re.split(r"(?<!\\)\|", row)[-2].strip() for row in rows]
    assert len(rationales) == 3 and len(set(rationales)) == 3, rationales
    for n, text in zip((3, 7, 11), rationales):
        assert f"run\\_{n}()" in text


@pytest.mark.slow
def test_the_demo_scan_reports_distinct_rationales_and_one_cwe_per_finding(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    done = run_cli("scan", "--demo", "--workspace", str(ws), "--no-progress")
    assert done.returncode == 0, done.stderr
    rows = [line for line in (ws / "findings.md").read_text().splitlines() if re.match(r"\| \d+ \|", line)]
    rationales = [re.split(r"(?<!\\)\|", row)[-2].strip() for row in rows]
    assert len(rows) >= 5 and len(set(rationales)) == len(rationales), rationales
    assert not any(r.startswith("Revalidation of") for r in rationales)


# -- halt of a crashed run -----------------------------------------------------------------


@pytest.mark.slow
def test_halt_without_a_live_coordinator_records_the_policy_in_force(tmp_path: Path) -> None:
    ws, policy = tmp_path / "ws", tmp_path / "policy.toml"
    policy.write_text("max_model_calls = 900\n")
    crashed = run_cli("scan", "--demo", "--workspace", str(ws), "--policy", str(policy), "--no-progress",
                      env={"FLEETLEDGER_FAULT": "coordinator.after_plan:1:kill"})
    assert crashed.returncode == -signal.SIGKILL, crashed.stderr
    halted = run_cli("halt", "--workspace", str(ws), "--policy", str(policy), "--reason", "crashed, parked")
    assert halted.returncode == 0, halted.stderr
    history = records(ws)
    (halt,) = [r for r in history if r.kind == "run.halted"]
    started = next(r for r in history if r.kind == "run.started")
    expected = Policy.load(policy).narrowed_by(DEMO / ".fleetledger.toml").hash
    assert halt.policy_hash == expected == started.policy_hash
    assert halt.why == "crashed, parked"

    # Without --policy, the same resolution as a scan's: the safe defaults here.
    ws2 = tmp_path / "ws2"
    run_cli("scan", "--demo", "--workspace", str(ws2), "--no-progress", env={"FLEETLEDGER_FAULT": "coordinator.after_plan:1:kill"})
    assert run_cli("halt", "--workspace", str(ws2)).returncode == 0
    (halt2,) = [r for r in records(ws2) if r.kind == "run.halted"]
    assert halt2.policy_hash == Policy().hash != ""


# -- the brief's sources -------------------------------------------------------------------


def test_brief_sources_are_the_files_it_read(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "README.md").write_text("A shop that sells things over the web.\n")
    (root / "README.rst").write_text("Never read: README.md comes first.\n")
    (root / "pyproject.toml").write_text('[project]\nname = "shop"\ndependencies = ["flask"]\n')
    (tmp_path / "outside.txt").write_text("flask\n")
    (root / "requirements.txt").symlink_to(tmp_path / "outside.txt")  # a link is not followed, so not read
    (root / "setup.cfg").write_text("[metadata]\nname = shop\n")
    read: list[str] = []
    import fleetledger.jobs.scan.brief as brief_module

    real_open = open

    def spying_open(path, *args, **kwargs):  # type: ignore[no-untyped-def]
        if Path(path).parent == root:
            read.append(Path(path).name)
        return real_open(path, *args, **kwargs)

    brief_module.open = spying_open  # type: ignore[attr-defined]
    try:
        brief = derive_brief(root, readable=("pyproject.toml", "README.md", "README.rst", "requirements.txt"))
    finally:
        del brief_module.open  # type: ignore[attr-defined]
    assert sorted(brief["sources"]) == sorted(set(read)) == ["README.md", "pyproject.toml"]
    assert "setup.cfg" not in brief["sources"], "not readable: the gate did not allow it"

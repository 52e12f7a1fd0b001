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
STEPS_LINE = re.compile(r"^steps: (\d+) reused \(.*?\), (\d+) redone \(.*?\), (\d+) new, (\d+) carried over .*?; "
                        r"skipped: (\d+) denied by the policy, (\d+) failed without a result", re.MULTILINE)


# -- what a resumed run says ---------------------------------------------------------------


def _ledger_account(history: list[Record]) -> dict[str, int]:
    """What the last session did, counted straight from the records (the test's own count)."""
    start = [r for r in history if r.kind in ("run.started", "run.resumed")][-1]
    before = [r for r in history if r.seq < start.seq]
    after = [r for r in history if r.seq > start.seq]
    done_before = {r.key for r in before if r.kind == "step.done"}
    open_before = {r.key for r in before if r.kind == "step.intent"} - done_before
    done_after = {r.key for r in after if r.kind == "step.done"}
    failed_after = {r.key for r in after if r.kind == "step.failed"} - done_after - done_before
    return {"reused": len(done_before), "redone": len(done_after & open_before),
            "new": len(done_after - open_before), "failed": len(failed_after),
            "taken_back": sum(1 for r in after if r.kind == "lease.expired" and r.payload.get("cause") == "coordinator restarted")}


@pytest.mark.slow
def test_sigkill_then_the_same_command_says_what_it_resumed_reused_and_redid(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    args = ("scan", "--demo", "--workers", "2", "--workspace", str(ws), "--no-progress")
    # The worker that detects shop/app.py stops itself inside that step, after its intent is
    # recorded; then the coordinator gets a real SIGKILL: app.py's step is begun, never finished.
    proc = start_cli(*args, env={"FLEETLEDGER_FAULT": "scan.detect:shop/app.py:1:stop"})
    try:
        wait_for(lambda: any(r.kind == "step.intent" and r.payload.get("name") == "detect:shop/app.py"
                             for r in records(ws)), what="the intent of detect:shop/app.py", proc=proc)
        wait_for(lambda: stopped_child(proc.pid) is not None, what="the worker to stop inside the step", proc=proc)
        paused = stopped_child(proc.pid)
        kill_cli(proc)
        assert proc.returncode == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            kill_cli(proc)
    if paused.is_running():
        paused.kill()
    crashed = _ledger_account(records(ws))

    rerun = run_cli(*args)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    history = records(ws)
    counted = _ledger_account(history)
    assert counted["reused"] >= 1 and counted["redone"] == 1 and counted["new"] >= 1, counted
    assert counted["reused"] >= crashed["new"], "what the killed session recorded is reused"
    tail = rerun.stdout.strip().splitlines()[-5:]
    said = STEPS_LINE.search("\n".join(tail))
    assert said is not None, rerun.stdout
    assert [int(n) for n in said.groups()] == [counted["reused"], counted["redone"], counted["new"], 0, 0,
                                              counted["failed"]]
    resumed = next(line for line in tail if line.startswith("this session resumed"))
    assert "resume after a crash" in resumed
    assert f"{counted['taken_back']} lease(s) of the stopped session taken back" in resumed
    assert counted["taken_back"] >= 1

    again = run_cli(*args)
    assert again.returncode == 0
    assert "already finished" in again.stdout
    assert f"nothing was resumed, reused or redone: {len([r for r in history if r.kind == 'step.done'])} step result(s) " \
           "were recorded" in again.stdout


@pytest.mark.slow
def test_a_fresh_run_says_every_step_is_new(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    done = run_cli("scan", "--demo", "--workspace", str(ws), "--no-progress")
    assert done.returncode == 0, done.stderr
    history = records(ws)
    said = STEPS_LINE.search(done.stdout)
    assert said is not None and [int(n) for n in said.groups()] == [0, 0, sum(r.kind == "step.done" for r in history), 0, 0, 0]
    assert any(line.startswith("this session started run") for line in done.stdout.splitlines())


# -- nothing to scan -----------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("files", [{}, {"README.md": "# notes\n", "web/index.js": "alert(1)\n"}], ids=["empty", "no-python"])
def test_nothing_to_scan_says_so_and_fails_unless_allowed(tmp_path: Path, files: dict[str, str]) -> None:
    target = tmp_path / "target"
    target.mkdir()
    for name, text in files.items():
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        (target / name).write_text(text)
    refused = run_cli("scan", str(target), "--workspace", str(tmp_path / "ws1"), "--no-progress")
    said = refused.stdout + refused.stderr
    assert refused.returncode == 4, said
    assert "nothing to scan" in said and "no Python file" in said and "--allow-empty" in said
    assert "all 0 file(s) scanned" not in said
    if files:
        assert f"{len(files)} other file(s)" in said
    allowed = run_cli("scan", str(target), "--allow-empty", "--workspace", str(tmp_path / "ws2"), "--no-progress")
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr
    assert "nothing to scan" in allowed.stdout


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


# -- README's commands ---------------------------------------------------------------------


REPO = Path(__file__).resolve().parent.parent


def test_readmes_test_command_prepares_every_prerequisite_a_test_names() -> None:
    """README's set-up, then README's test command, then green: the test command is the script
    that prepares what the tests need, so each script a missing-prerequisite message names runs
    before pytest does (a regression test: `python -m pytest` right after the set-up failed)."""
    readme = (REPO / "README.md").read_text()
    blocks = re.findall(r"```\n(.*?)```", readme, re.DOTALL)
    setup, test = blocks[0].strip().splitlines(), blocks[1].strip()
    assert len(setup) == 2 and setup[1].startswith("fleetledger scan"), "two set-up/run commands"
    assert test == "bash .ci/test"
    run = (REPO / ".ci" / "run").read_text()
    assert run.strip().splitlines()[-1] == test, "CI runs README's test command"
    script = (REPO / ".ci" / "test").read_text()
    commands = [line.strip() for line in script.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    pytest_at = next(n for n, line in enumerate(commands) if "python -m pytest" in line)
    named = set()
    for path in (REPO / "tests").glob("*.py"):
        named |= set(re.findall(r"\.ci/([a-z-]+)", path.read_text()))
    named -= {"run", "test"}  # CI itself and this command
    assert {"fetch-sarif-schema", "fetch-test-repos", "install-pyodide", "install-browser", "start-postgres",
            "install-sandboxes"} <= named
    for name in named:
        at = [n for n, line in enumerate(commands) if f".ci/{name}" in line]
        assert at and at[0] < pytest_at, f".ci/test runs .ci/{name} before the tests"

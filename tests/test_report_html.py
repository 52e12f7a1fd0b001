"""``fleetledger report --html``, checked in a real headless browser (Debian's chromium, driven
over the DevTools protocol on a pipe): it loads with no network and no console error, a hostile
file name stays text, and a screenshot shows the timeline of a run that crashed, halted and
resumed."""

from __future__ import annotations

import base64
import fcntl
import io
import json
import os
import select
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from fleetledger.replay import fold

from e2e import records, run_cli, run_synthetic, start_cli, stopped_child, wait_for

pytestmark = pytest.mark.slow

CHROMIUM = Path("/usr/bin/chromium")
SCRIPT_NAME = "<script>window.pwned=1</script>.py"
IMG_NAME = '<img src=x onerror="window.pwned=2">.py'
SPRINT_COLOURS = [(0x2F, 0x6F, 0xB3), (0x7A, 0x4F, 0xB5), (0x1F, 0x8A, 0x70), (0xC2, 0x7C, 0x0E)]
PROBLEM_EVENTS = ("Runtime.exceptionThrown", "Runtime.consoleAPICalled", "Log.entryAdded", "Page.javascriptDialogOpening")


class Browser:
    """Headless chromium driven over ``--remote-debugging-pipe`` (fd 3 in, fd 4 out, NUL-framed JSON).

    Args:
        profile: A fresh user-data folder.
    """

    FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--no-first-run", "--disable-sync", "--disable-extensions",
             "--disable-default-apps", "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9",
             "--remote-debugging-pipe")

    def __init__(self, profile: Path) -> None:
        to_browser, self._out = os.pipe()
        self._in, from_browser = os.pipe()
        high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (to_browser, from_browser)]
        for fd in (to_browser, from_browser):
            os.close(fd)
        self.proc = subprocess.Popen(
            ["bash", "-c", f'exec "$@" 3<&{high[0]} 4>&{high[1]} {high[0]}<&- {high[1]}>&-', "bash", str(CHROMIUM),
             *self.FLAGS, f"--user-data-dir={profile}", "about:blank"],
            pass_fds=high, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for fd in high:
            os.close(fd)
        self._buffer = b""
        self._id = 0
        self.events: list[dict[str, Any]] = []

    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None,
             timeout_s: float = 30) -> dict[str, Any]:
        """Sends a command and returns its result; events read meanwhile go to ``events``."""
        self._id += 1
        message = {"id": self._id, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        os.write(self._out, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout_s
        while True:
            answer = self._next(deadline)
            if answer.get("id") == self._id:
                if "error" in answer:
                    raise AssertionError(f"{method}: {answer['error']}")
                return answer["result"]
            self.events.append(answer)

    def wait_event(self, method: str, session: str, timeout_s: float = 30) -> dict[str, Any]:
        """Returns the first event ``method`` of ``session``, reading until it comes."""
        deadline = time.monotonic() + timeout_s
        while True:
            for event in self.events:
                if event.get("method") == method and event.get("sessionId") == session:
                    return event
            self.events.append(self._next(deadline))

    def _next(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._in], [], [], left)[0]:
                raise AssertionError("chromium did not answer in time")
            chunk = os.read(self._in, 1 << 16)
            if not chunk:
                raise AssertionError(f"chromium closed its pipe (exit {self.proc.poll()})")
            self._buffer += chunk
        raw, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(raw)

    def close(self) -> None:
        try:
            self.send("Browser.close", timeout_s=10)
        finally:
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            os.close(self._out)
            os.close(self._in)


class Page:
    """One tab showing one file, offline, with every request and problem the browser reported."""

    def __init__(self, browser: Browser, path: Path) -> None:
        self.browser = browser
        target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(f"{domain}.enable")
        self.send("Network.emulateNetworkConditions",
                  {"offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})
        self.send("Emulation.setDeviceMetricsOverride", {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False})
        self.send("Page.navigate", {"url": path.resolve().as_uri()})
        browser.wait_event("Page.loadEventFired", self.session)
        self.eval("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")

    def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return self.browser.send(method, params, self.session)

    def eval(self, expression: str) -> Any:
        """Evaluates JavaScript in the page and returns its value."""
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        assert "exceptionDetails" not in result, result
        return result["result"].get("value")

    def requests(self) -> list[str]:
        """URLs of every request the page made."""
        return [e["params"]["request"]["url"] for e in self._events("Network.requestWillBeSent")]

    def problems(self) -> list[dict[str, Any]]:
        """Console messages, log entries, uncaught exceptions and dialogs (``alert``)."""
        return [e["params"] for e in self._events(*PROBLEM_EVENTS)]

    def screenshot(self, selector: str) -> Image.Image:
        """A PNG of the element, decoded."""
        box = self.eval(f"JSON.stringify(document.querySelector({json.dumps(selector)}).getBoundingClientRect())")
        rect = json.loads(box)
        clip = {"x": rect["x"], "y": rect["y"] + self.eval("window.scrollY"), "width": rect["width"],
                "height": rect["height"], "scale": 1}
        shot = self.send("Page.captureScreenshot", {"format": "png", "clip": clip, "captureBeyondViewport": True})
        return Image.open(io.BytesIO(base64.b64decode(shot["data"]))).convert("RGB")

    def _events(self, *methods: str) -> list[dict[str, Any]]:
        return [e for e in self.browser.events if e.get("sessionId") == self.session and e.get("method") in methods]


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    if not CHROMIUM.exists():
        raise AssertionError(f"{CHROMIUM} is missing: run .ci/install-browser first (CI's .ci/run does)")
    b = Browser(tmp_path_factory.mktemp("chromium-profile"))
    try:
        yield b
    finally:
        b.close()


@pytest.fixture(scope="module")
def eventful(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A scan of a hostile little repository whose run lost a worker, halted on its quota, was
    resumed, lost its coordinator, and was resumed again to the end; its report written."""
    base = tmp_path_factory.mktemp("eventful")
    repo = base / "repo"
    (repo / "app").mkdir(parents=True)
    for n in range(3):
        (repo / "app" / f"m{n}.py").write_text(
            f"import subprocess\nfrom flask import request\n\n\ndef run_{n}():\n"
            "    return subprocess.check_output('ls ' + request.args['d'], shell=True)\n")
    (repo / SCRIPT_NAME.split("/")[0]).mkdir()
    (repo / SCRIPT_NAME).write_text("import os\nfrom flask import request\n\n\ndef f():\n    os.system(request.args['c'])\n")
    (repo / IMG_NAME).write_bytes(b"import os\nos.system(input())\x00\n")
    ws = base / "ws"
    proc = start_cli("scan", str(repo), "--workspace", str(ws), "--workers", "2", "--model-quota", "6", "--no-progress",
                     env={"FLEETLEDGER_FAULT": "scan.investigate.after_step:1:stop", "FLEETLEDGER_FAULT_ONCE": str(base / "once")})
    wait_for(lambda: stopped_child(proc.pid) is not None, what="a worker to pause", proc=proc)
    stopped_child(proc.pid).send_signal(signal.SIGKILL)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 75, err
    crashed = run_cli("resume", "--workspace", str(ws), "--no-progress", env={"FLEETLEDGER_FAULT": "ledger.after_commit:3:kill"})
    assert crashed.returncode == -signal.SIGKILL
    done = run_cli("resume", "--workspace", str(ws), "--no-progress")
    assert done.returncode == 0, done.stdout + done.stderr
    wrote = run_cli("report", "--html", "--workspace", str(ws))
    assert wrote.returncode == 0, wrote.stderr
    assert wrote.stdout.strip() == f"wrote {ws.resolve() / 'report.html'}"
    return ws


@pytest.fixture(scope="module")
def page(browser: Browser, eventful: Path) -> Page:
    return Page(browser, eventful / "report.html")


def test_the_harness_sees_a_network_request_and_a_console_error(browser: Browser, tmp_path: Path) -> None:
    bad = tmp_path / "bad.html"
    bad.write_text('<!DOCTYPE html><img src="http://example.invalid/x.png"><script>console.error("boom")</script>')
    p = Page(browser, bad)
    assert any(url.startswith("http://example.invalid/") for url in p.requests())
    assert any("boom" in json.dumps(problem) for problem in p.problems())


def test_loads_offline_with_no_request_and_no_console_error(page: Page, eventful: Path) -> None:
    assert page.requests() == [(eventful / "report.html").resolve().as_uri()], "the page fetched nothing but itself"
    assert page.problems() == []
    assert page.eval("document.querySelectorAll('link, img, iframe, object, embed, [src]').length") == 0
    assert page.eval("document.scripts.length") == 1


def test_hostile_file_names_stay_text(page: Page) -> None:
    assert page.eval("typeof window.pwned") == "undefined"
    text = page.eval("document.body.innerText")
    assert f"{SCRIPT_NAME}:6" in text, "the finding's location is shown as the literal file name"
    assert IMG_NAME in text and "NUL byte at line 2" in text, "the skipped file, with its reason"


def test_timeline_marks_sessions_crashes_resumes_halts_and_expired_leases(page: Page, eventful: Path) -> None:
    history = records(eventful)
    workers = sorted({r.payload["worker"] for r in history if r.kind == "task.assigned"})
    labels = page.eval("Array.from(document.querySelectorAll('#timeline-svg .lane-label')).map(e => e.textContent)")
    assert labels == ["coordinator", *workers]
    count = lambda selector: page.eval(f"document.querySelectorAll('#timeline-svg {selector}').length")  # noqa: E731
    assert count(".session") == 3 and count(".session.ended-interrupted") == 1
    assert count(".mark-resumed") == sum(1 for r in history if r.kind == "run.resumed") == 2
    assert count(".mark-halted") == 1 and count(".mark-finished") == 1
    assert count(".mark-expired") == sum(1 for r in history if r.kind == "lease.expired") >= 2
    assert count(".mark-crash") == 1 + sum(1 for r in history if r.kind == "worker.exited")
    assert count(".seg") == sum(1 for r in history if r.kind == "task.assigned")
    events = page.eval("document.querySelector('table.events').innerText")
    assert "model quota exhausted" in events and "killed by SIGKILL" in events


def test_screenshot_shows_the_timeline(page: Page, tmp_path: Path) -> None:
    image = page.screenshot("#timeline-svg")
    image.save(tmp_path / "timeline.png")
    width, height = image.size
    assert width > 800 and height > 100
    colours = {colour: n for n, colour in image.getcolors(maxcolors=width * height)}
    drawn = sum(n for colour, n in colours.items() if max(colour) - min(colour) > 40)
    assert drawn > 2000, f"only {drawn} coloured (not grey, not background) pixels in the timeline"
    shown = [c for c in SPRINT_COLOURS if colours.get(c, 0) > 20]
    assert len(shown) == len(SPRINT_COLOURS), f"tasks of each sprint drawn in its colour; saw {shown}"


def test_findings_and_sprints_match_the_export_and_the_table_sorts(page: Page, eventful: Path) -> None:
    exported = json.loads((eventful / "findings.json").read_text())
    rows = page.eval("Array.from(document.querySelectorAll('table.findings tbody tr')).map(r => "
                     "Array.from(r.cells).map(c => c.innerText))")
    assert len(rows) == len(exported["findings"]) > 0
    expected = {(f["severity"], f"CWE-{f['cwe']}", f"{f['candidate']['path']}:{f['candidate']['line']}", f["verdict"])
                for f in exported["findings"]}
    assert {(r[0], r[1], r[2], r[5].split(" ")[0]) for r in rows} == expected, "the CWE and verdict of findings.json"
    assert all(r[4] for r in rows), "a rationale on every row"
    view = fold(records(eventful))
    sprints = page.eval("Array.from(document.querySelectorAll('table.sprints tbody tr')).map(r => "
                        "[r.cells[0].innerText, r.cells[2].innerText])")
    assert sprints == [[s, "{}/{}".format(*view.sprint_progress(s))] for s in view.sprints]
    locations = "Array.from(document.querySelectorAll('table.findings tbody tr')).map(r => r.cells[2].innerText)"
    page.eval("document.querySelectorAll('table.findings th')[2].click()")
    ascending = page.eval(locations)
    page.eval("document.querySelectorAll('table.findings th')[2].click()")
    assert page.eval(locations) == ascending[::-1], "a second click on a header reverses the order"
    assert page.problems() == []


def test_report_of_a_halted_run_and_of_a_job_that_is_not_a_scan(tmp_path: Path, browser: Browser) -> None:
    halted = tmp_path / "halted"
    assert run_cli("scan", "--demo", "--workspace", str(halted), "--model-quota", "2", "--no-progress").returncode == 75
    out = tmp_path / "out" / "halted.html"
    out.parent.mkdir()
    assert run_cli("report", "--html", "--workspace", str(halted), "--out", str(out)).returncode == 0
    p = Page(browser, out)
    assert p.eval("document.querySelector('.banner.halted').innerText").startswith("HALTED at ")
    assert "model quota exhausted" in p.eval("document.querySelector('.banner.halted').innerText")
    assert p.problems() == []

    synthetic = tmp_path / "synthetic"
    assert run_synthetic(synthetic, "--tasks", "3", "--steps", "2").returncode == 0
    assert run_cli("report", "--html", "--workspace", str(synthetic)).returncode == 0
    p = Page(browser, synthetic / "report.html")
    assert "A synthetic job has no findings." in p.eval("document.body.innerText")
    assert p.eval("document.querySelectorAll('#timeline-svg .seg').length") == 3
    assert p.problems() == []


def test_report_needs_a_format_and_a_run(tmp_path: Path) -> None:
    assert run_cli("report", "--workspace", str(tmp_path)).returncode == 2
    missing = run_cli("report", "--html", "--workspace", str(tmp_path / "none"))
    assert missing.returncode == 1 and "no ledger" in missing.stderr

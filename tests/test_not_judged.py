"""Fail visible, never fail silent (issue 14 item 1).

A candidate whose model step cannot complete stays in every output as "not investigated" with
the reason (findings.json, SARIF with ``executionSuccessful: false`` and a notification,
findings.md's Coverage section, the terminal summary). The same command run again retries a
step whose cause may have cleared, a bounded number of times counted from the ledger, and a
run whose steps are all given up for good finishes saying what was not done. The endpoint is
``ScriptedAPI`` (a real socket).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from e2e import records
from fleetledger.verify import verify_records
from test_models import Asked, Reply, failure, handler_repo, keys, scan, serve, success, verdict

__all__ = ["keys", "serve"]  # fixtures shared with test_models

BAD = ("investigate", "- location: pkg0/jobs.py:6:5, in handler_0")


def rejecting(healed: dict[str, bool]):  # type: ignore[no-untyped-def]
    def script(asked: Asked) -> Reply:
        if asked.finding == BAD and not healed["now"]:
            return failure("openai", 400, "invalid_request_error", "Invalid request: the upstream rejected the prompt")
        return success("openai", verdict())
    return script


def outputs(ws: Path) -> tuple[dict[str, Any], dict[str, Any], str]:
    return (json.loads((ws / "findings.json").read_text(encoding="utf-8")),
            json.loads((ws / "findings.sarif").read_text(encoding="utf-8")),
            (ws / "findings.md").read_text(encoding="utf-8"))


def assert_kept_as_not_investigated(ws: Path, *, retried: bool) -> None:
    data, sarif, markdown = outputs(ws)
    assert data["run"]["complete"] is False and len(data["findings"]) == 2
    [gap] = data["not_judged"]
    assert gap["stage"] == "investigate" and gap["candidate"]["path"] == "pkg0/jobs.py" and gap["candidate"]["line"] == 6
    assert "400" in gap["reason"] and gap["retry"] is retried
    assert data["summary"]["not_judged"] == 1
    run = sarif["runs"][0]
    assert run["invocations"][0]["executionSuccessful"] is False
    kept = [r for r in run["results"] if r["properties"].get("status") == "not investigated"]
    assert len(kept) == 1 and kept[0]["level"] == "error", "kept with its detector verdict (bandit HIGH)"
    assert kept[0]["locations"][0]["physicalLocation"]["region"]["startLine"] == 6
    notes = [n["message"]["text"] for n in run["invocations"][0]["toolExecutionNotifications"]]
    assert any("pkg0/jobs.py:6" in n and "not investigated" in n and "400" in n for n in notes)
    assert "## Coverage" in markdown and "not investigated" in markdown and "pkg0/jobs.py:6" in markdown


def test_a_failed_investigation_is_kept_in_every_output_and_the_same_command_judges_it_later(serve, tmp_path: Path) -> None:
    healed = {"now": False}
    api = serve("openai", rejecting(healed))
    repo = handler_repo(tmp_path / "repo", folders=1, handlers=3)
    ws = tmp_path / "ws"

    _, first = scan(api, repo, ws, workers=1)

    assert first.exit_code == 75 and first.state == "HALTED", first.message
    assert "not investigated" in first.message and "run the same command" in first.message
    assert sum(a.finding == BAD for a in api.asked) == 2
    assert_kept_as_not_investigated(ws, retried=True)

    healed["now"] = True
    _, second = scan(api, repo, ws, workers=1)

    assert second.exit_code == 0 and second.state == "JACKED_OUT", second.message
    assert "3 finding(s)" in second.message and "not investigated" not in second.message
    assert sum(a.finding == BAD for a in api.asked) == 3
    data, sarif, _ = outputs(ws)
    assert data["run"]["complete"] is True and len(data["findings"]) == 3 and data["not_judged"] == []
    assert sarif["runs"][0]["invocations"][0]["executionSuccessful"] is True
    assert any(r.kind == "sprint.reopened" for r in records(ws)), "the retry is recorded"
    assert verify_records(records(ws)).ok


def test_retries_across_sessions_are_bounded_and_then_the_run_finishes_saying_what_was_not_done(serve, tmp_path: Path) -> None:
    api = serve("openai", rejecting({"now": False}))
    repo = handler_repo(tmp_path / "repo", folders=1, handlers=3)
    ws = tmp_path / "ws"

    _, first = scan(api, repo, ws, workers=1)
    assert first.exit_code == 75, first.message
    _, second = scan(api, repo, ws, workers=1)

    assert second.exit_code == 0 and second.state == "JACKED_OUT", second.message
    assert sum(a.finding == BAD for a in api.asked) == 4, "a bad request is tried in two sessions, twice in each"
    assert "1 candidate(s) not investigated" in second.message and "all 1 file(s) scanned" not in second.message
    assert_kept_as_not_investigated(ws, retried=False)
    calls = api.calls

    _, third = scan(api, repo, ws, workers=1)
    assert third.exit_code == 0 and third.already_done and api.calls == calls, "given up for good: no more calls"
    assert "not investigated" in third.message
    assert verify_records(records(ws)).ok

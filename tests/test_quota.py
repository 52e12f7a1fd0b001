"""Quotas, rate limits and budgets with a real provider SDK against a local endpoint (case 03).

Q1: with 8 workers, from its 40th call on the endpoint answers 429 ``insufficient_quota`` with a
reset 5 hours away; Q2: a recorded result survives the quota halt and is handed to the model on
resume. The endpoint counts every request it receives (``ScriptedAPI`` in ``test_models``).
"""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

import pytest

from e2e import records, run_cli
from fleetledger import errors, runstate
from fleetledger.coordinator import wall_clock_ms
from fleetledger.models.config import Price
from fleetledger.policy import Policy
from test_models import (Asked, Reply, handler_repo, keyed_calls, keys, quota_exhausted, rate_limited, scan, serve,
                         success, verdict)

__all__ = ["keys", "serve"]  # fixtures shared with test_models

FIVE_HOURS_MS = 5 * 3600 * 1000


def after_reset() -> int:
    """The clock of a coordinator started just after the 5-hour reset."""
    return wall_clock_ms() + FIVE_HOURS_MS + 60_000


@pytest.mark.parametrize("dialect", ["openai", "anthropic"])
def test_q1_terminal_quota_error_mid_fleet(serve, tmp_path: Path, dialect: str) -> None:
    restored = {"now": False}

    def script(asked: Asked) -> Reply:
        if asked.n >= 40 and not restored["now"]:
            return quota_exhausted(dialect, reset_s=5 * 3600)
        return success(dialect, verdict())

    api = serve(dialect, script)
    repo = handler_repo(tmp_path / "repo", folders=8, handlers=6)
    ws = tmp_path / "ws"
    started_ms = wall_clock_ms()

    _, first = scan(api, repo, ws, workers=8)

    assert first.exit_code == 75 and first.state == "HALTED", first.message
    assert "model quota exhausted" in first.message and "resets at" in first.message
    first_error = api.replies.index(429)
    assert first_error == 39, "calls 1-39 were answered"
    assert len(api.asked) - (first_error + 1) <= 7, "no new calls after the first terminal error, only those in flight"
    state = runstate.read(ws / runstate.STATE_FILE)
    assert state.state == "HALTED", "a halted run is never reported as completed"
    halt = state.data["halt"]
    assert halt["kind"] == "model_quota" and halt["code"] in ("insufficient_quota", "enforced_spend_limit_reached")
    assert abs(halt["reset_ms"] - (started_ms + FIVE_HOURS_MS)) < 120_000 and halt["reset_at"].endswith("Z")
    status = run_cli("status", "--workspace", str(ws))
    assert f"resets at {halt['reset_at']}" in status.stdout and "model spend: 39 calls" in status.stdout
    calls_at_halt, records_at_halt = api.calls, len(records(ws))

    _, early = scan(api, repo, ws, workers=8)

    assert early.exit_code == 75 and early.state == "HALTED" and "resets at" in early.message
    assert api.calls == calls_at_halt, "resume before the reset spends nothing"
    assert len(records(ws)) == records_at_halt, "and records nothing"

    restored["now"] = True
    coordinator, final = scan(api, repo, ws, workers=8, clock=after_reset)

    assert final.exit_code == 0 and final.state == "JACKED_OUT", final.message
    answered = api.answered()
    assert len(answered) == 96, "48 investigations and 48 revalidations"
    assert set(answered.values()) == {1}, "no finding was asked twice: recorded answers were handed back"
    assert keyed_calls(ws) == Counter({key: 1 for key in keyed_calls(ws)}) and sum(keyed_calls(ws).values()) == 96
    history = records(ws)
    done = Counter(r.key for r in history if r.kind == "step.done")
    assert max(done.values()) == 1, "only unfinished work ran"
    assert coordinator.view.model["calls"] == 96 and "48 finding(s)" in final.message


def test_q2_a_recorded_result_survives_the_quota_halt(serve, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    restored = {"now": False}

    def script(asked: Asked) -> Reply:
        if asked.n == 2 and not restored["now"]:
            return quota_exhausted("openai", reset_s=5 * 3600)
        return success("openai", verdict())

    api = serve("openai", script)
    repo = handler_repo(tmp_path / "repo", folders=1, handlers=3)
    ws = tmp_path / "ws"
    # The worker dies right after the first answer reaches it (before its step is recorded as
    # done): the answer is in the ledger, and the step's retry must be handed it, not ask again.
    monkeypatch.setenv("FLEETLEDGER_FAULT", "scan.model.answered:1:kill")
    monkeypatch.setenv("FLEETLEDGER_FAULT_ONCE", str(tmp_path / "fault-once"))

    _, first = scan(api, repo, ws, workers=1)

    assert first.exit_code == 75 and "model quota exhausted" in first.message
    assert api.calls == 2 and api.replies == [200, 429]
    history = records(ws)
    [answered] = [r for r in history if r.kind == "model.call"]
    handed = [r for r in history if r.kind == "step.done" and r.key == answered.key]
    assert len(handed) == 1 and handed[0].payload["result"]["answer"] == answered.payload["answer"], \
        "the recorded answer was handed to the retried step, not asked again"
    assert any(r.kind == "worker.exited" for r in history)

    restored["now"] = True
    _, final = scan(api, repo, ws, workers=1, clock=after_reset)

    assert final.exit_code == 0, final.message
    assert set(api.answered().values()) == {1} and sum(api.answered().values()) == 6
    history = records(ws)
    tool_runs = [r for r in history if r.kind == "step.intent" and r.payload["name"] == "detect:pkg0/jobs.py"]
    assert len(tool_runs) == 1, "the tool ran once; its recorded result was handed to the model after the resume"
    asked_after = [a for a in api.asked[2:] if a.finding[0] == "investigate"]
    assert {a.finding[1] for a in asked_after} == {f"- location: pkg0/jobs.py:{line}:5, in handler_{n}"
                                                   for n, line in ((1, 10), (2, 14))}
    effects = Counter(r.key for r in history if r.kind == "effect.done")
    assert effects and set(effects.values()) == {1}, "each effect happened once"


def test_a_rate_limit_is_waited_out_and_does_not_halt(serve, tmp_path: Path) -> None:
    def script(asked: Asked) -> Reply:
        return rate_limited("openai", wait_s=0.1) if asked.n in (2, 3) else success("openai", verdict())

    api = serve("openai", script)
    repo = handler_repo(tmp_path / "repo", folders=1, handlers=2)
    started = time.monotonic()
    _, result = scan(api, repo, tmp_path / "ws", workers=1)

    assert result.exit_code == 0 and result.state == "JACKED_OUT", result.message
    assert api.replies.count(429) == 2 and api.calls == 6 and sum(keyed_calls(tmp_path / "ws").values()) == 4
    assert not any(r.kind == "run.halted" for r in records(tmp_path / "ws"))
    assert time.monotonic() - started >= 0.2, "the retry-after was waited out"


def test_a_rate_limit_that_lasts_an_hour_halts_until_its_reset(serve, tmp_path: Path) -> None:
    api = serve("anthropic", lambda asked: rate_limited("anthropic", wait_s=3600) if asked.n == 1
                else success("anthropic", verdict()))
    repo = handler_repo(tmp_path / "repo", folders=1, handlers=2)
    coordinator, result = scan(api, repo, tmp_path / "ws", workers=1)

    assert result.exit_code == 75 and "longer than max_rate_limit_wait_s" in result.message
    assert api.calls == 1 and coordinator.view.halt is not None
    assert abs(coordinator.view.halt["reset_ms"] - (wall_clock_ms() + 3600_000)) < 120_000


@pytest.mark.parametrize("budget, limit, figures", [
    ("max_input_tokens", 5_000, "of 5,000 tokens"),
    ("max_output_tokens", 300, "of 300 tokens"),
    ("max_cost_usd", 0.01, "of $0.0100"),
])
def test_budgets_halt_with_their_name_and_figures(serve, tmp_path: Path, budget: str, limit: float, figures: str) -> None:
    api = serve("openai", lambda asked: success("openai", verdict(), tokens=(1000, 100)))
    repo = handler_repo(tmp_path / "repo", folders=2, handlers=6)
    price = Price(input_usd_per_mtok=2.0, output_usd_per_mtok=10.0)  # $0.003 a call
    ws = tmp_path / "ws"

    coordinator, result = scan(api, repo, ws, workers=2, price=price, policy=Policy(models=("openai",), **{budget: limit}))

    assert result.exit_code == 75 and result.state == "HALTED"
    assert f"budget {budget} reached" in result.message and figures in result.message
    halt = coordinator.view.halt
    assert halt is not None and halt["kind"] == "budget" and halt["budget"] == budget and halt["limit"] == limit
    assert halt["spent"] >= limit and halt["spend"]["calls"] == coordinator.view.model["calls"]
    reached_at = {"max_input_tokens": 5, "max_output_tokens": 3, "max_cost_usd": 4}[budget]
    assert reached_at <= api.calls <= reached_at + 1, "no new call after the budget was reached (one was in flight)"

    _, again = scan(api, repo, ws, workers=2, price=price, policy=Policy(models=("openai",), **{budget: limit}))
    assert again.exit_code == 75 and api.calls <= reached_at + 1, "a resume under the same budget spends nothing"

    _, final = scan(api, repo, ws, workers=2, price=price, policy=Policy(models=("openai",), **{budget: limit * 100}))
    assert final.exit_code == 0, final.message
    assert set(api.answered().values()) == {1} and sum(api.answered().values()) == 24


def test_a_cost_budget_needs_a_price(serve, tmp_path: Path) -> None:
    api = serve("openai", lambda asked: success("openai", verdict()))
    repo = handler_repo(tmp_path / "repo", folders=1, handlers=1)
    with pytest.raises(errors.UsageError, match="needs the price of openai:gpt-test"):
        scan(api, repo, tmp_path / "ws", policy=Policy(models=("openai",), max_cost_usd=1.0))
    assert api.calls == 0

"""A worker reads hostile files, so it may be taken over: it speaks only for its own leases and
only in the record kinds a task's steps produce. Anything else is denied, recorded, and halts
the run; only ``fleetledger approve`` approves (regressions of a red-team finding: a worker's
``approval.granted`` record used to let an export that needs approval run)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fleetledger.coordinator import Coordinator, RunOptions
from fleetledger.jobs.scan.job import ScanJob
from fleetledger.ledger import NewRecord, open_storage
from fleetledger.policy import Policy
from fleetledger.replay import fold
from fleetledger.sandbox import Launch, NoSandbox
from fleetledger.verify import verify_records
from fleetledger.workspace import Workspace

from e2e import records

TAKEN_OVER = r'''
"""The real worker, with one extra message on its channel before its first step."""
import json, sys
import fleetledger.steps as steps

extra = json.loads(sys.argv.pop(1))
original, sent = steps.TaskContext.step, []


def step(self, name, *args, **kwargs):
    if not sent:
        sent.append(1)
        key = extra.get("key")
        self.channel.send({"op": extra.get("op", "record"), "task": extra.get("task", self.task),
                           "epoch": extra.get("epoch", self.epoch), "kind": extra.get("kind"),
                           "key": key.replace("{task}", self.task).replace("{name}", name) if key else key,
                           "why": extra.get("why", "sent by a taken-over worker"), "payload": extra.get("payload", {}),
                           "request": extra.get("request", {}), **extra.get("fields", {})})
    return original(self, name, *args, **kwargs)


steps.TaskContext.step = step
import fleetledger.worker
sys.exit(fleetledger.worker.main(sys.argv[1:]))
'''


class TakenOver(NoSandbox):
    """Runs ``TAKEN_OVER`` instead of the worker's own code, with the message to add."""

    def __init__(self, script: Path, extra: dict[str, Any]) -> None:
        self.script, self.extra = script, extra

    def wrap(self, argv: list[str], **kwargs: Any) -> Launch:
        launch = super().wrap(argv, **kwargs)
        at = launch.argv.index("-c")  # python -I -c WORKER_BOOT ID MODULE HEARTBEAT
        return Launch(argv=[launch.argv[0], str(self.script), json.dumps(self.extra), *launch.argv[at + 2:]],
                      env=launch.env | {"PYTHONPATH": str(Path(__file__).resolve().parent.parent)})


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "app.py").write_text("import subprocess\n\ndef run(cmd):\n    return subprocess.call(cmd, shell=True)\n")
    return root


def run_with(tmp_path: Path, repo: Path, extra: dict[str, Any]) -> tuple[Coordinator, Any, Workspace]:
    script = tmp_path / "taken_over.py"
    script.write_text(TAKEN_OVER)
    policy = tmp_path / "policy.toml"
    policy.write_text('[policy]\napproval_required = ["export"]\n')
    workspace = Workspace.at(tmp_path / "ws")
    coordinator = Coordinator(ScanJob(repo, workspace=workspace.root, argv=["scan"]), workspace,
                              RunOptions(workers=1, sandbox="none"), policy=Policy.load(policy))
    coordinator.sandbox = TakenOver(script, extra)
    return coordinator, coordinator.run(), workspace


def _nested(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize("extra", [
    pytest.param({"kind": "step.intent", "key": "{task}/{name}@0123456789abcdef", "why": ["not", "text"]},
                 id="a why that is not text"),
    pytest.param({"kind": "step.intent", "key": "{task}/{name}@0123456789abcdef", "payload": [1]},
                 id="a payload that is not an object"),
    pytest.param({"kind": "step.done", "key": "{task}/{name}@0123456789abcdef", "payload": {"result": float("nan")}},
                 id="a payload with NaN"),
    pytest.param({"kind": "step.done", "key": "{task}/{name}@0123456789abcdef",
                  "payload": {"result": _nested(150)}},
                 id="a payload nested deeper than a reader can take"),
    pytest.param({"kind": "step.intent", "key": "{task}/{name}@0123456789abcdef", "epoch": True},
                 id="an epoch that is not a number"),
    pytest.param({"op": "failed", "kind": None, "fields": {"error": {"not": "text"}}}, id="a failure that is not text"),
    pytest.param({"op": "finished", "kind": None, "fields": {"result": "not an object"}}, id="a result that is not an object"),
    pytest.param({"op": "released", "kind": None, "why": 7}, id="a release whose reason is not text"),
    pytest.param({"op": ["record"], "kind": "step.intent"}, id="an op that is not text"),
    pytest.param({"op": "heartbeat", "kind": None, "task": ["t"]}, id="a heartbeat for a task that is not a name"),
])
def test_a_malformed_message_halts_the_run_and_never_stops_the_coordinator(
        tmp_path: Path, repo: Path, extra: dict[str, Any]) -> None:
    """Regression: a ``why`` that was not text, a payload with NaN (and the like) raised inside
    the coordinator (AttributeError, ValueError) and stopped it with a traceback; a payload
    nested deeper than a reader's stack allows would have been stored and failed later."""
    coordinator, result, workspace = run_with(tmp_path, repo, extra)
    assert result.state == "HALTED" and result.exit_code == 75, result.message
    assert "may have taken over its tool" in result.message
    history = records(workspace.root)
    denied = [r for r in history if r.kind == "policy.denied" and r.payload.get("action") == "worker message"]
    assert len(denied) == 1, [r.why for r in history]
    assert verify_records(history).ok


@pytest.mark.parametrize("extra", [
    pytest.param({"kind": "approval.granted", "payload": {"scope": {"action": "effect", "target": "export"}}},
                 id="approves the export"),
    pytest.param({"kind": "effect.done", "key": "export:forged", "payload": {}}, id="claims an effect done"),
    pytest.param({"kind": "step.done", "task": "detect:forged", "epoch": 1, "key": "forged", "payload": {}},
                 id="speaks for a task it does not hold"),
    # Found by trying the fix: a step of another task's file (a clean report that hid its
    # findings), a negative spend (that switched the budgets off), and model calls asked for
    # past the lease's allowance (paid calls on the user's key without limit).
    pytest.param({"kind": "step.done", "key": "{task}/detect:elsewhere.py@0123456789abcdef", "payload": {}},
                 id="records a step that is not its task's"),
    pytest.param({"kind": "model.call", "key": "{task}/{name}@0123456789abcdef",
                  "payload": {"cost_usd": -1e6, "input_tokens": -10**9}}, id="reports a negative spend"),
    pytest.param({"op": "model", "key": "{task}/{name}@0123456789abcdef"}, id="asks for calls past its allowance"),
    # Result reuse (issue 16): a clean result claimed as taken from an earlier run, and a
    # result filed under another salt, which a later run would reuse for the true inputs.
    pytest.param({"kind": "step.done", "key": "{task}/{name}@0123456789abcdef",
                  "payload": {"name": "detect:app.py", "input_hash": "0123456789abcdef", "result": {"candidates": []},
                              "reuse": {"salt": "forged", "inputs": "0123456789abcdef" + "0" * 48, "key": "0" * 64},
                              "reused": {"run": "scan-000000", "seq": 1}}}, id="claims a reuse it was not offered"),
    pytest.param({"kind": "step.done", "key": "{task}/{name}@0123456789abcdef",
                  "payload": {"name": "detect:app.py", "input_hash": "0123456789abcdef", "result": {"candidates": []},
                              "reuse": {"salt": "forged", "inputs": "0123456789abcdef" + "0" * 48, "key": "0" * 64}}},
                 id="files a result under another salt"),
])
def test_a_taken_over_worker_is_refused_and_the_run_halts(tmp_path: Path, repo: Path, extra: dict[str, Any]) -> None:
    coordinator, result, workspace = run_with(tmp_path, repo, extra)
    assert result.state == "HALTED" and result.exit_code == 75, result.message
    assert "may have taken over its tool" in result.message
    history = records(workspace.root)
    assert not any(r.why == "sent by a taken-over worker" for r in history), "the forged record was appended"
    denied = [r for r in history if r.kind == "policy.denied" and r.payload.get("action") == "worker message"]
    assert len(denied) == 1 and denied[0].payload["kind"] == extra.get("kind")
    assert coordinator.view.approvals == []
    assert not (workspace.root / "findings.sarif").exists()
    assert verify_records(history).ok


def test_only_a_persons_approval_approves_and_verify_names_the_others(tmp_path: Path, repo: Path) -> None:
    """An ``approval.granted`` that is not by ``fleetledger approve`` (in a ledger written by an
    older version, or forged) approves nothing, and ``verify`` reports it."""
    _, result, workspace = run_with(tmp_path, repo, {"kind": "decision"})  # halts at once; the ledger stays
    with open_storage(workspace.ledger_url) as storage:
        run_id = records(workspace.root)[0].run_id
        storage.append([NewRecord(run_id=run_id, actor="w01", kind="approval.granted", why="not a person",
                                  payload={"scope": {"action": "effect", "target": "export", "expires_ms": None}})],
                       now_ms=0)
    history = records(workspace.root)
    assert fold(history).approvals == []
    report = verify_records(history)
    assert any("approval.granted by 'w01'" in problem for problem in report.problems), report.problems


def test_a_model_request_the_coordinator_cannot_read_is_refused_before_it_is_built() -> None:
    """Regression: a request without a candidate raised KeyError in the coordinator's main loop
    (``request_from_json``), where a run with a paid model builds the broker's ticket."""
    from fleetledger.pool import WorkerProc
    from fleetledger.run.workers import _worker_overreach

    worker = WorkerProc("w01", None)  # type: ignore[arg-type]
    worker.assigned[("t", 1)] = None
    worker.task = ("t", 1)
    message = {"op": "model", "task": "t", "epoch": 1, "key": "t/s@0", "request": {"brief": 1}}
    assert "cannot read (KeyError" in (_worker_overreach(worker, message, 5) or "")
    candidate = {"id": "c", "path": "a.py", "line": 1, "end_line": 1, "col": 0, "rule_id": "B602", "rule_name": "shell",
                 "detector": "bandit", "cwe": 78, "detector_severity": "HIGH", "detector_confidence": "HIGH",
                 "message": "m", "snippet": "s"}
    good = {**message, "request": {"candidate": candidate, "source": "", "brief": "", "pass_name": "investigate"}}
    assert _worker_overreach(worker, good, 5) is None


def test_a_lone_surrogate_in_a_workers_text_is_stored_escaped(tmp_path: Path, repo: Path) -> None:
    """Regression (found attacking the worker checks): a ``why`` holding a lone surrogate other
    than a file name's bytes (U+D800) raised UnicodeEncodeError while the coordinator built the
    record. It is text, so it is stored, escaped, and the run goes on."""
    _, result, workspace = run_with(tmp_path, repo, {"kind": "step.intent", "key": "{task}/{name}@0123456789abcdef",
                                                     "why": "odd \ud800 text"})
    assert "may have taken over" not in result.message and "approve it" in result.message  # the export waits, as always here
    history = records(workspace.root)
    assert not [r for r in history if r.kind == "policy.denied" and r.payload.get("action") == "worker message"]
    assert any(r.why == "odd \\ud800 text" for r in history) and verify_records(history).ok

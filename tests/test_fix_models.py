"""A paid model proposes patches where no rule rewrite is known (issue 18): through the same
proposal shape, with the trace and the file, validated like the rules' patches; against local
endpoints that speak the providers' APIs (``test_models.ScriptedAPI``)."""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import Any

import pytest

from e2e import records
from fleetledger.coordinator import Coordinator, RunOptions
from fleetledger.jobs.scan.job import ScanJob
from fleetledger.jobs.scan.shapes import ModelRequest
from fleetledger.models.failures import MalformedAnswer
from fleetledger.models.passes import FIX_SCHEMA, parse_fix_answer
from fleetledger.policy import Policy
from fleetledger.workspace import Workspace

from test_models import CANDIDATE, MODELS, SOURCE, Asked, Reply, keys, model_config, provider_for, serve, success, verdict  # noqa: F401

VIEWS = '''\
import pickle
import yaml
from flask import Flask, request

app = Flask(__name__)


@app.route("/load")
def load():
    return repr(pickle.loads(request.data))


@app.route("/conf")
def conf():
    return repr(yaml.load(request.data))
'''

FIXED = VIEWS.replace("import pickle\n", "import json\n").replace("pickle.loads(request.data)", "json.loads(request.data)")
DIFF = "".join(difflib.unified_diff(VIEWS.splitlines(keepends=True), FIXED.splitlines(keepends=True),
                                    fromfile="a/views.py", tofile="b/views.py"))


def patch_answer(dialect: str, answer: dict[str, Any]) -> Reply:
    """A 200 answer of the fix pass (Anthropic's through its own tool)."""
    reply = success(dialect, answer)
    if dialect == "anthropic":
        reply.body["content"][0]["name"] = "record_patch"
    return reply


def is_fix(asked: Asked) -> bool:
    body = asked.body
    system = body["messages"][0]["content"] if "messages" in body and body["messages"][0]["role"] == "system" \
        else body.get("system", "")
    return "fixing one confirmed vulnerability" in system


@pytest.mark.parametrize("dialect", ["openai", "anthropic"])
def test_the_fix_request_carries_the_trace_and_the_file_and_asks_for_the_fix_schema(serve, dialect: str) -> None:
    api = serve(dialect, lambda asked: patch_answer(dialect, {"diff": "", "rationale": "no safe change is known"}))
    provider = provider_for(api)
    result = provider.call(ModelRequest(candidate=CANDIDATE, source=SOURCE, brief="", pass_name="fix"))
    assert result.answer.signals == {"diff": "", "pass": "fix"} and result.answer.rationale == "no safe change is known"
    (asked,) = api.asked
    user = asked.body["messages"][1]["content"] if dialect == "openai" else asked.body["messages"][0]["content"]
    assert '    7 |     os.system("ls " + name)' in user and "--- a/app/admin.py" in user
    if dialect == "openai":
        assert asked.body["response_format"]["json_schema"]["schema"] == FIX_SCHEMA
    else:
        assert asked.body["tools"][0]["input_schema"] == FIX_SCHEMA and asked.body["tool_choice"]["name"] == "record_patch"
    assert result.request["pass"] == "fix"


def test_a_fix_answer_that_breaks_the_schema_is_refused() -> None:
    with pytest.raises(MalformedAnswer, match="fix schema"):
        parse_fix_answer({"diff": "x"})
    assert parse_fix_answer(json.dumps({"diff": "d", "rationale": "r"})).signals["diff"] == "d"


def test_scan_with_a_paid_model_asks_it_only_where_no_rule_fixes_and_validates_its_patch(serve, tmp_path: Path) -> None:
    dialect = "openai"
    api = serve(dialect, lambda asked: patch_answer(dialect, {"diff": DIFF, "rationale": "json.loads builds plain data"})
                if is_fix(asked) else success(dialect, verdict(cwe=502)))
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "views.py").write_text(VIEWS)
    spec = f"{dialect}:{MODELS[dialect]}"
    job = ScanJob(repo, workspace=tmp_path / "ws", argv=["fleetledger", "scan", str(repo), "--model", spec, "--fix"],
                  model=spec, fix=True)
    coordinator = Coordinator(job, Workspace.at(tmp_path / "ws"), RunOptions(workers=2, sandbox="bubblewrap"),
                              policy=Policy(models=("offline", dialect)), model_config=model_config(api))
    result = coordinator.run()
    assert result.exit_code == 0, result.message
    shown = json.loads((tmp_path / "ws" / "findings.json").read_text())["findings"]
    sink = {f["candidate"]["id"]: (f["candidate"]["rule_id"], f["candidate"]["line"]) for f in shown}
    pickled = next(f for f in shown if sink[f["candidate"]["id"]] == ("FLT-deserialization", 10))
    yamled = next(f for f in shown if sink[f["candidate"]["id"]] == ("FLT-deserialization", 15))
    assert yamled["fix"]["proposal"]["author"] == "rule:yaml-safe-load" and yamled["fix"]["validation"]["ok"]
    assert pickled["fix"]["proposal"]["author"] == f"model:{spec}" and pickled["fix"]["validation"]["ok"], pickled["fix"]
    assert (tmp_path / "ws" / "patches" / f"{pickled['candidate']['id']}.diff").read_text() == DIFF
    # the same patch offered for the markup finding on that line does not clear it: kept out, with the reason
    xss = next(f for f in shown if sink[f["candidate"]["id"]] == ("FLT-xss", 10))
    assert xss["fix"]["proposal"]["author"] == f"model:{spec}" and not xss["fix"]["validation"]["ok"]
    assert "still reports FLT-xss" in xss["fix"]["validation"]["reason"]
    assert not (tmp_path / "ws" / "patches" / f"{xss['candidate']['id']}.diff").exists()
    # asked only where no rule rewrite is known (never for the yaml finding), once each
    asked = [a for a in api.asked if is_fix(a)]
    located = [tuple(line for line in a.body["messages"][1]["content"].splitlines()
                     if line.startswith(("- location:", "- rule:"))) for a in asked]
    assert len(located) == len(set(located)) == sum(1 for f in shown if f["fix"]["proposal"]["author"].startswith("model:"))
    assert not any("FLT-deserialization" in rule and ":15:" in where for rule, where in located)
    calls = [r for r in records(tmp_path / "ws") if r.kind == "model.call" and r.payload.get("pass") == "fix"]
    assert len(calls) == len(asked) and all("fix-model:" in (r.key or "") for r in calls)

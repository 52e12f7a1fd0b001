"""Real model providers against local endpoints that speak their APIs over real sockets.

``ScriptedAPI`` is an ``http.server`` on 127.0.0.1 that answers the OpenAI Chat Completions API
or the Anthropic Messages API from a script; the official SDKs are pointed at it by base URL.
The server counts every request it receives, so a test can say exactly how many calls were made.
"""

from __future__ import annotations

import json
import os
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

from e2e import real_repo, records, run_cli
from fleetledger import errors
from fleetledger.coordinator import Coordinator, RunOptions
from fleetledger.jobs.scan.brief import derive_brief
from fleetledger.jobs.scan.job import ScanJob
from fleetledger.jobs.scan.shapes import Candidate, ModelRequest
from fleetledger.model_broker import ModelBroker
from fleetledger.models import get_provider, parse_spec
from fleetledger.models.config import ModelConfig, Price, ProviderSettings, RetryPolicy
from fleetledger.models.failures import (MalformedAnswer, ProviderQuotaExhausted, ProviderRefused, RateLimited,
                                         RequestRejected, TransientModelError)
from fleetledger.models.prompts import MAX_CONTEXT_LINES, code_context, parse_answer
from fleetledger.policy import Policy
from fleetledger.replay import RunView
from fleetledger.workspace import Workspace

KEY = "sk-test-not-a-real-key"
MODELS = {"openai": "gpt-test", "anthropic": "claude-test"}


# -- the scripted endpoint ----------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Reply:
    """What the endpoint answers: an HTTP ``status``, a JSON ``body`` and extra ``headers``."""

    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class Asked:
    """One request the endpoint received: its number (1-based), the ``finding`` it is about
    (pass and location, read from the prompt), the JSON body and the headers."""

    n: int
    finding: tuple[str, str]
    body: dict[str, Any]
    headers: dict[str, str]


Script = Callable[[Asked], Reply]


def finding_of(dialect: str, body: dict[str, Any]) -> tuple[str, str]:
    """``(pass, location)`` of the finding a request asks about, read from its prompt."""
    if dialect == "openai":
        system, user = body["messages"][0]["content"], body["messages"][1]["content"]
    else:
        system, user = body["system"], body["messages"][0]["content"]
    location = next((line for line in user.splitlines() if line.startswith("- location: ")), "?")
    return ("revalidate" if "sceptical" in system else "investigate", location)


class ScriptedAPI(ThreadingHTTPServer):
    """A local endpoint of one provider's API (``dialect``) that answers from ``script``."""

    daemon_threads = True

    def __init__(self, dialect: str, script: Script) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        # Non-blocking accept: a client that connects and resets before serve_forever accepts
        # would otherwise leave accept() blocked for good, and shutdown() waiting on it.
        self.socket.setblocking(False)
        self.dialect = dialect
        self.script = script
        self.asked: list[Asked] = []
        self.replies: list[int] = []
        self.lock = threading.Lock()

    @property
    def base_url(self) -> str:
        """The URL the SDK is given (OpenAI's includes the API version, Anthropic's does not)."""
        root = f"http://127.0.0.1:{self.server_address[1]}"
        return f"{root}/v1" if self.dialect == "openai" else root

    @property
    def calls(self) -> int:
        """Requests received so far."""
        with self.lock:
            return len(self.asked)

    def answered(self) -> Counter[tuple[str, str]]:
        """How many times each finding got a 200 answer."""
        with self.lock:
            return Counter(a.finding for a, status in zip(self.asked, self.replies) if status == 200)


class _Handler(BaseHTTPRequestHandler):
    server: ScriptedAPI

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        api = self.server
        path = "/v1/chat/completions" if api.dialect == "openai" else "/v1/messages"
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.path != path:
            reply = Reply(status=404, body={"error": {"message": f"no route {self.path}"}})
        else:
            with api.lock:
                asked = Asked(n=len(api.asked) + 1, finding=finding_of(api.dialect, body), body=body,
                              headers={k.lower(): v for k, v in self.headers.items()})
                api.asked.append(asked)
                api.replies.append(0)
            reply = api.script(asked)
            with api.lock:
                api.replies[asked.n - 1] = reply.status
        data = json.dumps(reply.body).encode()
        self.send_response(reply.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


def verdict(verdict: str = "vulnerable", confidence: int = 8, *, cwe: int | None = 78, severity: str = "high",
            rationale: str = "Line 6 passes request data to os.system unchecked.") -> dict[str, Any]:
    """An answer that follows the answer schema."""
    return {"verdict": verdict, "confidence": confidence, "cwe": cwe, "severity": severity, "rationale": rationale}


def success(dialect: str, answer: dict[str, Any] | str, *, tokens: tuple[int, int] = (1000, 100)) -> Reply:
    """A 200 answer carrying ``answer`` (an object, or raw text for malformed answers)."""
    if dialect == "openai":
        content = answer if isinstance(answer, str) else json.dumps(answer)
        return Reply(status=200, body={
            "id": "chatcmpl-1", "object": "chat.completion", "created": 1_700_000_000, "model": MODELS["openai"],
            "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                         "message": {"role": "assistant", "content": content, "refusal": None}}],
            "usage": {"prompt_tokens": tokens[0], "completion_tokens": tokens[1], "total_tokens": sum(tokens)}})
    block = ({"type": "text", "text": answer} if isinstance(answer, str)
             else {"type": "tool_use", "id": "toolu_1", "name": "record_verdict", "input": answer})
    return Reply(status=200, body={
        "id": "msg_1", "type": "message", "role": "assistant", "model": MODELS["anthropic"], "content": [block],
        "stop_reason": "tool_use", "stop_sequence": None,
        "usage": {"input_tokens": tokens[0], "output_tokens": tokens[1]}})


def failure(dialect: str, status: int, kind: str, message: str, *, code: str | None = None,
            headers: dict[str, str] | None = None) -> Reply:
    """An error in the provider's own shape: OpenAI ``{"error": {type, code, message}}``,
    Anthropic ``{"type": "error", "error": {type, message, details}}``."""
    if dialect == "openai":
        body = {"error": {"message": message, "type": kind, "param": None, "code": code}}
    else:
        error: dict[str, Any] = {"type": kind, "message": message}
        if code is not None:
            error["details"] = {"error_code": code}
        body = {"type": "error", "error": error, "request_id": "req_1"}
    return Reply(status=status, body=body, headers=headers or {})


def quota_exhausted(dialect: str, *, reset_s: int | None = None) -> Reply:
    """The provider's "out of quota" answer, with a reset ``reset_s`` seconds away if given."""
    headers = {"retry-after": str(reset_s)} if reset_s is not None else {}
    if dialect == "openai":
        return failure(dialect, 429, "insufficient_quota", "You exceeded your current quota, please check your plan "
                       "and billing details.", code="insufficient_quota", headers=headers)
    return failure(dialect, 429, "rate_limit_error", "Your organization has reached its spend limit.",
                   code="enforced_spend_limit_reached", headers=headers)


def rate_limited(dialect: str, *, wait_s: float) -> Reply:
    """A plain rate limit with a short retry-after."""
    if dialect == "openai":
        return failure(dialect, 429, "requests", "Rate limit reached for requests.", code="rate_limit_exceeded",
                       headers={"retry-after": f"{wait_s:g}", "retry-after-ms": str(int(wait_s * 1000))})
    return failure(dialect, 429, "rate_limit_error", "Number of requests has exceeded your rate limit.",
                   headers={"retry-after": f"{wait_s:g}"})


@pytest.fixture
def serve() -> Iterator[Callable[[str, Script], ScriptedAPI]]:
    """Starts scripted endpoints for a test and stops them after it."""
    started: list[ScriptedAPI] = []

    def start(dialect: str, script: Script) -> ScriptedAPI:
        api = ScriptedAPI(dialect, script)
        threading.Thread(target=api.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        started.append(api)
        return api

    yield start
    for api in started:
        api.shutdown()
        api.server_close()


# -- scan runs against an endpoint ---------------------------------------------------------


def handler_repo(root: Path, *, folders: int, handlers: int) -> Path:
    """A repository of ``folders`` packages with ``handlers`` command-injection candidates each
    (one bandit B605 per handler), so the scan plans one investigate task per folder."""
    for f in range(folders):
        lines = ['"""Runs shell commands for the web handlers."""', "import os", ""]
        for h in range(handlers):
            lines += ["", f"def handler_{h}(request):", f'    os.system(request.args["cmd{h}"])', ""]
        (root / f"pkg{f}").mkdir(parents=True)
        (root / f"pkg{f}" / "jobs.py").write_text("\n".join(lines), encoding="utf-8")
    (root / "README.md").write_text("A small service whose web handlers run shell commands.\n", encoding="utf-8")
    return root


def model_config(api: ScriptedAPI, *, price: Price | None = None, retry: RetryPolicy | None = None) -> ModelConfig:
    """The configuration that points the provider's SDK at ``api``."""
    spec = f"{api.dialect}:{MODELS[api.dialect]}"
    return ModelConfig(providers=MappingProxyType({api.dialect: ProviderSettings(
                           base_url=api.base_url, api_key_env=f"{api.dialect.upper()}_API_KEY", timeout_s=10)}),
                       prices=MappingProxyType({spec: price} if price else {}),
                       retry=retry or RetryPolicy(backoff_s=0.01, malformed_attempts=2, transient_attempts=3))


def scan(api: ScriptedAPI, repo: Path, ws: Path, *, workers: int = 2, policy: Policy | None = None,
         clock: Callable[[], int] | None = None, price: Price | None = None, retry: RetryPolicy | None = None,
         on_progress: Callable[[RunView], None] | None = None) -> tuple[Coordinator, Any]:
    """Runs (or resumes) a scan of ``repo`` whose model is served by ``api``."""
    spec = f"{api.dialect}:{MODELS[api.dialect]}"
    job = ScanJob(repo, workspace=ws, argv=["fleetledger", "scan", str(repo), "--model", spec], model=spec)
    extra = {"clock": clock} if clock is not None else {}
    # A run that injects faults into its workers runs them unconfined: the fault's files live on the host.
    sandbox = "none" if "FLEETLEDGER_FAULT" in os.environ else "bubblewrap"
    coordinator = Coordinator(job, Workspace.at(ws), RunOptions(workers=workers, sandbox=sandbox),
                              policy=policy or Policy(models=("offline", api.dialect)),
                              model_config=model_config(api, price=price, retry=retry), on_progress=on_progress, **extra)
    return coordinator, coordinator.run()


@pytest.fixture(autouse=True)
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keys in the coordinator's (this process's) environment only."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)


def keyed_calls(ws: Path) -> Counter[str]:
    """Recorded answers per step key."""
    return Counter(r.key for r in records(ws) if r.kind == "model.call" and r.payload.get("answer"))


# -- providers, one request each -----------------------------------------------------------

SOURCE = '''"""Admin tools."""
import os


def handler(request):
    name = request.args["name"]
    os.system("ls " + name)
'''
CANDIDATE = Candidate(id="c0ffee", path="app/admin.py", line=7, col=4, end_line=7, rule_id="B605",
                      rule_name="start_process_with_a_shell", detector="bandit", cwe=78, detector_severity="HIGH",
                      detector_confidence="HIGH", message="Starting a process with a shell.",
                      snippet='    os.system("ls " + name)', scope="handler")
REQUEST = ModelRequest(candidate=CANDIDATE, source=SOURCE, brief="Repository admin-tools. Frameworks: Flask.")


def provider_for(api: ScriptedAPI, *, price: Price | None = None):  # type: ignore[no-untyped-def]
    spec = f"{api.dialect}:{MODELS[api.dialect]}"
    return get_provider(spec, model_config(api, price=price))


@pytest.mark.parametrize("dialect", ["openai", "anthropic"])
def test_provider_asks_for_structured_json_and_reads_answer_tokens_and_cost(serve, dialect: str) -> None:
    api = serve(dialect, lambda asked: success(dialect, verdict(), tokens=(2000, 300)))
    provider = provider_for(api, price=Price(input_usd_per_mtok=3.0, output_usd_per_mtok=15.0))
    assert provider.runs_locally is False and provider.name == dialect and provider.model == MODELS[dialect]

    result = provider.call(REQUEST)

    assert result.answer.verdict == "vulnerable" and result.answer.confidence == 8 and result.answer.cwe == 78
    assert result.answer.signals["severity"] == "high"
    assert (result.input_tokens, result.output_tokens) == (2000, 300)
    assert result.cost_usd == pytest.approx(2000 * 3.0 / 1e6 + 300 * 15.0 / 1e6)
    assert result.request["candidate"] == "c0ffee" and result.request["context_lines"] == [5, 7]
    [asked] = api.asked
    if dialect == "openai":
        assert asked.headers["authorization"] == f"Bearer {KEY}"
        fmt = asked.body["response_format"]
        assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
        assert set(fmt["json_schema"]["schema"]["required"]) == {"verdict", "confidence", "cwe", "severity", "rationale"}
        user = asked.body["messages"][1]["content"]
    else:
        assert KEY in (asked.headers.get("x-api-key"), asked.headers.get("authorization", "").removeprefix("Bearer "))
        assert asked.headers["anthropic-version"]
        assert asked.body["tool_choice"] == {"type": "tool", "name": "record_verdict"}
        assert asked.body["tools"][0]["input_schema"]["required"] == ["verdict", "confidence", "cwe", "severity", "rationale"]
        user = asked.body["messages"][0]["content"]
    assert asked.body["model"] == MODELS[dialect]
    assert "Repository admin-tools. Frameworks: Flask." in user, "the brief is in the prompt"
    assert '>>     7 |     os.system("ls " + name)' in user, "the flagged line is marked in its function"
    assert "def handler(request):" in user and "B605" in user and "app/admin.py:7:5" in user


@pytest.mark.parametrize("dialect, reply, kind, facts", [
    ("openai", quota_exhausted("openai", reset_s=18000), ProviderQuotaExhausted, {"reset_after_s": 18000.0}),
    ("openai", failure("openai", 429, "insufficient_quota", "quota", code="insufficient_quota",
                       headers={"x-ratelimit-reset-requests": "5h0m0s"}), ProviderQuotaExhausted,
     {"reset_after_s": 18000.0}),
    ("openai", rate_limited("openai", wait_s=0.1), RateLimited, {"retry_after_s": 0.1}),
    ("openai", failure("openai", 401, "invalid_request_error", "Incorrect API key provided", code="invalid_api_key"),
     ProviderRefused, {"status": 401}),
    ("openai", failure("openai", 404, "invalid_request_error", "The model does not exist", code="model_not_found"),
     ProviderRefused, {"status": 404}),
    ("openai", failure("openai", 503, "server_error", "overloaded"), TransientModelError, {"status": 503}),
    ("openai", failure("openai", 400, "invalid_request_error", "maximum context length", code="context_length_exceeded"),
     RequestRejected, {"code": "context_length_exceeded"}),
    ("anthropic", quota_exhausted("anthropic", reset_s=18000), ProviderQuotaExhausted, {"reset_after_s": 18000.0}),
    ("anthropic", failure("anthropic", 400, "invalid_request_error", "Your credit balance is too low to access the "
                          "Anthropic API."), ProviderQuotaExhausted, {"reset_after_s": None}),
    ("anthropic", failure("anthropic", 402, "billing_error", "billing"), ProviderQuotaExhausted, {"status": 402}),
    ("anthropic", rate_limited("anthropic", wait_s=0.1), RateLimited, {"retry_after_s": 0.1}),
    ("anthropic", failure("anthropic", 401, "authentication_error", "invalid x-api-key"), ProviderRefused, {"status": 401}),
    ("anthropic", failure("anthropic", 529, "overloaded_error", "Overloaded"), TransientModelError, {"status": 529}),
    ("anthropic", failure("anthropic", 413, "request_too_large", "Request exceeds the maximum size"), RequestRejected,
     {"status": 413}),
])
def test_errors_are_classified_from_the_providers_responses(serve, dialect: str, reply: Reply, kind: type,
                                                            facts: dict[str, Any]) -> None:
    api = serve(dialect, lambda asked: reply)
    with pytest.raises(kind) as raised:
        provider_for(api).call(REQUEST)
    for name, value in facts.items():
        got = raised.value.facts.get(name)
        assert got == (pytest.approx(value, abs=2) if isinstance(value, float) else value), (name, got)
    assert api.calls == 1, "the SDK's own retries are off: the broker retries by kind"


@pytest.mark.parametrize("dialect", ["openai", "anthropic"])
def test_a_malformed_answer_is_asked_again_and_billed(serve, dialect: str) -> None:
    answers = iter([success(dialect, "Looks bad to me!"), success(dialect, verdict(confidence=9))])
    api = serve(dialect, lambda asked: next(answers))
    broker = ModelBroker(provider_for(api), retry=RetryPolicy(malformed_attempts=2), threads=1)
    try:
        result = broker.call(REQUEST)
    finally:
        broker.close()
    assert result.answer.confidence == 9 and result.attempts == 2 and api.calls == 2
    assert (result.input_tokens, result.output_tokens) == (2000, 200), "both tries are billed"


@pytest.mark.parametrize("raw, problem", [
    ("not json", "not JSON"),
    ('{"verdict": "maybe", "confidence": 5, "cwe": null, "severity": "low", "rationale": "x"}', "verdict"),
    ('{"verdict": "vulnerable", "confidence": 11, "cwe": 78, "severity": "low", "rationale": "x"}', "out of range"),
    ('{"verdict": "vulnerable", "confidence": "high", "cwe": 78, "severity": "low", "rationale": "x"}', "confidence"),
    ('{"verdict": "vulnerable", "confidence": 8, "cwe": 78, "severity": "low"}', "rationale"),
    (None, "no answer"),
])
def test_malformed_answers_are_refused(raw: str | None, problem: str) -> None:
    with pytest.raises(MalformedAnswer, match=problem):
        parse_answer(raw)


def test_a_fenced_json_answer_is_read() -> None:
    answer = parse_answer('```json\n{"verdict": "not_vulnerable", "confidence": 7, "cwe": null, '
                          '"severity": "info", "rationale": "constant"}\n```')
    assert answer.verdict == "not_vulnerable" and answer.signals == {"severity": "info"}


def test_code_context_is_the_enclosing_function_capped() -> None:
    body = [f"    x{n} = {n}" for n in range(200)]
    source = "import os\n\n\n@app.route('/run')\ndef long_view(request):\n" + "\n".join(body) + \
             "\n    os.system(request.args['c'])\n    return x0\n\n\ndef other():\n    pass\n"
    flagged = source.splitlines().index("    os.system(request.args['c'])") + 1
    candidate = Candidate(**{**CANDIDATE.to_json(), "line": flagged, "end_line": flagged})
    context = code_context(source, candidate)
    lines = context.text.splitlines()
    assert len(lines) <= MAX_CONTEXT_LINES + 1
    assert lines[0].endswith("| @app.route('/run')"), "the function's first line (its decorator) stays"
    assert any(line.startswith(">>") and "os.system" in line for line in lines)
    assert "def other" not in context.text and context.last_line == flagged + 1


def test_spec_and_keys_are_checked_on_the_host(monkeypatch: pytest.MonkeyPatch) -> None:
    assert parse_spec("offline").runs_locally and not parse_spec("openai:gpt-4o-mini").runs_locally
    with pytest.raises(errors.UsageError, match="unknown model provider"):
        parse_spec("mystery:model")
    with pytest.raises(errors.UsageError, match="names no model"):
        parse_spec("anthropic")
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(errors.UsageError, match="OPENAI_API_KEY is not set"):
        get_provider("openai:gpt-4o-mini")


def test_model_configuration_file(tmp_path: Path) -> None:
    path = tmp_path / "models.toml"
    path.write_text('[openai]\nbase_url = "http://127.0.0.1:9/v1"\nresponse_format = "json_object"\n'
                    '[prices."openai:gpt-4o-mini"]\ninput_usd_per_mtok = 0.15\noutput_usd_per_mtok = 0.6\n'
                    '[retry]\nmalformed_attempts = 5\n', encoding="utf-8")
    config = ModelConfig.load(path)
    assert config.settings("openai").base_url == "http://127.0.0.1:9/v1"
    assert config.settings("openai").api_key_env == "OPENAI_API_KEY"
    assert config.settings("anthropic").api_key_env == "ANTHROPIC_API_KEY"
    assert config.prices["openai:gpt-4o-mini"].cost_usd(1_000_000, 1_000_000) == pytest.approx(0.75)
    assert config.retry.malformed_attempts == 5
    path.write_text('[openai]\napi_key = "sk-secret"\n', encoding="utf-8")
    with pytest.raises(errors.UsageError, match="unknown keys"):
        ModelConfig.load(path)


# -- whole scans ---------------------------------------------------------------------------


@pytest.mark.parametrize("dialect", ["openai", "anthropic"])
def test_scan_calls_the_model_on_the_host_and_records_every_call(serve, tmp_path: Path, dialect: str) -> None:
    api = serve(dialect, lambda asked: success(dialect, verdict()))
    repo = handler_repo(tmp_path / "repo", folders=2, handlers=3)
    environments: list[str] = []

    def look_at_workers(view: RunView) -> None:
        if coordinator.pool is not None:
            for worker in coordinator.pool.workers.values():
                environments.append(Path(f"/proc/{worker.pid}/environ").read_bytes().decode(errors="replace"))

    spec = f"{dialect}:{MODELS[dialect]}"
    job = ScanJob(repo, workspace=tmp_path / "ws", argv=[], model=spec)
    coordinator = Coordinator(job, Workspace.at(tmp_path / "ws"), RunOptions(workers=2),
                              policy=Policy(models=("offline", dialect)), model_config=model_config(api),
                              on_progress=look_at_workers)
    result = coordinator.run()

    assert result.exit_code == 0 and result.state == "JACKED_OUT", result.message
    calls = [r for r in records(tmp_path / "ws") if r.kind == "model.call"]
    assert len(calls) == api.calls == 12, "6 investigations and 6 revalidations, each asked once"
    assert all(r.payload["provider"] == dialect and r.payload["model"] == MODELS[dialect] for r in calls)
    assert all(r.payload["request"]["prompt_sha256"] and r.payload["input_tokens"] == 1000 for r in calls)
    assert coordinator.view.model["input_tokens"] == 12_000 and coordinator.view.model["output_tokens"] == 1_200
    assert environments and not any(KEY in env or "_API_KEY" in env for env in environments), \
        "no key reaches a worker"
    assert "6 finding(s)" in result.message


@pytest.mark.parametrize("dialect", ["openai", "anthropic"])
def test_a_candidate_whose_answers_stay_malformed_is_a_failed_step_never_a_finding(serve, tmp_path: Path,
                                                                                  dialect: str) -> None:
    def script(asked: Asked) -> Reply:
        if "jobs.py:6:" in asked.finding[1] and asked.finding[0] == "investigate" and "pkg0" in asked.finding[1]:
            return success(dialect, '{"verdict": "vulnerable"')
        return success(dialect, verdict())

    api = serve(dialect, script)
    repo = handler_repo(tmp_path / "repo", folders=1, handlers=3)
    coordinator, result = scan(api, repo, tmp_path / "ws", workers=1,
                               retry=RetryPolicy(backoff_s=0.01, malformed_attempts=2))

    assert result.exit_code == 0, result.message
    history = records(tmp_path / "ws")
    failed = [r for r in history if r.kind == "step.failed"]
    assert failed and all("MalformedAnswer" in r.why or "schema" in r.why or "not JSON" in r.why for r in failed)
    assert "2 finding(s)" in result.message, "the malformed candidate is not a finding"
    spend_only = [r for r in history if r.kind == "model.call" and "#malformed-" in r.key]
    assert spend_only and all(r.payload["answer"] is None and r.payload["input_tokens"] > 0 for r in spend_only), \
        "tokens spent on malformed answers are counted"
    bad = [a for a in api.asked if "jobs.py:6:" in a.finding[1] and a.finding[0] == "investigate"]
    assert len(bad) == 4, "two tries per attempt, and the step is given up after two failed attempts"


@pytest.mark.parametrize("dialect", ["openai", "anthropic"])
def test_authentication_failure_halts_without_further_calls(serve, tmp_path: Path, dialect: str) -> None:
    kind = "authentication_error" if dialect == "anthropic" else "invalid_request_error"
    api = serve(dialect, lambda asked: failure(dialect, 401, kind, "Incorrect API key provided", code="invalid_api_key"))
    repo = handler_repo(tmp_path / "repo", folders=4, handlers=3)
    _, result = scan(api, repo, tmp_path / "ws", workers=4)

    assert result.exit_code == 75 and result.state == "HALTED"
    assert "refused" in result.message and "401" in result.message
    assert api.calls <= 4, "only calls already in flight were made"
    halted = [r for r in records(tmp_path / "ws") if r.kind == "run.halted"][-1]
    assert halted.payload["kind"] == "model_refused" and halted.payload["status"] == 401


def test_transient_errors_are_retried(serve, tmp_path: Path) -> None:
    def script(asked: Asked) -> Reply:
        return failure("openai", 502, "server_error", "bad gateway") if asked.n % 3 == 1 else success("openai", verdict())

    api = serve("openai", script)
    repo = handler_repo(tmp_path / "repo", folders=1, handlers=2)
    _, result = scan(api, repo, tmp_path / "ws", workers=1)
    assert result.exit_code == 0, result.message
    assert sum(keyed_calls(tmp_path / "ws").values()) == 4 and api.calls == 6


def test_policy_must_allow_the_model(serve, tmp_path: Path) -> None:
    api = serve("openai", lambda asked: success("openai", verdict()))
    repo = handler_repo(tmp_path / "repo", folders=1, handlers=1)
    _, result = scan(api, repo, tmp_path / "ws", policy=Policy())
    assert result.exit_code == 75 and "policy.models" in result.message and api.calls == 0


def test_cli_scan_with_a_paid_model_reports_its_spend(serve, tmp_path: Path) -> None:
    api = serve("openai", lambda asked: success("openai", verdict(), tokens=(1000, 100)))
    repo = handler_repo(tmp_path / "repo", folders=1, handlers=2)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "policy.toml").write_text('[policy]\nmodels = ["offline", "openai"]\nmax_cost_usd = 1.0\n', encoding="utf-8")
    (ws / "models.toml").write_text(f'[openai]\nbase_url = "{api.base_url}"\n[prices."openai:gpt-test"]\n'
                                    'input_usd_per_mtok = 2.0\noutput_usd_per_mtok = 10.0\n', encoding="utf-8")
    done = run_cli("scan", str(repo), "--workspace", str(ws), "--model", "openai:gpt-test", "--workers", "2",
                   "--no-progress")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "model spend: 4 calls, 4,000 input tokens, 400 output tokens, $0.0120" in done.stdout
    assert api.calls == 4
    status = run_cli("status", "--workspace", str(ws))
    assert "model spend: 4 calls, 4,000 input tokens, 400 output tokens, $0.0120" in status.stdout
    again = run_cli("scan", str(repo), "--workspace", str(ws), "--model", "openai:gpt-test", "--no-progress")
    assert again.returncode == 0 and "already finished" in again.stdout and api.calls == 4
    unknown = run_cli("scan", str(repo), "--workspace", str(ws), "--model", "mystery:x", "--no-progress")
    assert unknown.returncode == 2 and "unknown model provider" in unknown.stderr


def test_brief_of_the_flask_sdist() -> None:
    """What every investigation of Flask is told about the repository (docs/models.md shows it)."""
    brief = derive_brief(real_repo())
    text = brief["text"]
    assert brief["name"] == "Flask" and "README.md" in brief["sources"] and "pyproject.toml" in brief["sources"]
    assert text.startswith("Repository Flask. Purpose: A simple framework for building complex web applications.")
    assert {"Jinja2", "Werkzeug", "click"} <= set(brief["frameworks"])
    assert "console script flask" in brief["entry_points"]
    assert "Flask is a lightweight WSGI web application framework." in text
    assert "[WSGI]" not in text and "https://" not in text and "```" not in text and ".." not in text, \
        "no link definitions, URLs or code in the brief"
    assert "Top level: " in text and "src/" in text and "tests/" in text
    assert len(text.split()) <= 301

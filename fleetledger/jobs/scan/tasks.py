"""The scan's worker side: what a worker process does with each kind of task.

``run_task(ctx)`` dispatches on the task's ``kind`` input. Every unit of work is a step
(``ctx.step``), so a task that is run again after a crash skips what is already recorded.
This module runs inside the worker process (and its sandbox): it is the only part of the scan
that reads the repository.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ... import faults
from ...steps import StepFailed, TaskContext, input_hash
from .brief import BRIEF_FILES, derive_brief
from .detect import DETECT_VERSION, detect_file
from .modules import UNREAD_REASONS
from .shapes import Candidate, FileReport, ModelAnswer, ModelRequest
from .source import decode_source
from .triage import triage

if TYPE_CHECKING:
    from ...models import ModelProvider

_local_providers: dict[str, "ModelProvider"] = {}


def _local_model(spec: str) -> "ModelProvider":
    """The provider that runs in this worker (the offline analyst), made once per spec."""
    if spec not in _local_providers:
        from ...models import get_provider

        _local_providers[spec] = get_provider(spec)
    return _local_providers[spec]


def run_task(ctx: TaskContext) -> dict[str, Any]:
    """Runs one scan task; returns the task's summary (``task.finished`` payload).

    Raises:
        ValueError: the task's ``kind`` is unknown (a planning bug).
    """
    kind = ctx.inputs["kind"]
    handler = {"brief": _brief, "detect": _detect, "investigate": _judge, "revalidate": _judge,
               "triage": _triage}.get(kind)
    if handler is None:
        raise ValueError(f"unknown scan task kind {kind!r}")
    return handler(ctx)


def _each(ctx: TaskContext, items: list[Any], body) -> None:  # type: ignore[no-untyped-def]
    for item in items:
        try:
            body(item)
        except StepFailed:
            continue


def _brief(ctx: TaskContext) -> dict[str, Any]:
    root = Path(ctx.context["root"])
    readable = [name for name in BRIEF_FILES if f"brief:{name}" not in ctx.denied]
    ctx.denied_steps.extend(f"brief:{name}" for name in BRIEF_FILES if f"brief:{name}" in ctx.denied)
    ctx.step("brief", input_hash("brief", ctx.inputs.get("listing_sha", ""), *readable),
             lambda key: derive_brief(root, readable), why="derive the repository brief")
    return {"steps": ctx.ran_steps}


def _detect(ctx: TaskContext) -> dict[str, Any]:
    root = Path(ctx.context["root"])
    readable, modules_sha = _readable(ctx.context.get("shas", {}), ctx.context.get("readable", []))

    def one(f: dict[str, Any]) -> None:
        def run(key: str) -> dict[str, Any]:
            faults.hit(f"scan.detect:{f['path']}")
            if f.get("link"):
                return FileReport(path=f["path"], sha256="", size_bytes=0, status="skipped",
                                  reason="symbolic link, not followed").to_json()
            if f.get("skip_reason"):  # cut by the walk (too large, too deep...): not read
                return FileReport(path=f["path"], sha256=f["sha256"], size_bytes=f["size_bytes"], status="skipped",
                                  reason=f["skip_reason"]).to_json()
            report = detect_file(root, f["path"], readable=readable)
            if report.status == "skipped" and (report.reason or "").startswith(UNREAD_REASONS):
                return report.to_json()  # not read at all (unreadable, a link...): its own reason, not "changed"
            if report.sha256 != f["sha256"]:
                return FileReport(path=f["path"], sha256=report.sha256, size_bytes=report.size_bytes,
                                  status="skipped",
                                  reason=f"changed during the scan (planned sha256 {f['sha256'][:12]}, "
                                         f"now {report.sha256[:12]}); start a new run with --new").to_json()
            return report.to_json()

        ctx.step(f"detect:{f['path']}", input_hash(f["path"], f["sha256"], DETECT_VERSION, modules_sha), run,
                 why=f"detect {f['path']}", outcome=_detect_outcome)

    _each(ctx, ctx.inputs["files"], one)
    return {"steps": ctx.ran_steps, "failed": len(ctx.failed_steps)}


_derived: dict[tuple[int, int], tuple[Any, Any, dict[str, str], str]] = {}


def _readable(shas: dict[str, str], readable: list[str]) -> tuple[dict[str, str], str]:
    """The files a detect step's engine may read (path -> planned hash), and their digest: every
    detect result depends on the modules the taint engine may follow imports into. Derived once
    per worker for the same context objects (the worker hands every task the same ones), so
    that the engine's caches keyed on the mapping hold across tasks."""
    key = (id(shas), id(readable))
    known = _derived.get(key)
    if known is None or known[0] is not shas or known[1] is not readable:
        allowed = {path: shas[path] for path in readable if path in shas}
        digest = hashlib.sha256(json.dumps(sorted(allowed.items())).encode()).hexdigest()
        _derived.clear()
        known = (shas, readable, allowed, digest)
        _derived[key] = known
    return known[2], known[3]


def _detect_outcome(report: dict[str, Any]) -> str:
    if report["status"] == "skipped":
        return f"skipped: {report['reason']}"
    return f"scanned: {len(report['candidates'])} candidate(s)"


def _answer_outcome(result: dict[str, Any]) -> str:
    answer = result["answer"]
    cwe = f" CWE-{answer['cwe']}" if answer.get("cwe") else ""
    return f"{answer['verdict']} {answer['confidence']}/10{cwe}"


class _Sources:
    """Reads and decodes each file once per task, checking it is the content that was planned."""

    def __init__(self, root: Path, shas: dict[str, str]) -> None:
        self.root = root
        self.shas = shas
        self._cache: dict[str, str] = {}

    def text(self, path: str) -> str:
        if path not in self._cache:
            data = (self.root / path).read_bytes()
            digest = hashlib.sha256(data).hexdigest()
            if digest != self.shas[path]:
                raise ValueError(f"{path} changed since it was detected (sha256 {self.shas[path][:12]} -> {digest[:12]})")
            self._cache[path] = decode_source(data).text
        return self._cache[path]


def _judge(ctx: TaskContext) -> dict[str, Any]:
    """Investigate or revalidate: one model call per candidate.

    The offline analyst answers here, in the worker; a paid model is asked through the
    coordinator (``ctx.ask_model``), which holds the credentials and records the call.
    """
    from ...models import parse_spec, request_to_json
    from ...models.prompts import PROMPT_VERSION

    pass_name = ctx.inputs["kind"]
    spec = parse_spec(ctx.context.get("model", "offline"))
    provider = _local_model(str(spec)) if spec.runs_locally else None
    identity = (provider.name, provider.model) if provider is not None else (spec.provider, spec.model, PROMPT_VERSION)
    sources = _Sources(Path(ctx.context["root"]), ctx.inputs["files"])
    brief = ctx.context.get("brief", "")
    brief_sha = hashlib.sha256(brief.encode("utf-8", "surrogateescape")).hexdigest()

    def one(item: dict[str, Any]) -> None:
        candidate = Candidate.from_json(item["candidate"])
        prior = item.get("answer")

        def run(key: str) -> dict[str, Any]:
            request = ModelRequest(candidate=candidate, source=sources.text(candidate.path), brief=brief,
                                   pass_name=pass_name, prior=prior)
            if provider is None:
                answer = ctx.ask_model(key, request_to_json(request))
                faults.hit("scan.model.answered")
                return {"candidate": candidate.id, "answer": answer}
            # The offline analyst's work is bounded by the file it reads (detect's size limit) and
            # the candidates it judges (detect's cap); it is not interrupted by a clock or a signal.
            result = provider.call(request)
            answer = result.answer.to_json()
            ctx.record("model.call", key=key, why=f"{pass_name} {candidate.rule_id} at {candidate.path}:{candidate.line}",
                       payload={"provider": provider.name, "model": provider.model, "pass": pass_name,
                                "input_tokens": result.input_tokens, "output_tokens": result.output_tokens,
                                "cost_usd": result.cost_usd, "answer": answer})
            return {"candidate": candidate.id, "answer": answer}

        ctx.step(f"{pass_name}:{candidate.id}",
                 input_hash(item, ctx.inputs["files"][candidate.path], *identity, brief_sha),
                 run, spends_call=True, outcome=_answer_outcome,
                 why=f"{pass_name} {candidate.rule_id} at {candidate.path}:{candidate.line}")
        faults.hit(f"scan.{pass_name}.after_step")

    _each(ctx, ctx.inputs["items"], one)
    return {"steps": ctx.ran_steps, "failed": len(ctx.failed_steps)}


def _triage(ctx: TaskContext) -> dict[str, Any]:
    def one(item: dict[str, Any]) -> None:
        candidate = Candidate.from_json(item["candidate"])
        answer = ModelAnswer.from_json(item["answer"])

        def run(key: str) -> dict[str, Any]:
            severity, reason = triage(candidate, answer)
            return {"candidate": candidate.id, "severity": severity, "reason": reason}

        ctx.step(f"triage:{candidate.id}", input_hash(item), run, outcome=lambda r: f"{r['severity']}: {r['reason']}",
                 why=f"triage {candidate.rule_id} at {candidate.path}:{candidate.line}")

    _each(ctx, ctx.inputs["items"], one)
    return {"steps": ctx.ran_steps, "failed": len(ctx.failed_steps)}

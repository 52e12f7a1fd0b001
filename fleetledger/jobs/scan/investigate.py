"""The model passes on the worker: ``investigate`` (is this candidate a real vulnerability?) and
``revalidate``, its sceptical second look at the survivors, which asks the same question with the
first answer as ``prior``. One recorded step per candidate, one model call each.

The offline analyst (``models.offline``) answers here, in the worker; a paid model is asked
through the coordinator (``TaskContext.ask_model``), which holds the credentials and records the
call. Either way the answer is the step's result, so a rerun pays for no call twice.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ... import faults
from ...steps import TaskContext, each, input_hash
from .shapes import Candidate, ModelRequest
from .source import decode_source

if TYPE_CHECKING:
    from ...models import ModelProvider


def judge_identity(model: str) -> tuple[str, ...]:
    """Returns what names the model in an investigate or revalidate step's input hash: the
    provider's name and model for one that runs in the worker (the offline analyst), else the
    spec's provider and model and the prompt version (``model``: the job's model spec)."""
    from ...models import parse_spec
    from ...models.prompts import PROMPT_VERSION

    spec = parse_spec(model)
    if spec.runs_locally:
        provider = local_provider(str(spec))
        return (provider.name, provider.model)
    return (spec.provider, spec.model, PROMPT_VERSION)


_providers: dict[str, "ModelProvider"] = {}


def local_provider(spec: str) -> "ModelProvider":
    """The provider that runs in this process for ``spec`` (the offline analyst), made once."""
    if spec not in _providers:
        from ...models import get_provider

        _providers[spec] = get_provider(spec)
    return _providers[spec]


def brief_sha(brief: str) -> str:
    """SHA-256 hex of the repository brief's text, part of every model step's input hash."""
    return hashlib.sha256(brief.encode("utf-8", "surrogateescape")).hexdigest()


def judge_step(pass_name: str, item: dict[str, Any], files: dict[str, str], identity: tuple[str, ...],
               brief_hash: str) -> tuple[str, str]:
    """Returns the name and input hash of an investigate or revalidate step: the item (the
    candidate, and on revalidate the first answer), the planned hash of its file, the model
    (``judge_identity``) and the brief (``brief_sha``)."""
    candidate = item["candidate"]
    return (f"{pass_name}:{candidate['id']}",
            input_hash(item, files[candidate["path"]], *identity, brief_hash))


def file_holds(path: str, files: dict[str, str], on_disk: Callable[[str], str]) -> Callable[[dict[str, Any]], bool]:
    """Returns the coordinator's check that a judgement recorded earlier still holds: the
    candidate's file (``path``) is at its planned hash (``files``) now (``on_disk``:
    ``step_inputs.current_hashes``). The worker checks the same by reading and decoding the file
    (``_Sources.unchanged``); a file at its planned hash decodes as it did when detect found the
    candidate, so the hash decides."""
    return lambda result: on_disk(path) == files[path]


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

    def unchanged(self, path: str) -> bool:
        """Says whether the file is still the content that was planned (read once per task, as
        ``text`` reads it): a result recorded for that content holds only then, since a step
        run now would fail on the changed file."""
        try:
            self.text(path)
        except (OSError, ValueError):
            return False
        return True


def judge(ctx: TaskContext) -> dict[str, Any]:
    """Runs an ``investigate`` or ``revalidate`` task: one model call per candidate item.

    Args:
        ctx: The task: ``inputs`` ``kind`` (the pass), ``items`` (``candidate``, and on
            revalidate the first pass's ``answer``) and ``files`` (path -> planned sha256);
            ``context`` ``root``, ``model`` and ``brief``.

    Returns:
        The task's summary: steps run and steps failed.

    Raises:
        StepFailed is caught per candidate (the step is recorded as failed and the next one runs).
    """
    from ...models import parse_spec, request_to_json

    pass_name = ctx.inputs["kind"]
    spec = parse_spec(ctx.context.get("model", "offline"))
    provider = local_provider(str(spec)) if spec.runs_locally else None
    identity = judge_identity(str(spec))
    sources = _Sources(Path(ctx.context["root"]), ctx.inputs["files"])
    brief = ctx.context.get("brief", "")
    brief_hash = brief_sha(brief)

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

        ctx.step(*judge_step(pass_name, item, ctx.inputs["files"], identity, brief_hash), run,
                 spends_call=True, outcome=_answer_outcome,
                 why=f"{pass_name} {candidate.rule_id} at {candidate.path}:{candidate.line}",
                 still_valid=lambda result: sources.unchanged(candidate.path))
        faults.hit(f"scan.{pass_name}.after_step")

    each(ctx.inputs["items"], one)
    return {"steps": ctx.ran_steps, "failed": len(ctx.failed_steps)}

"""What a paid model is asked, and how its answer is read.

A prompt holds the candidate (rule, message, place), its code context (the enclosing function,
capped, with line numbers and the flagged line marked), the repository brief, and for the
revalidation pass the first verdict. The investigate pass asks for a judgement; the revalidate
pass is sceptical: it is told that most detector findings are false positives and that a
finding survives only on evidence in the code shown.

The answer is a JSON object that follows ``ANSWER_SCHEMA`` (verdict, confidence 0-10, CWE,
severity, rationale): providers ask for it with OpenAI structured outputs (or JSON mode) and
Anthropic tool use, and ``parse_answer`` checks it. A malformed answer raises
``MalformedAnswer``; it never becomes a finding.
"""

from __future__ import annotations

import ast
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import jsonschema

from ..jobs.scan.shapes import SEVERITIES, Candidate, ModelAnswer, ModelRequest
from .failures import MalformedAnswer

PROMPT_VERSION = "2"
"""Part of every host-side model step's input hash: new prompts are new steps."""

MAX_CONTEXT_LINES = 80
MAX_LINE_CHARS = 240
MAX_BRIEF_CHARS = 2_500
WINDOW_LINES = 12
"""Lines on each side of the flagged line when it sits outside any function."""

ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": ["vulnerable", "not_vulnerable", "uncertain"],
                    "description": "Whether the flagged code is an exploitable weakness in deployed code."},
        "confidence": {"type": "integer", "description": "0 (a guess) to 10 (certain)."},
        "cwe": {"type": ["integer", "null"], "description": "CWE number of the weakness (78 for CWE-78), or null."},
        "severity": {"type": "string", "enum": list(SEVERITIES), "description": "Impact if exploited."},
        "rationale": {"type": "string", "description": "One paragraph a security engineer can check, naming lines."},
    },
    "required": ["verdict", "confidence", "cwe", "severity", "rationale"],
    "additionalProperties": False,
}
"""The answer's JSON schema, as sent to the providers (strict-mode compatible)."""

_VALIDATOR = jsonschema.Draft202012Validator(ANSWER_SCHEMA)

_INVESTIGATE = (
    "You are a senior application security engineer reviewing one finding of a static analysis "
    "tool in a Python repository. Decide whether the flagged code is an exploitable vulnerability "
    "in the software as deployed. Judge from the code shown and the repository brief: where the "
    "dangerous value comes from, whether outside data can reach the flagged operation, and whether "
    "it is validated or sanitised for that operation. Test code and code that never runs are not "
    "vulnerabilities. Answer with one JSON object only, with the keys verdict (vulnerable, "
    "not_vulnerable or uncertain), confidence (an integer from 0 to 10), cwe (an integer or null), "
    "severity (critical, high, medium, low or info) and rationale (one paragraph that names the "
    "lines it rests on).")
_REVALIDATE = (
    "You are the sceptical second reviewer of a static analysis finding in a Python repository. A "
    "first reviewer judged it; your job is to throw out the findings the code shows to be wrong, "
    "and only those. Dismiss a finding (not_vulnerable) only for a reason you can show from the "
    "code: the dangerous value is built only from constants, a sanitiser or check for this kind of "
    "operation is on the path, or the code is test code or never runs. A value whose origin the "
    "code shown does not reveal is not such a reason: answer uncertain with confidence 5 (the "
    "finding stays, marked uncertain). When the tool gives a data-flow trace (source, steps, sink), "
    "check each step against the code. Do not defer to the first verdict; check it. Answer with "
    "one JSON object only, with the keys verdict "
    "(vulnerable, not_vulnerable or uncertain), confidence (an integer from 0 to 10), cwe (an "
    "integer or null), severity (critical, high, medium, low or info) and rationale (one paragraph "
    "that names the lines it rests on).")


@dataclass(frozen=True, kw_only=True)
class CodeContext:
    """The code a model is shown: ``text`` (numbered lines, the flagged one marked ``>>``),
    the shown line range ``first_line``..``last_line`` (1-based) and the enclosing ``scope``."""

    text: str
    first_line: int
    last_line: int
    scope: str


@dataclass(frozen=True, kw_only=True)
class Prompt:
    """One model request as text: the ``system`` instruction, the ``user`` message, and a
    ``summary`` for the ledger (what was asked, without the text)."""

    system: str
    user: str
    summary: dict[str, Any]


def _enclosing(source: str, line: int) -> tuple[int, int, str] | None:
    """Returns ``(first line, last line, name)`` of the innermost function around ``line``
    (decorators included), or None when there is none or the file does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    best: tuple[int, int, str] | None = None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno is not None:
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            if first <= line <= node.end_lineno and (best is None or first >= best[0]):
                best = (first, node.end_lineno, node.name)
    return best


def code_context(source: str, candidate: Candidate) -> CodeContext:
    """Cuts the candidate's code context out of its file: the enclosing function, or a window
    around the flagged line at module level, at most ``MAX_CONTEXT_LINES`` lines (a longer
    function keeps its first line and the lines around the flagged one)."""
    lines = source.splitlines()
    line = min(max(candidate.line, 1), max(len(lines), 1))
    found = _enclosing(source, line)
    if found is None:
        first, last, scope = max(1, line - WINDOW_LINES), min(len(lines), line + WINDOW_LINES), candidate.scope
    else:
        first, last, scope = found
    head: list[int] = []
    if last - first + 1 > MAX_CONTEXT_LINES:
        start = max(first + 1, min(line - MAX_CONTEXT_LINES // 2, last - MAX_CONTEXT_LINES + 2))
        head = [first]
        first, last = start, start + MAX_CONTEXT_LINES - 2
    flagged = range(candidate.line, max(candidate.line, candidate.end_line) + 1)

    def show(n: int) -> str:
        text = lines[n - 1] if n <= len(lines) else ""
        if len(text) > MAX_LINE_CHARS:
            text = text[:MAX_LINE_CHARS] + " ..."
        return f"{'>>' if n in flagged else '  '} {n:>5} | {text}"

    gap = ["         | ..."] if head and first > head[0] + 1 else []
    shown = [show(n) for n in head] + gap + [show(n) for n in range(first, last + 1)]
    return CodeContext(text="\n".join(shown), first_line=head[0] if head else first, last_line=last, scope=scope)


def build_prompt(request: ModelRequest) -> Prompt:
    """Builds the prompt of one request (deterministic: the same request gives the same text)."""
    c = request.candidate
    context = code_context(request.source, c)
    brief = request.brief.strip() or "(no brief)"
    if len(brief) > MAX_BRIEF_CHARS:
        brief = brief[:MAX_BRIEF_CHARS] + " ..."
    cwe = f"CWE-{c.cwe}" if c.cwe else "no CWE"
    parts = [
        f"Repository brief:\n{brief}",
        f"Finding:\n- rule: {c.rule_id} {c.rule_name} ({c.detector}), {cwe}, detector severity "
        f"{c.detector_severity}, detector confidence {c.detector_confidence}\n- message: {c.message}\n"
        f"- location: {c.path}:{c.line}:{c.col + 1}, in {context.scope}",
        f"Code ({c.path}, lines {context.first_line}-{context.last_line}; the flagged line is marked >>):\n"
        f"{context.text}",
    ]
    facts = tool_facts(c)
    if facts:
        parts.insert(2, facts)
    if request.pass_name == "revalidate" and request.prior:
        prior = request.prior
        prior_cwe = f", CWE-{prior['cwe']}" if prior.get("cwe") else ""
        parts.append(f"First reviewer's verdict: {prior.get('verdict')}, confidence {prior.get('confidence')}/10"
                     f"{prior_cwe}.\nIts rationale: {prior.get('rationale', '')}")
    parts.append("Answer with the JSON object only.")
    system = _REVALIDATE if request.pass_name == "revalidate" else _INVESTIGATE
    user = "\n\n".join(parts)
    digest = hashlib.sha256(f"{system}\0{user}".encode("utf-8", "surrogateescape")).hexdigest()
    summary = {"prompt_version": PROMPT_VERSION, "pass": request.pass_name, "candidate": c.id, "rule": c.rule_id,
               "path": c.path, "line": c.line, "context_lines": [context.first_line, context.last_line],
               "scope": context.scope, "prompt_sha256": digest, "prompt_chars": len(system) + len(user)}
    return Prompt(system=system, user=user, summary=summary)


def tool_facts(c: Candidate) -> str:
    """The tool's own analysis of the finding, for the model to check: the taint traces
    (source, steps, sink), an API misuse, or what reached the sink of another detector's
    finding."""
    trace = c.trace or {}
    lines: list[str] = []
    for number, flow in enumerate(trace.get("traces", []), 1):
        source, sink = flow["source"], flow["sink"]
        hops = [f"source {source['what']} ({source['path']}:{source['line']})"]
        hops += [f"{step['what']} ({step['path']}:{step['line']})" for step in flow["steps"]]
        hops.append(f"sink {sink['what']}, {sink['role']} ({sink['path']}:{sink['line']})")
        sanitised = f"; sanitisers seen (none for this sink): {', '.join(flow['sanitisers'])}" if flow.get("sanitisers") else ""
        lines.append(f"- trace {number}: " + " -> ".join(hops) + sanitised)
    if trace.get("check"):
        lines.append(f"- API misuse: {trace['check']['message']}")
    if c.evidence:
        lines.append(f"- what reaches the flagged operation: {c.evidence['state']} ({c.evidence['detail']})")
    return "The tool's data-flow analysis:\n" + "\n".join(lines) if lines else ""


def _strip_fence(text: str) -> str:
    text = text.strip()
    if text.startswith("```"):
        text = text.split("\n", 1)[1] if "\n" in text else ""
        text = text.rsplit("```", 1)[0]
    return text.strip()


def decode_answer(raw: str | Mapping[str, Any] | None, validator: Any, schema: str) -> Any:
    """A model's answer as JSON data that ``validator`` accepts (its text may be in a Markdown
    code fence).

    Raises:
        MalformedAnswer: no answer, not JSON, or it breaks the schema (named ``schema`` in the
            message, which says where).
    """
    if raw is None:
        raise MalformedAnswer("the model gave no answer")
    data: Any = raw
    if isinstance(raw, str):
        try:
            data = json.loads(_strip_fence(raw))
        except json.JSONDecodeError as exc:
            raise MalformedAnswer(f"the answer is not JSON ({exc.msg} at {exc.pos}): {raw[:200]!r}") from exc
    problems = sorted(validator.iter_errors(data), key=lambda e: list(e.path))
    if problems:
        where = "/".join(str(p) for p in problems[0].path) or "answer"
        raise MalformedAnswer(f"the answer breaks {schema} at {where}: {problems[0].message[:200]}")
    return data


def parse_answer(raw: str | Mapping[str, Any] | None) -> ModelAnswer:
    """Reads a model's answer: a JSON object (or its text, a Markdown code fence allowed).

    Returns:
        The answer; the model's ``severity`` is kept in ``signals["severity"]``.

    Raises:
        MalformedAnswer: no answer, not JSON, not an object, or it breaks ``ANSWER_SCHEMA``
            (the message says how).
    """
    data = decode_answer(raw, _VALIDATOR, "the schema")
    try:
        return ModelAnswer(verdict=data["verdict"], confidence=data["confidence"], cwe=data["cwe"],
                           rationale=data["rationale"], signals={"severity": data["severity"]})
    except ValueError as exc:
        raise MalformedAnswer(f"the answer is out of range: {exc}") from exc

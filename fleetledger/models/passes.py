"""What each pass asks a paid model, and how its answer is read: the judging passes
(investigate, revalidate: ``prompts``) or the fix pass, which asks for a patch.

The fix pass shows the model the finding, the tool's trace (source, steps, sink) and the whole
file with line numbers, and asks for a unified diff and its rationale (``FIX_SCHEMA``), or an
empty diff with the reason when it knows no safe fix. The answer travels as a ``ModelAnswer``
(verdict ``vulnerable``, the rationale, ``signals["diff"]``) so that the broker records and
replays it like any other call; the fix sprint turns it into the same ``Proposal`` the offline
fixer makes, and validates it the same way.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from typing import Any

import jsonschema

from ..jobs.scan.shapes import ModelAnswer, ModelRequest
from .prompts import ANSWER_SCHEMA, Prompt, build_prompt, decode_answer, parse_answer, tool_facts

FIX_PROMPT_VERSION = "1"
"""Part of every fix step's input hash with a paid model: a new prompt is a new step."""
MAX_FIX_SOURCE_LINES = 400
"""Longest file shown whole to the model; a longer one gets no model proposal."""

FIX_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "diff": {"type": "string", "description": "A unified diff of the file (--- a/PATH, +++ b/PATH, @@ hunks with "
                                                  "3 lines of context), or \"\" when no safe fix is known."},
        "rationale": {"type": "string", "description": "Why the patch looks like it does (or why there is none)."},
    },
    "required": ["diff", "rationale"],
    "additionalProperties": False,
}
"""The fix answer's JSON schema (strict-mode compatible)."""

_FIX_VALIDATOR = jsonschema.Draft202012Validator(FIX_SCHEMA)

_FIX = (
    "You are a senior application security engineer fixing one confirmed vulnerability in a Python "
    "file. Propose the smallest change that removes the weakness the tool's trace shows without "
    "changing what the code does for legitimate input: parameters instead of string-built SQL, an "
    "argument list instead of a shell string, a safe loader or parser, a containment or same-site "
    "check, escaping. Change nothing else. If no change is both safe and behaviour-preserving, give "
    "an empty diff and say why. Answer with one JSON object only, with the keys diff (a unified "
    "diff of the file with 3 lines of context, or \"\") and rationale (one paragraph: why the patch "
    "looks like it does).")


def request_prompt(request: ModelRequest) -> tuple[Prompt, dict[str, Any], Callable[[Any], ModelAnswer]]:
    """Returns the prompt of a request, the JSON schema its answer follows and the function
    that reads the answer (``prompts`` for the judging passes, the fix pass's here)."""
    if request.pass_name == "fix":
        return build_fix_prompt(request), FIX_SCHEMA, parse_fix_answer
    return build_prompt(request), ANSWER_SCHEMA, parse_answer


def build_fix_prompt(request: ModelRequest) -> Prompt:
    """Builds the fix prompt (deterministic): the finding, the trace, the file numbered.

    Raises:
        ValueError: the file is longer than ``MAX_FIX_SOURCE_LINES`` (the caller asks nothing).
    """
    c = request.candidate
    lines = request.source.splitlines()
    if len(lines) > MAX_FIX_SOURCE_LINES:
        raise ValueError(f"{c.path} has {len(lines)} lines, more than the {MAX_FIX_SOURCE_LINES} shown to a model")
    numbered = "\n".join(f"{n:>5} | {line}" for n, line in enumerate(lines, 1))
    parts = [f"Finding (confirmed):\n- rule: {c.rule_id} {c.rule_name} ({c.detector}), "
             f"{f'CWE-{c.cwe}' if c.cwe else 'no CWE'}\n- message: {c.message}\n- location: {c.path}:{c.line}:{c.col + 1}, "
             f"in {c.scope}"]
    facts = tool_facts(c)
    if facts:
        parts.append(facts)
    parts += [f"File {c.path} (numbered; the numbers are not part of the file):\n{numbered}",
              f"Answer with the JSON object only; the diff's headers are --- a/{c.path} and +++ b/{c.path}."]
    user = "\n\n".join(parts)
    digest = hashlib.sha256(f"{_FIX}\0{user}".encode("utf-8", "surrogateescape")).hexdigest()
    summary = {"prompt_version": FIX_PROMPT_VERSION, "pass": "fix", "candidate": c.id, "rule": c.rule_id,
               "path": c.path, "line": c.line, "prompt_sha256": digest, "prompt_chars": len(_FIX) + len(user)}
    return Prompt(system=_FIX, user=user, summary=summary)


def parse_fix_answer(raw: str | Mapping[str, Any] | None) -> ModelAnswer:
    """Reads a fix answer: a JSON object (or its text) that follows ``FIX_SCHEMA``.

    Returns:
        A ``ModelAnswer`` (verdict ``vulnerable``, confidence 0) whose ``signals["diff"]`` is the
        diff ("" for none) and whose rationale is the model's.

    Raises:
        MalformedAnswer: no answer, not JSON, or it breaks ``FIX_SCHEMA``.
    """
    data = decode_answer(raw, _FIX_VALIDATOR, "the fix schema")
    return ModelAnswer(verdict="vulnerable", confidence=0, cwe=None, rationale=data["rationale"],
                       signals={"diff": data["diff"], "pass": "fix"})

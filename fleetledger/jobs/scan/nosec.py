"""Suppression comments in the scanned code (``# nosec``, ``# noqa: B602``), found in the worker.

The detect step records, on each candidate, the suppression comment on its lines whether or not
the user asked to honour them (``Candidate.suppression``): honouring is an export-time decision
(``--honour-nosec``, off by default, see ``ExportOptions.honour_nosec``), so a report can be
rendered both ways from one ledger and the repository's claim is never lost.

Syntax (what the tools that write these comments accept):

* bandit: ``# nosec`` (right after a ``#``, as bandit's pattern wants) alone suppresses every rule on the line; ``# nosec B602, B607`` (commas or
  spaces, an optional ``:`` after ``nosec``) only the rules named. Bandit's own docs:
  https://bandit.readthedocs.io/en/latest/config.html#exclusions.
* flake8 / ruff: ``# noqa: B602`` or ``# noqa: S602`` (flake8-bandit and ruff number bandit's
  rules ``S`` + the same three digits). A bare ``# noqa`` names no rule: it silences style
  linters wholesale and is not taken as a claim about security, so it is not recorded.

Only real comments count: a ``"# nosec"`` inside a string literal is not one, so lines that
mention ``nosec`` or ``noqa`` are checked with Python's tokenizer. A file the tokenizer cannot
read (syntax newer than this Python) gives no suppressions: the safe side, the finding stays open.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Iterable, Sequence
from typing import Any

MAX_COMMENT_CHARS = 200
"""Longest comment text kept on a candidate (a hostile 1 MB comment is cut, ending in "…")."""
MAX_LINES_CHECKED = 20
"""Lines of a multi-line candidate (a call split over lines) searched for a comment, from its
first line; bandit searches the flagged node's line range the same way."""

_NOSEC = re.compile(r"#\s*nosec\b:?(?P<rest>[^#]*)")  # bandit's own pattern, whole word
_NOQA = re.compile(r"#\s*noqa\s*:\s*(?P<codes>[A-Za-z]+[0-9]+(?:[\s,]+[A-Za-z]+[0-9]+)*)", re.IGNORECASE)
_RULE = re.compile(r"\b[BS][0-9]{3}\b")
_MENTION = re.compile(r"nosec|noqa", re.IGNORECASE)


def parse(comment: str) -> dict[str, Any] | None:
    """Parses one comment token into a suppression, or None when it is not one.

    Args:
        comment: The comment's text, from its ``#``.

    Returns:
        ``{"kind": "nosec" | "noqa", "rules": [rule ids], "comment": text}``; ``rules`` is
        empty for a bare ``# nosec`` (every rule); ``S`` numbers become bandit's ``B`` ones.
    """
    text = comment if len(comment) <= MAX_COMMENT_CHARS else comment[: MAX_COMMENT_CHARS - 1] + "…"
    nosec = _NOSEC.search(comment)
    if nosec is not None:
        return {"kind": "nosec", "rules": _rules(nosec.group("rest")), "comment": text}
    noqa = _NOQA.search(comment)
    if noqa is not None:
        rules = _rules(noqa.group("codes"))
        return {"kind": "noqa", "rules": rules, "comment": text} if rules else None
    return None


def _rules(text: str) -> list[str]:
    return sorted({"B" + match[1:] for match in _RULE.findall(text.upper())})


def comments(lines: Sequence[str], wanted: set[int]) -> dict[int, str]:
    """Returns the comments on the wanted lines, by 1-based line number (read-only).

    The tokenizer runs only when a wanted line mentions ``nosec`` or ``noqa``, so a file without
    such a comment costs a substring search per wanted line.

    Args:
        lines: The file's lines without their endings (``source.split_lines``).
        wanted: 1-based line numbers of interest.

    Returns:
        ``{line: comment text}``; empty when no wanted line holds a comment or the text cannot
        be tokenized.
    """
    if not any(0 < n <= len(lines) and _MENTION.search(lines[n - 1]) for n in wanted):
        return {}
    found: dict[int, str] = {}
    try:
        for token in tokenize.generate_tokens(io.StringIO("\n".join(lines) + "\n").readline):
            if token.type == tokenize.COMMENT and token.start[0] in wanted:
                found.setdefault(token.start[0], token.string)
    except (tokenize.TokenError, SyntaxError, ValueError):
        return {}
    return found


def suppression_for(lines: Sequence[str], first: int, last: int, by_line: dict[int, str]) -> dict[str, Any] | None:
    """Returns the suppression comment that covers a candidate on lines ``first``..``last``.

    Args:
        lines: The file's lines (only their count is used).
        first: The candidate's first line (1-based).
        last: Its last line; at most ``MAX_LINES_CHECKED`` lines are searched.
        by_line: ``comments()`` of the file.

    Returns:
        ``parse()``'s dict plus ``"line"``, for the first line that holds one; None otherwise.
    """
    for n in range(first, min(max(last, first), first + MAX_LINES_CHECKED - 1, len(lines)) + 1):
        parsed = parse(by_line[n]) if n in by_line else None
        if parsed is not None:
            return {**parsed, "line": n}
    return None


def covers(suppression: dict[str, Any] | None, rule_ids: Iterable[str]) -> bool:
    """True when a recorded suppression names one of ``rule_ids`` (``# nosec`` alone: any rule).

    Args:
        suppression: ``Candidate.suppression`` (None: no comment).
        rule_ids: The rules the result stands for.
    """
    if not suppression:
        return False
    rules = suppression.get("rules") or []
    return suppression.get("kind") == "nosec" and not rules or any(rule in rules for rule in rule_ids)


def applies(candidate: Any) -> bool:
    """True when the candidate's recorded suppression comment covers it (read-only).

    A candidate stands for its own rule and for the other detectors' rules folded into it
    (``trace["also"]``: the taint engine's finding at a ``subprocess`` call carries bandit's
    B602 at the same call), so ``# nosec B602`` written for bandit covers the merged finding,
    which is the same weakness at the same place.

    Args:
        candidate: A ``shapes.Candidate``.
    """
    also = (candidate.trace or {}).get("also") or []
    return covers(candidate.suppression, [candidate.rule_id, *(str(a.get("rule_id")) for a in also)])

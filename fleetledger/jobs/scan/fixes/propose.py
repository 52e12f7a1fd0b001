"""The offline fixer: a confirmed finding, its trace and its file's bytes -> a proposed patch
(a unified diff) or the reason no safe rewrite is known.

Nothing here reads the disk or the clock: the worker hands in the bytes it read in the sandbox,
and the result is a ``Proposal`` recorded in the ledger.
"""

from __future__ import annotations

import ast
import hashlib
import io
import tokenize
from dataclasses import dataclass, field
from typing import Any

from ..shapes import Candidate
from ..taint import DETECTOR_KINDS
from .rewrites import REWRITES, NoRewrite, Site
from .text import Source, unified_diff

OFFLINE_AUTHOR = "rule"


@dataclass(frozen=True, kw_only=True)
class Proposal:
    """A patch proposed for one finding, or why none is.

    Attributes:
        finding: The finding's candidate id.
        path: The file, relative to the scanned root.
        base_sha256: SHA-256 of the file's bytes the patch was made against.
        encoding: The file's source encoding (the diff is text in it).
        author: Who wrote it: ``"rule:<rewrite>"`` for the offline fixer, ``"model:<spec>"``.
        rewrite: The rewrite's name (``yaml-safe-load``), or None.
        rationale: Why the patch looks like it does (or why there is none).
        diff: The unified diff, or None when no safe rewrite is known.
        expected: Detector rules a re-scan may report on the new code as the rewrite's known
            residue (``Change.expected``).
    """

    finding: str
    path: str
    base_sha256: str
    encoding: str = "utf-8"
    author: str
    rewrite: str | None = None
    rationale: str
    diff: str | None = None
    expected: tuple[str, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        """Returns the proposal as a JSON-ready dict (read-only)."""
        return {"finding": self.finding, "path": self.path, "base_sha256": self.base_sha256, "encoding": self.encoding,
                "author": self.author, "rewrite": self.rewrite, "rationale": self.rationale, "diff": self.diff,
                "expected": list(self.expected)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Proposal":
        """Builds a proposal from ``to_json()`` output (unknown keys ignored)."""
        return cls(finding=data["finding"], path=data["path"], base_sha256=data["base_sha256"],
                   encoding=data.get("encoding", "utf-8"), author=data["author"], rewrite=data.get("rewrite"),
                   rationale=data["rationale"], diff=data.get("diff"), expected=tuple(data.get("expected", ())))


def kind_of(candidate: Candidate) -> str | None:
    """The weakness kind of a finding: its engine kind (``FLT-sql`` -> ``sql``), or the kind
    its detector rule reports (``DETECTOR_KINDS``); None when unknown."""
    if candidate.rule_id.startswith(("FLT-", "FLC-")):
        kind = candidate.rule_id[4:]
        if kind == "secret" and _trace(candidate).get("source", {}).get("channel") == "random":
            return "random"
        return kind
    return DETECTOR_KINDS.get(candidate.rule_id)


def _trace(candidate: Candidate) -> dict[str, Any]:
    traces = (candidate.trace or {}).get("traces") or [{}]
    return traces[0]


def site_of(candidate: Candidate) -> Site:
    """Where the rewrite acts for a finding: the random call at the trace's source for a
    secret made from a random number, else the sink of its first trace, the site of its
    check, or its own position."""
    kind = kind_of(candidate) or ""
    trace = _trace(candidate)
    if kind == "random" and trace.get("source"):
        src = trace["source"]
        return Site(kind=kind, api=None, role="", line=src["line"], col=src["col"], source=src)
    if trace.get("sink"):
        sink = trace["sink"]
        return Site(kind=kind, api=sink.get("api"), role=sink.get("role", ""), line=sink["line"], col=sink["col"],
                    end_line=sink.get("end_line"), end_col=sink.get("end_col"), source=trace.get("source"))
    check = (candidate.trace or {}).get("check")
    if check and check.get("site"):
        s = check["site"]
        return Site(kind=kind, api=None, role="", line=s["line"], col=s["col"], end_line=s.get("end_line"),
                    end_col=s.get("end_col"))
    return Site(kind=kind, api=None, role="", line=candidate.line, col=candidate.col)


def decode(data: bytes) -> tuple[str, str]:
    """Returns ``(text, encoding)`` of a Python file's bytes (PEP 263 cookie or BOM, else UTF-8).

    Raises:
        SyntaxError, UnicodeDecodeError, LookupError: the bytes cannot be decoded.
    """
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    text = data.decode(encoding)
    if encoding == "utf-8-sig":
        text = text.removeprefix("\ufeff")
    return text, encoding


def encode(text: str, encoding: str) -> bytes:
    """The inverse of ``decode`` (a BOM is written back for ``utf-8-sig``)."""
    return text.encode(encoding)


def propose(candidate: Candidate, data: bytes) -> Proposal:
    """Proposes a patch for a confirmed finding from the file it is in.

    Args:
        candidate: The finding's candidate (its trace decides the rewrite and where it acts).
        data: The file's bytes as the worker read them.

    Returns:
        A ``Proposal`` with a diff, or with ``diff=None`` and the reason in ``rationale``.
    """
    sha = hashlib.sha256(data).hexdigest()

    def none(reason: str, rewrite: str | None = None) -> Proposal:
        return Proposal(finding=candidate.id, path=candidate.path, base_sha256=sha, author=OFFLINE_AUTHOR,
                        rewrite=rewrite, rationale=f"no safe rewrite known: {reason}")

    site = site_of(candidate)
    rewrite = REWRITES.get(site.kind)
    if rewrite is None:
        return none(f"no rewrite for {site.kind or candidate.rule_id} findings is known to keep the code's behaviour")
    evidence = candidate.evidence or {}
    if evidence.get("state") in ("constant", "sanitised"):
        return none(f"the value reaching the call is {evidence['state']}: nothing from outside reaches it")
    try:
        text, encoding = decode(data)
        src = Source(text)
    except (SyntaxError, UnicodeDecodeError, LookupError, ValueError) as exc:
        return none(f"the file does not parse ({type(exc).__name__}: {exc})")
    if any(line.endswith("\r") for line in src.lines):  # a diff's lines end in \n: it cannot carry these
        return none("the file ends lines with a lone carriage return (classic Mac OS), which a unified diff "
                    "cannot carry; convert its line endings to patch it")
    node = find_node(src, site)
    if node is None:
        return none(f"no call at line {site.line}, column {site.col + 1} where the trace points (the file changed?)")
    try:
        change = rewrite(src, node, site)  # type: ignore[operator]
        edits = list(change.edits)
        for module in change.imports:
            edit = src.import_edit(module)
            if edit is not None:
                edits.append(edit)
        after = src.apply(edits)
    except NoRewrite as exc:
        return none(str(exc), rewrite=getattr(rewrite, "__name__", None))
    return Proposal(finding=candidate.id, path=candidate.path, base_sha256=sha, encoding=encoding,
                    author=f"{OFFLINE_AUTHOR}:{change.name}", rewrite=change.name, rationale=change.rationale,
                    diff=unified_diff(candidate.path, text, after), expected=change.expected)


def find_node(src: Source, site: Site) -> ast.AST | None:
    """The syntax node the site names: among the expressions starting at its line and
    (character) column, the one ending where the site ends when it says so, else the smallest
    call (a detector flags the call itself, not a method called on its result); a call before
    any other expression, and only a call unless the weakness is markup (``xss``)."""
    if site.line > len(src.lines):
        return None
    start = src.char_offset(site.line, site.col)
    end = (src.char_offset(site.end_line, site.end_col)
           if site.end_line and site.end_col is not None and site.end_line <= len(src.lines) else None)
    found: list[tuple[tuple[int, int, int], ast.AST]] = []
    for node in ast.walk(src.tree):
        if not isinstance(node, ast.expr):
            continue
        a, b = src.span(node)
        if a != start or (site.kind != "xss" and not isinstance(node, ast.Call)):
            continue
        named = site.api is None or not isinstance(node, ast.Call) or \
            _last(node.func) == site.api.rsplit(".", 1)[-1]
        found.append(((0 if end is None or b == end else 1, 0 if named else 1, 0 if isinstance(node, ast.Call) else 1,
                       b - a), node))
    if not found and site.kind == "sql":  # bandit's B608 flags the SQL text, not the call that runs it
        inner = {id(n) for n in ast.walk(src.tree) if isinstance(n, ast.expr) and src.span(n)[0] == start}
        calls = [n for n in ast.walk(src.tree) if isinstance(n, ast.Call) and n.args and id(n.args[0]) in inner]
        return calls[-1] if calls else None
    if not found:
        return None
    found.sort(key=lambda item: item[0])
    return found[0][1]


def _last(func: ast.expr) -> str | None:
    """The called name's last part (``execute`` of ``db.cursor().execute``)."""
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None

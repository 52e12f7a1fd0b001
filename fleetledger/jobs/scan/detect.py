"""The detect step of the scan job, for one file: what bandit and fleetledger's own detectors
flag in it, at the parser's positions.

``detect_file`` reads the file once, decodes and parses it the way CPython does (``source``),
runs bandit through its Python API on exactly that text, then fleetledger's detectors
(``detectors``) on the same tree, and turns each issue into a ``Candidate``. A fleetledger hit
that a bandit issue of the same CWE already marks (inside the hit's call or query expression)
is dropped, so one weakness gives one candidate. A file that cannot be analysed is reported as
skipped with a one-line reason; nothing about a file's content makes ``detect_file`` raise, and
it never writes anywhere.

Bandit is driven through ``BanditManager`` (its config, test set and metrics) and
``BanditNodeVisitor`` on text already decoded and parsed here, rather than through
``BanditManager.run_tests``, which re-reads the file by name and decodes it its own way. A
manager is built per file: that costs about 0.05 ms (the plugins are loaded once, at import),
nothing next to the visit itself, and keeps no state between files.

``# nosec`` comments are not honoured: the scan reviews code it does not own, and a suppression
comment is a claim for the investigate step to weigh, not a reason to drop a candidate unseen.
"""

from __future__ import annotations

import ast
import errno
import hashlib
import importlib.metadata
import io
import logging
import os
import signal
import stat
import sys
import threading
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from . import detectors, source
from .shapes import Candidate, FileReport, candidate_id

_formatwarning = warnings.formatwarning
with warnings.catch_warnings():
    # Importing bandit loads its plugins through stevedore, which warns (DeprecationWarning);
    # bandit's tester also replaces warnings.formatwarning process-wide, put back below.
    warnings.simplefilter("ignore")
    from bandit.core import config as b_config
    from bandit.core import extension_loader as b_extensions
    from bandit.core import manager as b_manager
    from bandit.core import node_visitor as b_node_visitor
    from bandit.core import tester as b_tester
warnings.formatwarning = _formatwarning
# Bandit logs a debug line per node and a traceback per failing check; none of it is for the
# worker's log (failing checks become FileReport.internal_errors).
logging.getLogger("bandit").setLevel(logging.CRITICAL + 1)

#: Identity of the detect step's behaviour, part of each detect step's input hash so that a
#: replay never reuses a report made by other code. What a file yields depends on this module
#: (bump the leading number when its logic or default limits change), on bandit's version and
#: on the running Python's parser (a 3.12 file is skipped on 3.11, scanned on 3.12).
DETECT_VERSION = (
    f"detect 2; bandit {importlib.metadata.version('bandit')}; "
    f"python {sys.version_info.major}.{sys.version_info.minor}"
)

_T = TypeVar("_T")
_READ_CHUNK_BYTES = 1024 * 1024
_EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()
_BINARY_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "PNG image"),
    (b"GIF87a", "GIF image"),
    (b"GIF89a", "GIF image"),
    (b"\xff\xd8\xff", "JPEG image"),
    (b"PK\x03\x04", "ZIP archive"),
    (b"\x1f\x8b", "gzip data"),
    (b"\x7fELF", "ELF executable"),
    (b"%PDF-", "PDF document"),
)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_MODULE_SCOPE = "<module>"
# Lines of context a snippet shows around the flagged lines (bandit shows the same).
_SNIPPET_CONTEXT_LINES = 1


@dataclass(frozen=True, kw_only=True)
class DetectLimits:
    """Bounds on the work ``detect_file`` does for one file.

    Attributes:
        max_bytes: Larger files are skipped for size. 2 MiB: real modules above 1 MiB exist
            (generated code, big test data) and bandit reads a 1.2 MB one in seconds, so they
            are scanned; minified bundles and data dumps (tens of MB) are skipped; a
            pathological file under the limit is still bounded by ``timeout_s``.
        timeout_s: Wall-clock budget for decoding, parsing and bandit, per file. 20 s: normal
            files take well under 1 s; bandit is quadratic on some huge literals (a 50,000-key
            dict takes about 10 s) and the budget caps that. Enforced only when ``detect_file``
            runs in the main thread of a POSIX process (it uses ``SIGALRM``); elsewhere there is
            no time limit.
        max_snippet_chars: Longest ``Candidate.snippet`` kept. A snippet is the flagged lines
            with one line of context either side, as bandit shows them; longer ones (a flagged
            1 MB line, a whole flagged function) are cut and end in ``"…"``.

    Raises:
        ValueError: a limit is zero or negative (a configuration mistake).
    """

    max_bytes: int = 2 * 1024 * 1024
    timeout_s: float = 20.0
    max_snippet_chars: int = 2000

    def __post_init__(self) -> None:
        if self.max_bytes <= 0 or self.timeout_s <= 0 or self.max_snippet_chars <= 0:
            raise ValueError(f"every limit must be positive: {self!r}")


def detect_file(root: Path, relpath: str, *, limits: DetectLimits | None = None) -> FileReport:
    """Runs the detectors on one file and reports what they flagged, or why it was skipped.

    Skip reasons: ``"exceeds size limit (N bytes > M)"``, ``"binary content (PNG image)"``,
    ``"undecodable: ..."``, ``"NUL byte at line N"``, ``"syntax error at line N: msg"``,
    ``"nesting too deep"``, ``"needs a newer Python"``, ``"timeout after N s"``, and for paths
    that are not plain files inside ``root``: ``"symbolic link (not followed)"``, ``"outside
    the scanned root"``, ``"not a regular file"``, ``"unreadable: <strerror>"``.

    The time budget uses ``SIGALRM`` and so applies only in the main thread; a ``SIGALRM``
    timer already running (e.g. pytest-timeout's) is suspended meanwhile and re-armed after,
    so it fires late by at most the time spent here. Warnings raised while parsing (invalid
    escape sequences...) are silenced; thread-safety is that of ``warnings.catch_warnings``.

    Args:
        root: The scanned root folder.
        relpath: The file's path relative to ``root``, with forward slashes; reported as is.
        limits: Size, time and snippet bounds; ``DetectLimits()`` when omitted.

    Returns:
        A ``FileReport``: ``status="scanned"`` with candidates sorted by position, decoding
        warnings and one ``internal_errors`` line per check (bandit's or fleetledger's) that
        raised; or ``status="skipped"`` with the reason and no candidates.
    """
    limits = limits or DetectLimits()
    content = _read(Path(root), relpath, limits.max_bytes)
    content_data = content.data
    if content_data is None:
        return _report(relpath, content, status="skipped", reason=content.problem)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return _within_time_budget(
                limits.timeout_s, lambda: _analyse(relpath, content, content_data, limits)
            )
    except _TimeBudgetExceeded:
        reason = f"timeout after {limits.timeout_s:g} s"
        return _report(relpath, content, status="skipped", reason=reason)


@dataclass(frozen=True, kw_only=True)
class _Content:
    path: Path
    sha256: str
    size_bytes: int
    data: bytes | None  # None when the file is not analysed; then problem says why
    problem: str | None = None


def _report(relpath: str, content: _Content, **fields: Any) -> FileReport:
    return FileReport(path=relpath, sha256=content.sha256, size_bytes=content.size_bytes, **fields)


def _read(root: Path, relpath: str, max_bytes: int) -> _Content:
    """Reads the file once, hashing all of it but keeping its bytes only up to ``max_bytes``."""
    path = root / relpath

    def unread(problem: str) -> _Content:
        return _Content(path=path, sha256=_EMPTY_SHA256, size_bytes=0, data=None, problem=problem)

    real_root = os.path.realpath(root)
    if os.path.commonpath([real_root, os.path.realpath(path)]) != real_root:
        return unread("outside the scanned root")
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError as error:
        if error.errno == errno.ELOOP:
            return unread("symbolic link (not followed)")
        return unread(f"unreadable: {error.strerror}")
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return unread("not a regular file")
    with open(fd, "rb") as stream:
        digest = hashlib.sha256()
        kept: list[bytes] = []
        size = 0
        try:
            while chunk := stream.read(_READ_CHUNK_BYTES):
                digest.update(chunk)
                size += len(chunk)
                if size <= max_bytes:
                    kept.append(chunk)
        except OSError as error:
            return unread(f"unreadable: {error.strerror}")
    if size > max_bytes:
        return _Content(
            path=path, sha256=digest.hexdigest(), size_bytes=size, data=None,
            problem=f"exceeds size limit ({size} bytes > {max_bytes})",
        )
    return _Content(path=path, sha256=digest.hexdigest(), size_bytes=size, data=b"".join(kept))


class _TimeBudgetExceeded(BaseException):
    """Raised by SIGALRM inside a file's analysis. A BaseException so that bandit's per-check
    ``except Exception`` cannot swallow it."""


def _within_time_budget(timeout_s: float, work: Callable[[], _T]) -> _T:
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        return work()

    def expire(signum: int, frame: object) -> None:
        raise _TimeBudgetExceeded

    started_s = time.monotonic()
    previous_handler = signal.signal(signal.SIGALRM, expire)
    previous_delay_s, previous_interval_s = 0.0, 0.0
    try:
        previous_delay_s, previous_interval_s = signal.setitimer(signal.ITIMER_REAL, timeout_s)
        try:
            return work()
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    finally:
        signal.signal(signal.SIGALRM, signal.SIG_DFL if previous_handler is None else previous_handler)
        if previous_delay_s:
            remaining_s = previous_delay_s - (time.monotonic() - started_s)
            signal.setitimer(signal.ITIMER_REAL, max(remaining_s, 1e-6), previous_interval_s)


def _analyse(relpath: str, content: _Content, data: bytes, limits: DetectLimits) -> FileReport:
    def skipped(reason: str, warnings: tuple[str, ...] = ()) -> FileReport:
        return _report(relpath, content, status="skipped", reason=reason, warnings=warnings)

    for magic, kind in _BINARY_MAGIC:
        if data.startswith(magic):
            return skipped(f"binary content ({kind})")
    try:
        decoded = source.decode_source(data)
    except source.UndecodableSourceError as error:
        return skipped(f"undecodable: {error}")
    nul = decoded.text.find("\0")
    if nul >= 0:
        line, _ = source.position_of_offset(decoded.text, nul)
        return skipped(f"NUL byte at line {line}", decoded.warnings)
    try:
        tree = source.parse_source(decoded.text)
    except source.UnparsableSourceError as error:
        return skipped(str(error), decoded.warnings + error.notes)
    try:
        tester = _run_bandit(content.path, data, decoded)
    except RecursionError:
        return skipped("nesting too deep", decoded.warnings)
    except Exception as error:  # a bandit bug on odd input: skip the file, keep the worker
        return skipped(f"bandit failed: {type(error).__name__}: {error}", decoded.warnings)
    hits, own_errors = detectors.detect(tree)
    by_bandit = [(line, issue.col_offset, int(issue.cwe.id) or None) for issue, line in tester.found if line]
    hits = detectors.unflagged(hits, by_bandit)
    return _report(
        relpath, content, status="scanned", warnings=decoded.warnings,
        candidates=_candidates(relpath, decoded.text, tree, tester.found, hits, limits.max_snippet_chars),
        internal_errors=tester.error_lines() + tuple(own_errors),
    )


class _RecordingTester(b_tester.BanditTester):
    """Bandit's per-node check runner, keeping two things bandit's own drops: the node each
    issue was raised on (a check may move the issue's line to an argument but leaves the
    column at the node's), and check failures (bandit only logs them)."""

    def __init__(self, testset: Any, metrics: Any) -> None:
        super().__init__(testset, False, {}, metrics)
        self.found: list[tuple[Any, int]] = []  # (bandit Issue, line of the node it was raised on)
        self._failures: dict[str, tuple[str, int]] = {}  # check name -> (first failure, count)

    def run_tests(self, raw_context: dict[str, Any], checktype: str) -> Any:
        first = len(self.results)
        scores = super().run_tests(raw_context, checktype)
        self.found.extend((issue, raw_context.get("lineno", 0)) for issue in self.results[first:])
        return scores

    def report_error(self, test: str, context: Any, error: Exception) -> None:  # type: ignore[override]
        if isinstance(error, RecursionError):
            raise error  # The file nests too deep for bandit; skip it rather than half-check it.
        first, count = self._failures.get(test, (None, 0))
        if first is None:
            line = getattr(context.node, "lineno", None)
            first = f"raised {type(error).__name__}: {error}" + (f" at line {line}" if line else "")
        self._failures[test] = (first, count + 1)

    def error_lines(self) -> tuple[str, ...]:
        ids = {check.__name__: check._test_id for checks in self.testset.tests.values() for check in checks}
        return tuple(
            f"{ids.get(name, '?')} {name} {first}" + (f" ({count} times)" if count > 1 else "")
            for name, (first, count) in sorted(self._failures.items())
        )


def _run_bandit(path: Path, data: bytes, decoded: source.DecodedSource) -> _RecordingTester:
    """Runs every bandit check on the decoded text.

    Raises:
        RecursionError: the syntax tree nests deeper than bandit's recursive visitor can go.
    """
    manager = b_manager.BanditManager(b_config.BanditConfig(), "file")
    fname = str(path)
    manager.metrics.begin(fname)
    # Whole-file checks (B613) re-read and re-decode file_data themselves: give them bytes that
    # decode to the text validated here (the file's own, unless bad bytes were replaced).
    if decoded.warnings:
        data = decoded.text.encode(decoded.encoding, "replace")
    file_data = io.BytesIO(data)
    visitor = b_node_visitor.BanditNodeVisitor(
        fname, file_data, manager.b_ma, manager.b_ts, False, {}, manager.metrics
    )
    visitor.tester = tester = _RecordingTester(manager.b_ts, manager.metrics)
    visitor.process(decoded.text)
    return tester


def _candidates(
    relpath: str, text: str, tree: ast.Module, found: list[tuple[Any, int]], hits: list[detectors.Hit],
    max_snippet_chars: int,
) -> tuple[Candidate, ...]:
    lines = source.split_lines(text)
    last_line = len(lines) - (lines[-1] == "")  # text ending in a line break has no line after it
    scopes = _scopes_at(
        tree,
        {(node_line, issue.col_offset) for issue, node_line in found if node_line}
        | {(hit.node.lineno, hit.node.col_offset) for hit in hits},
    )

    def snippet(line: int, end_line: int) -> str:
        first = max(line - _SNIPPET_CONTEXT_LINES, 1)
        shown = "\n".join(lines[first - 1 : min(end_line + _SNIPPET_CONTEXT_LINES, last_line)])
        return shown if len(shown) <= max_snippet_chars else shown[: max_snippet_chars - 1] + "…"

    candidates: dict[str, Candidate] = {}
    for issue, node_line in found:
        if node_line:
            line = node_line
            col = source.char_column(lines[line - 1], issue.col_offset)
            end_line = max(line, issue.lineno, *issue.linerange)
            scope = scopes.get((line, issue.col_offset), _MODULE_SCOPE)
        else:
            line, col = _whole_file_check_position(text, issue.lineno, issue.col_offset)
            end_line, scope = line, _MODULE_SCOPE
        blacklisted = b_extensions.MANAGER.blacklist_by_id.get(issue.test_id)
        candidate = Candidate(
            id=candidate_id(relpath, line, col, issue.test_id),
            path=relpath,
            line=line,
            col=col,
            end_line=end_line,
            rule_id=issue.test_id,
            rule_name=blacklisted["name"] if blacklisted else issue.test,
            detector="bandit",
            cwe=int(issue.cwe.id) or None,
            detector_severity=issue.severity,
            detector_confidence=issue.confidence,
            message=issue.text,
            snippet=snippet(line, end_line),
            scope=scope,
        )
        candidates.setdefault(candidate.id, candidate)
    for hit in hits:
        line, end_line = hit.node.lineno, hit.node.end_lineno or hit.node.lineno
        col = source.char_column(lines[line - 1], hit.node.col_offset)
        candidate = Candidate(
            id=candidate_id(relpath, line, col, hit.rule.rule_id),
            path=relpath,
            line=line,
            col=col,
            end_line=end_line,
            rule_id=hit.rule.rule_id,
            rule_name=hit.rule.name,
            detector=detectors.DETECTOR,
            cwe=hit.rule.cwe,
            detector_severity=hit.rule.severity,
            detector_confidence=hit.rule.confidence,
            message=hit.message,
            snippet=snippet(line, end_line),
            scope=scopes.get((line, hit.node.col_offset), _MODULE_SCOPE),
        )
        candidates.setdefault(candidate.id, candidate)
    return tuple(sorted(candidates.values(), key=lambda c: (c.line, c.col, c.rule_id)))


def _whole_file_check_position(text: str, lineno: int, column: int) -> tuple[int, int]:
    """Maps a whole-file check's position to the parser's line and 0-based character column.

    Bandit's one whole-file check (B613, bidirectional characters) numbers lines with
    ``str.splitlines()`` and gives a 1-based character column.
    """
    offset = sum(len(line) for line in text.splitlines(keepends=True)[: max(lineno - 1, 0)])
    return source.position_of_offset(text, min(offset + max(column - 1, 0), len(text)))


def _scopes_at(tree: ast.Module, wanted: set[tuple[int, int]]) -> dict[tuple[int, int], str]:
    """Maps node positions ``(lineno, col_offset)`` to the qualified name of their scope.

    The scope of a node is the innermost function or class whose *body* holds it (decorators,
    defaults and base classes belong to the outer scope); a def or class node is in its own
    scope. Walks the tree iteratively: a tree deep enough to overflow a recursive walk is still
    walked.
    """
    found: dict[tuple[int, int], str] = {}
    stack: list[tuple[ast.AST, str]] = [(tree, "")]
    while stack:
        node, scope = stack.pop()
        inner = scope
        if isinstance(node, _SCOPES):
            inner = f"{scope}.{node.name}" if scope else node.name
        position = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
        if position in wanted:
            found.setdefault(position, inner or _MODULE_SCOPE)
        for field, value in ast.iter_fields(node):
            child_scope = inner if field == "body" else scope
            for child in value if isinstance(value, list) else [value]:
                if isinstance(child, ast.AST):
                    stack.append((child, child_scope))
    return found

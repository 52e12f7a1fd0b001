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

Every bound on a file's work is counted, never timed, and nothing is interrupted by a signal (a
budget raised from a ``SIGALRM`` handler inside the parser or bandit corrupted the interpreter:
``SystemError: AST constructor recursion depth mismatch`` in a later file). The file's size is
checked by ``fstat`` before any read (``max_bytes``); decoding and parsing are linear in it and
their nesting is bounded by the parsers (``"nesting too deep"``); bandit runs only when its
work, counted on the tree beforehand (``bandit_work``), is within ``BANDIT_WORK_UNITS``; the
taint engine stops at its own step budget (``engine.WORK_UNITS``); a report keeps at most
``MAX_CANDIDATES_PER_FILE`` candidates. Each cut is in the report (``detectors_not_run``,
``not_analysed``), and a count gives the same cut on a slow machine as on a fast one, which
replay and resume rely on.

``# nosec`` / ``# noqa: B...`` comments never drop a candidate here: the comment on a candidate's
lines is recorded on it (``anchors``, ``Candidate.suppression``) with the hash of its code context
(``Candidate.context_hash``, for fingerprints), and the export decides (``--honour-nosec``, off by
default: the scan reviews code it does not own, and a suppression is a claim to weigh).
"""

from __future__ import annotations

import ast
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ...analysis import context, engine, parser
from ...analysis.facts import CHANNEL_RANK
from . import anchors, detectors, scopes, source, taint
from .bandit_runner import (BANDIT_NODE_UNITS, BANDIT_WORK_UNITS, b_extensions,  # noqa: F401 - importable from here
                            bandit_cwe, bandit_work, run_bandit)
from .detect_version import ENGINE_VERSION, detect_version  # noqa: F401 - importable from here
from .modules import Content, RepositoryModules, read_file
from .plan import MAX_SOURCE_BYTES
from .shapes import Candidate, FileReport, candidate_id

# The identity of this module's behaviour (bump its leading number when the logic or default
# limits here change) is ``detect_version.detect_version()``.
MAX_CANDIDATES_PER_FILE = 200
"""Candidates a file's report keeps; the rest are counted in its ``not_analysed`` notes. Equal to
the engine's ``MAX_FLOWS``: a real module rarely has more than a few dozen, and one with 2,000
sinks of one value (a hostile file) took 7 minutes of judging and a 26 MB ledger. The kept ones
are the most telling: flows of outside data first (the network's before a caller's parameter),
then by the detector's severity and confidence, then by position."""
_SEVERITY_RANK = {"HIGH": 0, "MEDIUM": 1, "LOW": 2}

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
# Lines of context a snippet shows around the flagged lines (bandit shows the same).
_SNIPPET_CONTEXT_LINES = 1


@dataclass(frozen=True, kw_only=True)
class DetectLimits:
    """Bounds on the work ``detect_file`` does for one file.

    Attributes:
        max_bytes: Larger files are skipped for size, by ``fstat`` before any read
            (``plan.MAX_SOURCE_BYTES``, 2 MiB: real modules above 1 MiB exist and bandit reads a
            1.2 MB one in seconds; minified bundles and data dumps, tens of MB, are skipped).
        bandit_work_units: Bandit's budget (``BANDIT_WORK_UNITS``), counted before it runs.
        max_candidates: Candidates kept per file (``MAX_CANDIDATES_PER_FILE``).
        max_snippet_chars: Longest ``Candidate.snippet`` kept. A snippet is the flagged lines
            with one line of context either side, as bandit shows them; longer ones (a flagged
            1 MB line, a whole flagged function) are cut and end in ``"…"``.

    Raises:
        ValueError: a limit is zero or negative (a configuration mistake).
    """

    max_bytes: int = MAX_SOURCE_BYTES
    bandit_work_units: int = BANDIT_WORK_UNITS
    max_candidates: int = MAX_CANDIDATES_PER_FILE
    max_snippet_chars: int = 2000

    def __post_init__(self) -> None:
        if min(self.max_bytes, self.bandit_work_units, self.max_candidates, self.max_snippet_chars) <= 0:
            raise ValueError(f"every limit must be positive: {self!r}")


def detect_file(root: Path, relpath: str, *, limits: DetectLimits | None = None,
                readable: Mapping[str, str] | None = None) -> FileReport:
    """Runs the detectors and the taint engine on one file and reports what they flagged, or
    why it was skipped.

    Skip reasons: ``"exceeds size limit (N bytes > M)"``, ``"binary content (PNG image)"``,
    ``"undecodable: ..."``, ``"NUL byte at line N"``, ``"syntax error at line N: msg"``,
    ``"nesting too deep"``, and for paths that are not plain files
    inside ``root``: ``"symbolic link (not followed)"``, ``"outside the scanned root"``, ``"not a
    regular file"``, ``"unreadable: <strerror>"``. A file in syntax newer than the running
    Python is parsed by the version-independent parser and analysed; bandit, which needs the
    running interpreter's parser, is then listed in ``detectors_not_run`` with the reason.

    Every bound is counted, never timed (the module docstring says which), so a file gives the
    same report on any machine; no signal is used. Warnings raised while parsing (invalid
    escape sequences...) are silenced; thread-safety is that of ``warnings.catch_warnings``.

    Args:
        root: The scanned root folder.
        relpath: The file's path relative to ``root``, with forward slashes; reported as is.
        limits: Size, work, candidate and snippet bounds; ``DetectLimits()`` when omitted.
        readable: Other files of the repository the taint engine may read to follow imports:
            path -> the SHA-256 the run planned (a file whose content differs is not used).
            Pass the same mapping for every file of a task: the engine then shares function
            summaries between them.

    Returns:
        A ``FileReport``: ``status="scanned"`` with candidates sorted by position, decoding
        warnings, one ``internal_errors`` line per check (bandit's or fleetledger's) that
        raised, and a ``not_analysed`` note for what a budget or the candidate cap cut; or ``status="skipped"`` with the reason and no candidates.
    """
    limits = limits or DetectLimits()
    content = read_file(Path(root), relpath, limits.max_bytes)
    content_data = content.data
    if content_data is None:
        return _report(relpath, content, status="skipped", reason=content.problem)
    modules = RepositoryModules(Path(root), readable or {}, limits.max_bytes, own=relpath)
    shas = readable if readable is not None and readable.get(relpath) == content.sha256 else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _analyse(relpath, content, content_data, limits, modules, shas)


def _report(relpath: str, content: Content, **fields: Any) -> FileReport:
    return FileReport(path=relpath, sha256=content.sha256, size_bytes=content.size_bytes, **fields)


def _analyse(relpath: str, content: Content, data: bytes, limits: DetectLimits, modules: RepositoryModules,
             shas: Mapping[str, str] | None) -> FileReport:
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
        parsed = parser.parse_module(decoded.text)
    except parser.ParseError as error:
        # Case 08 A4 names one reason for every way a file can nest too deep for a parser.
        return skipped("nesting too deep" if "nesting too deep" in str(error) else str(error), decoded.warnings)
    tree = parsed.module
    not_run: list[str] = []
    found: list[tuple[Any, int]] = []
    bandit_errors: tuple[str, ...] = ()
    # Bandit parses with the running Python; here it visits the tree detect parsed, which for a
    # file in newer syntax is the version-independent parser's (the same node classes, with
    # stand-ins for what this Python lacks, whose contents bandit still visits).
    bandit_units, heaviest = bandit_work(tree)
    try:
        if bandit_units > limits.bandit_work_units:
            not_run.append(f"bandit: not run: the file's estimated work for bandit ({bandit_units} units) is over its "
                           f"budget of {limits.bandit_work_units} ({heaviest}); the other detectors ran")
        else:
            tester = run_bandit(content.path, data, decoded, tree)
            found, bandit_errors = tester.found, tester.error_lines()
    except RecursionError:
        not_run.append("bandit: the file nests too deep for bandit's recursive visitor")
    except Exception as error:  # a bandit bug on odd input: the other detectors still run
        not_run.append(f"bandit failed: {type(error).__name__}: {error}")
    hits, own_errors = detectors.detect(tree)
    by_bandit = [(line, issue.col_offset, bandit_cwe(issue)) for issue, line in found if line]
    hits = detectors.unflagged(hits, by_bandit)
    lines = source.split_lines(decoded.text)
    detected = _candidates(relpath, decoded.text, tree, found, hits, limits.max_snippet_chars)
    if context.is_test_path(relpath):
        # Test code is not deployed: the analyst dismisses whatever is found there, so the taint
        # engine does not spend its time on it (bandit and the pattern detectors still run).
        analysis = engine.FileAnalysis.nothing()
    else:  # bounded by its own counted budget (engine.WORK_UNITS); it reports what it cut
        analysis = engine.analyse(relpath, tree, paths=modules.paths(), loader=modules,
                                  is_test=context.is_test_path, shas=shas, templates=modules.find_template)
    path_lines = _Lines(modules, relpath, lines)
    produced = taint.flow_candidates(path_lines, analysis.flows, relpath) + taint.misuse_candidates(path_lines, analysis.misuses)
    merged = [_with_snippet(scopes.with_scope(c, tree, relpath, path_lines), path_lines, limits.max_snippet_chars)
              for c in taint.merge(list(detected), produced, analysis, path_lines, relpath)]
    unique: dict[str, Candidate] = {}
    for candidate in merged:
        unique.setdefault(candidate.id, candidate)
    kept, capped = _capped(relpath, list(unique.values()), limits.max_candidates)
    kept = anchors.annotate(kept, path_lines)
    return _report(
        relpath, content, status="scanned", warnings=decoded.warnings,
        candidates=tuple(sorted(kept, key=lambda c: (c.path != relpath, c.path, c.line, c.col, c.rule_id))),
        internal_errors=bandit_errors + tuple(own_errors), parser=parsed.parser, detectors_not_run=tuple(not_run),
        not_analysed=analysis.not_analysed + tuple(modules.problems) + capped, read=analysis.read,
        depends=analysis.depends.to_json(modules.hashes(analysis.depends.files), leave_out=relpath),
    )


def _capped(relpath: str, found: list[Candidate], cap: int) -> tuple[list[Candidate], tuple[str, ...]]:
    """Keeps at most ``cap`` candidates, the most telling first (``MAX_CANDIDATES_PER_FILE``), and
    the note that counts the others (none when nothing is dropped). Deterministic: the order
    does not depend on the order they were found in."""
    if len(found) <= cap:
        return found, ()

    def rank(c: Candidate) -> tuple[Any, ...]:
        traces = (c.trace or {}).get("traces") or []
        origin = CHANNEL_RANK.get(traces[0]["source"].get("channel", ""), 4) if traces else 5
        return (origin, _SEVERITY_RANK.get(c.detector_severity, 3), _SEVERITY_RANK.get(c.detector_confidence, 3),
                c.path != relpath, c.path, c.line, c.col, c.rule_id, c.id)

    ordered = sorted(found, key=rank)
    return ordered[:cap], (f"{relpath}: {len(found) - cap} more candidate(s) not reported (at most {cap} per file, "
                           "flows from outside data first, then by the detector's severity and confidence)",)


class _Lines(dict[str, list[str]]):
    """Path -> lines of the analysed file, and of any other readable module on first use."""

    def __init__(self, modules: RepositoryModules, relpath: str, lines: list[str]) -> None:
        super().__init__({relpath: lines})
        self.modules = modules

    def get(self, path: str, default: Any = None) -> Any:  # type: ignore[override]
        if path not in self:
            self[path] = self.modules.lines_of(path)
        return self[path] or default


def _with_snippet(candidate: Candidate, path_lines: Mapping[str, list[str]], max_chars: int) -> Candidate:
    if candidate.snippet:
        return candidate
    lines = path_lines.get(candidate.path, [])
    last_line = len(lines) - (bool(lines) and lines[-1] == "")
    first = max(candidate.line - _SNIPPET_CONTEXT_LINES, 1)
    shown = "\n".join(lines[first - 1: min(candidate.end_line + _SNIPPET_CONTEXT_LINES, last_line)])
    return replace(candidate, snippet=shown if len(shown) <= max_chars else shown[: max_chars - 1] + "…")


def _candidates(
    relpath: str, text: str, tree: ast.Module, found: list[tuple[Any, int]], hits: list[detectors.Hit],
    max_snippet_chars: int,
) -> tuple[Candidate, ...]:
    lines = source.split_lines(text)
    last_line = len(lines) - (lines[-1] == "")  # text ending in a line break has no line after it
    scope_of = scopes.at(
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
            scope = scope_of.get((line, issue.col_offset), scopes.MODULE)
        else:
            line, col = _whole_file_check_position(text, issue.lineno, issue.col_offset)
            end_line, scope = line, scopes.MODULE
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
            cwe=bandit_cwe(issue),
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
            scope=scope_of.get((line, hit.node.col_offset), scopes.MODULE),
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

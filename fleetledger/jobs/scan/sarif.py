"""SARIF 2.1.0 export of a scan (OASIS Standard, errata 01).

One ``ScanReport`` becomes one SARIF log with exactly one run, whatever number of workers
produced it. Section numbers (§) refer to the SARIF 2.1.0 specification. The output holds no
clock reading except ``invocations[0].startTimeUtc``, so equal reports give equal logs
(Appendix F, deterministic log files).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any
from urllib.parse import quote

from . import codescanning
from .exclusions import MAX_LISTED_PATHS, Exclusion
from .fix_export import sarif_fixes
from .shapes import SEVERITIES, Candidate, FileReport, Finding, Gap, ModelAnswer, ScanReport

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
TOOL_NAME = "fleetledger"
INFORMATION_URI = "https://github.com/fleetledger/fleetledger"
SRCROOT = "SRCROOT"
MAX_RESULTS = 25_000
MAX_LOCATIONS = 10
MAX_EXCLUDED_PATHS = 100
"""Paths of one exclusion rule listed in ``run.properties.exclusions`` (findings.json lists all)."""

LEVELS = {"critical": "error", "high": "error", "medium": "warning", "low": "note", "info": "note"}
# GitHub code scanning reads a rule's "security-severity" (a CVSS-like score) to rank alerts.
_SECURITY_SEVERITY = {"critical": "9.5", "high": "8.0", "medium": "5.5", "low": "3.0", "info": "0.0"}
_RANK = {severity: rank for rank, severity in enumerate(SEVERITIES)}

# Notification descriptors (§3.19.24), referenced by index from each notification (§3.58.2).
_NOTIFICATIONS = (
    ("FL0001", "run-incomplete", "The run stopped before every step finished; results are partial."),
    ("FL0002", "results-truncated", f"More than {MAX_RESULTS} results; the rest are left out of the SARIF file."),
    ("FL0003", "file-skipped", "A file could not be scanned."),
    ("FL0004", "file-warning", "A file was scanned with a non-fatal problem."),
    ("FL0005", "detector-internal-error", "A detector check raised on a file; the other checks still ran."),
    ("FL0006", "detector-not-run", "A detector could not run on a file; the others analysed it."),
    ("FL0007", "analysis-cut-short", "Part of a file's analysis was cut short (a work budget); that part is not analysed."),
    ("FL0008", "repository-exclusion-refused", "The scanned repository's own rules asked to exclude source files from "
                                               "the scan; the policy refused, so they were scanned."),
    ("FL0009", "repository-exclusion-applied", "The scanned repository's own rules left files out of the scan (the "
                                               "policy lets a repository exclude files)."),
    ("FL0010", "policy-exclusion", "The user's policy left files out of the scan."),
    ("FL0011", "candidate-not-judged", "A candidate was not judged to the end (a model step failed or did not run); "
                                       "it is kept as a result with its detector verdict."),
    ("FL0012", "results-trimmed", "Part of the results was left out to stay within GitHub code scanning's ingestion "
                                  "limits (limits.py); findings.md and findings.json keep everything."),
    ("FL0013", "baseline-compared", "The results were compared with a baseline log (baselineState)."),
)
_DETECTOR_SEVERITY = {"HIGH": "high", "MEDIUM": "medium", "LOW": "low"}
_NOTIFICATION_INDEX = {name: index for index, (_, name, _) in enumerate(_NOTIFICATIONS)}


def order_key(finding: Finding) -> tuple[Any, ...]:
    """Returns the export sort key: severity (critical first), then path, line, column, rule.

    The detector and candidate id break the last ties, so the order is total and equal reports
    sort identically whatever order the workers delivered them in. Markdown and JSON use it too.

    Args:
        finding: Any finding.

    Returns:
        A tuple that sorts as described.

    Raises:
        KeyError: the severity is not one of ``shapes.SEVERITIES``.
    """
    c = finding.candidate
    return (_RANK[finding.severity], c.path, c.line, c.col, c.rule_id, c.detector, c.id)


def finding_cwe(finding: Finding) -> int | None:
    """Returns the CWE a finding is reported under.

    The latest word wins: the revalidation's CWE, else the investigation's, else the detector
    rule's. Both model passes read the code; the detector's CWE is a property of its rule.

    Args:
        finding: Any finding.

    Returns:
        The CWE number, or None when nobody named one.
    """
    for cwe in (finding.revalidation.cwe, finding.investigation.cwe, finding.candidate.cwe):
        if cwe is not None:
            return cwe
    return None


def finding_verdict(finding: Finding) -> str:
    """Returns the verdict a finding is reported under: the revalidation's, the last word (a
    finding is reported only when it survived it). Every output format shows this one.

    Args:
        finding: Any finding.

    Returns:
        ``"vulnerable"``, ``"uncertain"`` or another ``ModelAnswer.verdict``.
    """
    return finding.revalidation.verdict


def artifact_uri(path: str) -> str:
    """Returns the relative URI reference of a scanned file, for use with ``uriBaseId`` SRCROOT.

    §3.4.3 and RFC 3986: every byte outside the unreserved set and "/" is percent-encoded from
    UTF-8 (space, ":", "#", "%", non-ASCII...), so the reference is never mistaken for a scheme,
    fragment or escape, and ``urllib.parse.unquote(uri, errors="surrogateescape")`` gives the
    path back. A name that is not valid UTF-8 (Python holds its bytes as surrogate escapes) is
    encoded from its original bytes.

    Args:
        path: The file's path relative to the scanned root, with forward slashes.

    Returns:
        A non-empty relative reference such as ``my%20dir/a%20b.py``.

    Raises:
        ValueError: the path is empty, absolute, or has an empty, "." or ".." segment.
    """
    if not path or path.startswith("/") or any(part in ("", ".", "..") for part in path.split("/")):
        raise ValueError(f"{path!r} is not a normalised path relative to the scanned root")
    return quote(path.encode("utf-8", "surrogateescape"), safe="/")


def root_uri(target: str) -> str:
    """Returns the ``file`` URI of a folder, ending in "/" as §3.14.14 requires
    (``codescanning.root_uri``).

    Raises:
        ValueError: the target is not an absolute path.
    """
    return codescanning.root_uri(target)


def to_sarif(report: ScanReport) -> dict[str, Any]:
    """Builds the SARIF 2.1.0 log of a scan: one run (§3.14), merged across workers.

    Merge rule (case 10 D2): findings at the same path, line and column are one result when
    they share a CWE (``finding_cwe``, not None); without a CWE they merge only if the rule id
    is also the same. Within a merged result the findings are sorted by ``order_key`` and the
    first (the most severe, then the lowest rule id) is the *primary*: it gives the result's
    ``ruleId``/``ruleIndex``, ``level``, message, fingerprint and properties; every finding of
    the group is listed in ``properties.mergedFrom`` and its rule named in the message; their
    distinct regions are the result's locations.

    Other rules: results are sorted by their primary's ``order_key`` and capped at
    ``MAX_RESULTS`` (the cut is recorded in ``run.properties`` and a notification); a result has
    at most ``MAX_LOCATIONS`` locations, the rest go to ``relatedLocations`` (§3.27.22);
    ``level`` follows severity (§3.27.10); locations are relative URIs against ``SRCROOT``
    (§3.4.4, §3.14.14), the repository root, with 1-based regions (§3.30); file-level problems, exclusion rules (what
    the repository's or the policy's rules left out, or tried to) and an incomplete run are
    ``invocations[0].toolExecutionNotifications`` (§3.20.21, §3.58), never results; exclusions
    are also in ``run.properties.exclusions``. Last, ``codescanning.finish`` applies the
    report's ``ExportOptions``: root-relative URIs, ``automationDetails``, stable
    ``partialFingerprints``, ``suppressions``, ``baselineState`` and GitHub's ingestion limits.

    Args:
        report: The scan report.

    Returns:
        The log as a JSON-ready dict; equal reports give equal dicts.

    Raises:
        ValueError: a path is not relative (see ``artifact_uri``) or the target is not absolute.
        UsageError: the baseline cannot be used, or the target is outside the repository root
            (``codescanning.finish``).
    """
    groups = _merged(report.findings)
    kept = groups[:MAX_RESULTS]
    heads = _rule_heads(kept)
    for gap in report.gaps:  # a candidate not judged is a result too, under its detector's verdict
        if all(c.rule_id != gap.candidate.rule_id for c, _ in heads):
            heads.append((gap.candidate, _detector_severity(gap.candidate)))
    rules = [_rule(c, worst) for c, worst in sorted(heads, key=lambda h: h[0].rule_id)]
    rule_index = {rule["id"]: index for index, rule in enumerate(rules)}
    driver = {
        "name": TOOL_NAME,
        "version": report.tool_version,
        "informationUri": INFORMATION_URI,
        "rules": rules,
        "notifications": [
            {"id": ident, "name": name, "shortDescription": {"text": text}} for ident, name, text in _NOTIFICATIONS
        ],
    }
    run = {
        "tool": {"driver": driver},
        "invocations": [_invocation(report, total=len(groups), kept=len(kept))],
        "results": [_result(group, rule_index) for group in kept] + [_gap_result(g, rule_index) for g in report.gaps],
        "columnKind": "unicodeCodePoints",  # §3.14.27: Candidate.col counts characters
        "newlineSequences": ["\r\n", "\r", "\n"],  # the line breaks Python's tokenizer counts
        "properties": {
            "runId": report.run_id,
            "code": list(report.code),
            "complete": report.complete,
            "haltReason": report.halt_reason,
            "dismissed": report.dismissed,
            "filesTotal": len(report.files),
            "filesSkipped": sum(f.status == "skipped" for f in report.files),
            "findingsTotal": len(report.findings),
            "resultsTotal": len(groups),
            "resultsKept": len(kept),
            "resultsTruncated": len(kept) < len(groups),
            "resultsLimit": MAX_RESULTS,
            "notJudged": len(report.gaps),
            "exclusions": [e.to_json(max_paths=MAX_EXCLUDED_PATHS) for e in report.exclusions],
        },
    }
    log = {"$schema": SARIF_SCHEMA_URI, "version": SARIF_VERSION, "runs": [run]}
    codescanning.finish(log, report, _note)
    return log


def _merged(findings: tuple[Finding, ...]) -> list[tuple[Finding, ...]]:
    groups: dict[tuple[Any, ...], list[Finding]] = {}
    for finding in sorted(findings, key=order_key):
        c, cwe = finding.candidate, finding_cwe(finding)
        key = (c.path, c.line, c.col, "cwe", cwe) if cwe is not None else (c.path, c.line, c.col, "rule", c.rule_id)
        groups.setdefault(key, []).append(finding)
    return [tuple(group) for group in groups.values()]


def _rule_heads(groups: list[tuple[Finding, ...]]) -> list[tuple[Candidate, str]]:
    """Returns, per rule id in id order, its first candidate and the worst severity it got."""
    first: dict[str, Candidate] = {}
    worst: dict[str, str] = {}
    for finding in (f for group in groups for f in group):
        rule_id = finding.candidate.rule_id
        first.setdefault(rule_id, finding.candidate)
        if _RANK[finding.severity] < _RANK[worst.get(rule_id, "info")]:
            worst[rule_id] = finding.severity
    return [(first[rule_id], worst.get(rule_id, "info")) for rule_id in sorted(first)]


def _rule(c: Candidate, worst: str) -> dict[str, Any]:
    """Returns the reporting descriptor (§3.49) of a detector rule.

    The rule's CWE is a property and a tag in the ``external/cwe/cwe-N`` form code-scanning
    services read; each result names its own CWE in its properties. No CWE taxonomy (§3.19.3) is
    emitted: 2.1.0 gives no unambiguous way to reference a component of ``run.taxonomies``
    (§3.54.2 looks indexes up in ``tool.extensions``).
    """
    name = c.rule_name or c.rule_id
    rule: dict[str, Any] = {
        "id": c.rule_id,
        "name": name,
        "shortDescription": {"text": name.replace("_", " ")},
        "fullDescription": {"text": f"{c.message or name} ({c.detector} rule {c.rule_id})"},
        "properties": {
            "tags": ["security"] + ([f"external/cwe/cwe-{c.cwe}"] if c.cwe is not None else []),
            "detector": c.detector,
            "cwe": _cwe_id(c.cwe),
            "security-severity": _SECURITY_SEVERITY[worst],
        },
    }
    return rule


def _result(group: tuple[Finding, ...], rule_index: dict[str, int]) -> dict[str, Any]:
    """Returns the result object (§3.27) of one merged group; ``group[0]`` is the primary."""
    primary = group[0]
    c = primary.candidate
    locations = _unique(_location(f.candidate) for f in group)
    result: dict[str, Any] = {
        "ruleId": c.rule_id,
        "ruleIndex": rule_index[c.rule_id],
        "level": LEVELS[primary.severity],
        "message": {"text": _message(group)},
        "locations": locations[:MAX_LOCATIONS],
        "properties": _result_properties(group),
    }
    if len(locations) > MAX_LOCATIONS:
        result["relatedLocations"] = locations[MAX_LOCATIONS:]
    flows = [_code_flow(trace) for trace in (c.trace or {}).get("traces", [])]
    if flows:
        result["codeFlows"] = flows
    fixes = sarif_fixes(group, _artifact)
    if fixes:
        result["fixes"] = fixes
    return result


def _detector_severity(c: Candidate) -> str:
    return _DETECTOR_SEVERITY.get((c.detector_severity or "").upper(), "medium")


def _gap_result(gap: Gap, rule_index: dict[str, int]) -> dict[str, Any]:
    """Returns the result of a candidate not judged to the end: its detector's verdict (level
    from the detector's severity), ``properties.status`` ("not investigated"...) and the reason."""
    c = gap.candidate
    return {
        "ruleId": c.rule_id,
        "ruleIndex": rule_index[c.rule_id],
        "level": LEVELS[_detector_severity(c)],
        "message": {"text": f"{c.message or c.rule_name or c.rule_id} ({gap.status}: {gap.reason})"},
        "locations": [_location(c)],
        "properties": {"candidateId": c.id, "status": gap.status, "reason": gap.reason, "failures": gap.failures, "retry": gap.retry,
                       "cwe": _cwe_id(c.cwe), "detector": c.detector, "detectorSeverity": c.detector_severity,
                       "detectorConfidence": c.detector_confidence, "scope": c.scope},
    }


def _code_flow(trace: dict[str, Any]) -> dict[str, Any]:
    """Returns a code flow (§3.36) for a taint trace: source, each step, sink, in order, each a
    thread flow location (§3.38) whose message says what happened there."""
    source, sink = trace["source"], trace["sink"]
    hops = [(source, f"source: {source['what']}")]
    hops += [(step, step["what"]) for step in trace["steps"]]
    hops.append((sink, f"sink: {sink['what']} ({sink['role']})"))
    locations = []
    for place, text in hops:
        region = {"startLine": max(int(place["line"]), 1), "startColumn": max(int(place["col"]), 0) + 1}
        locations.append({"location": {"physicalLocation": {"artifactLocation": _artifact(place["path"]),
                                                            "region": region},
                                       "message": {"text": text}}})
    return {"message": {"text": f"{source['what']} reaches {sink['what']}"},
            "threadFlows": [{"locations": locations}]}


def _message(group: tuple[Finding, ...]) -> str:
    c = group[0].candidate
    text = c.message or c.rule_name or c.rule_id
    others = sorted({(f.candidate.rule_id, f.candidate.detector) for f in group[1:]} - {(c.rule_id, c.detector)})
    if others:
        text += " Also reported as " + ", ".join(f"{rule} ({detector})" for rule, detector in others) + "."
    return text


def _result_properties(group: tuple[Finding, ...]) -> dict[str, Any]:
    """Returns the result's property bag (§3.8): triage, detector and both model verdicts."""
    primary = group[0]
    c = primary.candidate
    properties: dict[str, Any] = {
        "candidateId": c.id,
        "severity": primary.severity,
        "severityReason": primary.severity_reason,
        "cwe": _cwe_id(finding_cwe(primary)),
        "verdict": finding_verdict(primary),
        "confidence": primary.revalidation.confidence,
        "detector": c.detector,
        "detectorSeverity": c.detector_severity,
        "detectorConfidence": c.detector_confidence,
        "scope": c.scope,
        "investigation": _answer(primary.investigation),
        "revalidation": _answer(primary.revalidation),
    }
    if len(group) > 1:
        properties["mergedFrom"] = [
            {"candidateId": f.candidate.id, "ruleId": f.candidate.rule_id, "detector": f.candidate.detector,
             "severity": f.severity}
            for f in group
        ]
    return properties


def _answer(answer: ModelAnswer) -> dict[str, Any]:
    return {
        "verdict": answer.verdict,
        "confidence": answer.confidence,
        "cwe": _cwe_id(answer.cwe),
        "rationale": answer.rationale,
    }


def _location(c: Candidate) -> dict[str, Any]:
    """Returns the location (§3.28) of a candidate; lines and columns are 1-based (§3.30)."""
    start_line = max(c.line, 1)
    region: dict[str, Any] = {
        "startLine": start_line,
        "startColumn": max(c.col, 0) + 1,
        "endLine": max(c.end_line, start_line),
    }
    if c.snippet:
        region["snippet"] = {"text": c.snippet}
    return {"physicalLocation": {"artifactLocation": _artifact(c.path), "region": region}}


def _artifact(path: str) -> dict[str, str]:
    """Returns an artifactLocation (§3.4): a relative URI resolved against SRCROOT (§3.4.4)."""
    return {"uri": artifact_uri(path), "uriBaseId": SRCROOT}


def _invocation(report: ScanReport, *, total: int, kept: int) -> dict[str, Any]:
    """Returns the single invocation (§3.20) with the run's notifications (§3.20.21, §3.58)."""
    notes = []
    if not report.complete:
        reason = report.halt_reason or "no reason recorded"
        notes.append(_note("run-incomplete", "error", f"The run did not complete ({reason}); results are partial."))
    if kept < total:
        notes.append(_note(
            "results-truncated", "warning",
            f"{total - kept} of {total} results are left out of this file (at most {MAX_RESULTS} per run); "
            "findings.md and findings.json list them all.",
        ))
    notes.extend(_note("candidate-not-judged", "error", f"{g.candidate.path}:{g.candidate.line} {g.candidate.rule_id} "
                       f"{g.status}: {g.reason}", g.candidate.path) for g in report.gaps)
    notes.extend(_exclusion_note(e) for e in report.exclusions)
    for file in sorted(report.files, key=lambda f: f.path):
        notes.extend(_file_notes(file))
    invocation: dict[str, Any] = {"executionSuccessful": report.complete, "toolExecutionNotifications": notes}
    if report.started_utc:
        invocation["startTimeUtc"] = report.started_utc
    return invocation


def _exclusion_note(e: Exclusion) -> dict[str, Any]:
    """Returns the notification of one exclusion rule: what it did, to how many files, the first
    ``MAX_LISTED_PATHS`` named in the text and located."""
    name = ("policy-exclusion" if e.origin == "policy" else
            "repository-exclusion-applied" if e.applied else "repository-exclusion-refused")
    text = e.describe()
    note = _note(name, "note" if e.origin == "policy" else "warning", f"{text[0].upper()}{text[1:]}.")
    note["locations"] = [{"physicalLocation": {"artifactLocation": _artifact(p)}} for p in e.paths[:MAX_LISTED_PATHS]]
    return note


def _file_notes(file: FileReport) -> list[dict[str, Any]]:
    notes = []
    if file.status == "skipped":
        notes.append(_note("file-skipped", "warning", f"Skipped {file.path}: {file.reason or 'no reason recorded'}",
                           file.path))
    notes.extend(_note("file-warning", "warning", f"{file.path}: {w}", file.path) for w in file.warnings)
    notes.extend(_note("detector-internal-error", "error", f"{file.path}: {e}", file.path)
                 for e in file.internal_errors)
    notes.extend(_note("detector-not-run", "warning", f"{file.path}: {d}", file.path) for d in file.detectors_not_run)
    notes.extend(_note("analysis-cut-short", "warning", f"{file.path}: {n}", file.path) for n in file.not_analysed)
    return notes


def _note(name: str, level: str, text: str, path: str | None = None) -> dict[str, Any]:
    index = _NOTIFICATION_INDEX[name]
    note: dict[str, Any] = {
        "level": level,
        "message": {"text": text},
        "descriptor": {"id": _NOTIFICATIONS[index][0], "index": index},
    }
    if path is not None:
        note["locations"] = [{"physicalLocation": {"artifactLocation": _artifact(path)}}]
    return note


def _cwe_id(cwe: int | None) -> str | None:
    return None if cwe is None else f"CWE-{cwe}"


def _unique(items: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    seen: list[dict[str, Any]] = []
    for item in items:
        if item not in seen:
            seen.append(item)
    return seen

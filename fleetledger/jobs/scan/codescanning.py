"""The last pass of the SARIF export: what makes the log one GitHub code scanning keeps.

``sarif.to_sarif`` builds the run from the report, then calls ``finish``, which, per the
report's ``ExportOptions``:

1. makes every ``artifactLocation.uri`` relative to the repository root and points
   ``originalUriBaseIds.SRCROOT`` (§3.14.14) at it, so a scan of ``shop/`` reports
   ``shop/admin.py`` (GitHub resolves URIs against the repository root);
2. sets ``automationDetails.id`` (§3.17.4, §3.14.28) to the category (GitHub's ``category/``
   form), so scans of two folders of one repository do not replace each other's alerts;
3. sets ``partialFingerprints`` (§3.27.17) from the stable fingerprints (``fingerprints``):
   ``primaryLocationLineHash`` and ``fleetledgerFingerprint/v1``;
4. turns recorded ``# nosec`` / ``# noqa: B...`` comments into ``suppressions`` (§3.27.23,
   §3.35: kind ``inSource``) when the options honour them; otherwise the comment is only shown
   in ``properties.sourceSuppression``;
5. compares with a baseline log (``baseline``: ``baselineState``, §3.27.24);
6. checks GitHub's ingestion limits and trims to fit (``limits``), saying what it left out.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Callable
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from ...display import json_text
from . import baseline, fingerprints, limits, nosec
from .export_options import ExportOptions

if TYPE_CHECKING:
    from .shapes import Candidate, ScanReport

Note = Callable[[str, str, str], dict[str, Any]]
"""``sarif._note(name, level, text)``: builds one notification (§3.58)."""


def json_bytes(document: dict[str, Any]) -> bytes:
    """Returns the bytes a report file is written as: compact sorted JSON, non-ASCII text as it
    is except control, bidi and format characters and lone surrogates (JSON escapes,
    ``display.json_text``), UTF-8, one final newline. The limits' gzip size is of these bytes."""
    text = json_text(json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)) + "\n"
    return text.encode("utf-8", "backslashreplace")


def root_uri(path: str) -> str:
    """Returns the ``file`` URI of a folder, ending in "/" as §3.14.14 requires.

    Args:
        path: Absolute path; "." and ".." segments are removed lexically.

    Raises:
        ValueError: the path is not absolute.
    """
    uri = PurePosixPath(posixpath.normpath(path)).as_uri()
    return uri if uri.endswith("/") else uri + "/"


def finish(log: dict[str, Any], report: "ScanReport", note: Note, *, limits_in: limits.Limits | None = None) -> None:
    """Applies steps 1-6 of the module docstring to the log's run, in place.

    Args:
        log: The log ``sarif.to_sarif`` built, with its one run.
        report: The scan report (its ``export`` options; None means the defaults).
        note: Builds a notification for ``invocations[0].toolExecutionNotifications``.
        limits_in: The ingestion limits; None: ``limits.GITHUB`` as it is at the call.

    Raises:
        UsageError: the baseline cannot be read or is not SARIF (``baseline.load``), or the
            scanned folder is not inside the repository root.
    """
    options = report.export or ExportOptions()
    run = log["runs"][0]
    prefix = options.prefix(report.target)
    root = options.repo_root or report.target
    run["originalUriBaseIds"] = {"SRCROOT": {"uri": root_uri(root), "description": {
        "text": "The repository root." if options.repo_root else "The scanned root (no repository root was found)."}}}
    if prefix:
        _rebase(run, quote(prefix.encode("utf-8", "surrogateescape"), safe="/") + "/")
    run["automationDetails"] = {"id": options.automation_id(report.target)}
    run["properties"].update(scannedFolder=prefix or ".", honourNosec=options.honour_nosec)
    by_id = {c.id: c for c in [*(f.candidate for f in report.findings), *(g.candidate for g in report.gaps)]}
    legacy = fingerprints.snippet_context_hashes(by_id.values())
    notes = run["invocations"][0]["toolExecutionNotifications"]
    suppressed = 0
    for result in run["results"]:
        c = by_id[result["properties"]["candidateId"]]
        context = c.context_hash or legacy[c.id]
        result["partialFingerprints"] = {
            fingerprints.LINE_HASH_KEY: context,
            fingerprints.FINGERPRINT_KEY: fingerprints.fingerprint(c.rule_id, f"{prefix}/{c.path}" if prefix else c.path,
                                                                   context, c.trace),
        }
        if c.suppression:
            result["properties"]["sourceSuppression"] = c.suppression
        if options.honour_nosec and nosec.applies(c):
            suppressed += 1
            result["suppressions"] = [{"kind": "inSource", "status": "accepted",
                                       "justification": _justification(c)}]
    run["properties"]["suppressedInSource"] = suppressed
    if options.baseline is not None:
        counts = baseline.compare(run["results"], baseline.load(options.baseline), absent=options.absent_results)
        run["properties"]["baseline"] = {"path": options.baseline, **counts}
        notes.append(note("baseline-compared", "note", f"Compared with the baseline {options.baseline}: "
                          + ", ".join(f"{n} {state}" for state, n in counts.items())
                          + ("" if options.absent_results else " (absent results not included in this file)") + "."))
    trimmed = limits.fit(log, json_bytes, limits_in or limits.GITHUB)
    run["properties"]["trimmed"] = trimmed
    if trimmed:
        notes.append(note("results-trimmed", "warning", "To stay within GitHub code scanning's ingestion limits: "
                          + "; ".join(trimmed) + ". findings.md and findings.json list everything."))


def _justification(c: "Candidate") -> str:
    s = c.suppression or {}
    rules = ", ".join(s.get("rules") or []) or "every rule"
    return f"{s.get('kind')} comment at line {s.get('line')} ({rules}): {s.get('comment')}"


def _rebase(node: Any, prefix: str) -> None:
    """Prefixes the URI of every artifact location against SRCROOT under ``node`` (iterative)."""
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if item.get("uriBaseId") == "SRCROOT" and isinstance(item.get("uri"), str):
                item["uri"] = prefix + item["uri"]
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def candidate_states(run: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Returns, per candidate id of the run's results (merged ones included), what the findings
    report shows of its result: ``suppressed`` (bool) and ``baselineState`` (or None).

    Args:
        run: A finished run (``finish`` applied).
    """
    out: dict[str, dict[str, Any]] = {}
    for result in run["results"]:
        properties = result.get("properties") or {}
        ids = [m["candidateId"] for m in properties.get("mergedFrom", [])] or [properties.get("candidateId")]
        for cid in ids:
            if cid:
                out[cid] = {"suppressed": bool(result.get("suppressions")), "baselineState": result.get("baselineState")}
    return out
